// Trunk post_build step (scripts/post-build.mjs), the first: the wasm's lazy chunks and
// __wasm_split.js, which scripts/split/wasm-bindgen left beside wasm-bindgen's output, go into
// the build. Each chunk is optimized as trunk optimizes the main wasm (release) and named by
// its content, and __wasm_split.js imports the glue by its hashed name.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const staging = process.env.TRUNK_STAGING_DIR;
const release = process.env.TRUNK_PROFILE === 'release';
const root = new URL('..', import.meta.url).pathname;
const split = join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'wasm-bindgen', release ? 'release' : 'debug', 'split');
const glue = (await readdir(staging)).filter((f) => /^fencing-lab-[0-9a-f]+\.js$/.test(f));
// wasm-bindgen run on a wasm that was not split leaves imports no browser can resolve.
for (const g of glue) {
  if ((await readFile(join(staging, g), 'utf8')).includes('__wasm_split_placeholder__')) {
    throw new Error('split-chunks: the wasm was not split; run trunk after `source scripts/env.sh`');
  }
}
// A build with nothing split off (e.g. bench.sh's plain counter) has no loader.
if (!existsSync(join(split, '__wasm_split.js'))) process.exit(0);
if (glue.length !== 1) throw new Error(`split-chunks: expected one glue script, found ${glue.length}`);
const index = await readFile(join(root, 'index.html'), 'utf8');
const optFlags = index.match(/data-wasm-opt-params="([^"]*)"/)?.[1].split(/\s+/) ?? [];
const optimize = await chunkOptimizer(optFlags);

let link = await readFile(join(split, '__wasm_split.js'), 'utf8');
const glueImport = /from\s*"\.\/fencing-lab\.js"/;
if (!glueImport.test(link)) throw new Error('split-chunks: __wasm_split.js does not import ./fencing-lab.js');
link = link.replace(glueImport, `from "./${glue[0]}"`);
for (const chunk of (await readdir(split)).filter((f) => f.endsWith('.wasm') && f !== 'fencing-lab.wasm')) {
  const wasm = optimize(await readFile(join(split, chunk)));
  const hash = createHash('sha256').update(wasm).digest('hex').slice(0, 16);
  const named = `${chunk.replace(/(_\d+)?\.wasm$/, '')}-${hash}.wasm`;
  await writeFile(join(staging, named), wasm);
  if (!link.includes(`"./${chunk}"`)) throw new Error(`split-chunks: __wasm_split.js does not load ${chunk}`);
  link = link.replaceAll(`"./${chunk}"`, `"./${named}"`);
}
await writeFile(join(staging, '__wasm_split.js'), link);
// The glue imports the loader at once: fetched beside it, not after it.
const html = join(staging, 'index.html');
const sri = `sha384-${createHash('sha384').update(link).digest('base64')}`;
const preload = `<link rel="modulepreload" href="./__wasm_split.js" crossorigin integrity="${sri}">`;
await writeFile(html, (await readFile(html, 'utf8')).replace('</head>', `${preload}</head>`));

/** `wasm-opt [-Oz] <flags>` as one function, through binaryen's JS API: the CLI is binaryen
 *  compiled to a 10 MB script, and each of its starts cost about 1.2 s of CPU, 20 s for the
 *  chunks of one build against 6 s in one process (measured). The output is byte for byte the
 *  CLI's (checked on every chunk): -Oz is optimize level 2, shrink level 2, and Stack IR
 *  generated and optimized, as the CLI does when it optimizes. */
async function chunkOptimizer(flags) {
  const { default: binaryen } = await import(new URL('../tests/browser/node_modules/binaryen/index.js', import.meta.url));
  const F = binaryen.Features;
  // The CLI's flags, with the features each implies in binaryen 132 (its --print-features).
  const implied = {
    '--enable-bulk-memory': F.BulkMemory | F.BulkMemoryOpt,
    '--enable-nontrapping-float-to-int': F.NontrappingFPToInt,
    '--enable-sign-ext': F.SignExt,
    '--enable-mutable-globals': F.MutableGlobals,
    '--enable-reference-types': F.ReferenceTypes | F.CallIndirectOverlong,
    '--enable-multivalue': F.Multivalue,
  };
  // The passes the CLI runs after optimizing: custom sections no browser reads.
  const strips = ['--strip-producers', '--strip-target-features'];
  let features = F.MVP;
  const passes = [];
  for (const flag of flags) {
    if (strips.includes(flag)) {
      passes.push(flag.slice(2));
      continue;
    }
    if (!(flag in implied)) throw new Error(`split-chunks: no binaryen feature for wasm-opt flag ${flag}`);
    features |= implied[flag];
  }
  binaryen.setOptimizeLevel(2);
  binaryen.setShrinkLevel(2);
  binaryen.setGenerateStackIR(true);
  binaryen.setOptimizeStackIR(true);
  return (bytes) => {
    const module = binaryen.readBinary(bytes);
    try {
      module.setFeatures(features);
      if (!module.validate()) throw new Error('split-chunks: a chunk does not validate');
      if (release) module.optimize();
      if (passes.length > 0) module.runPasses(passes);
      return module.emitBinary();
    } finally {
      module.dispose();
    }
  };
}
