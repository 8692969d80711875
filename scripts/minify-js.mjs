// Trunk post_build step (scripts/post-build.mjs), the first: minifies the release build's
// JavaScript with terser, since trunk 0.21's own minifier cannot parse wasm-bindgen's ES
// module and leaves it as is, then updates the subresource-integrity hashes in index.html
// to match the new files.
// Without terser installed (bash scripts/setup.sh installs it) the files stay as they are.
import { createHash } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

if (process.env.TRUNK_PROFILE !== 'release') process.exit(0);
const staging = process.env.TRUNK_STAGING_DIR;
let minify;
try {
  ({ minify } = createRequire(new URL('../tests/browser/package.json', import.meta.url))('terser'));
} catch {
  console.warn('minify-js: terser is not installed (bash scripts/setup.sh); JavaScript left as is');
  process.exit(0);
}

const sri = (bytes) => `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
const files = (await readdir(staging, { recursive: true })).filter((f) => f.endsWith('.js'));
const htmlPath = join(staging, 'index.html');
let html = await readFile(htmlPath, 'utf8');
for (const file of files) {
  const path = join(staging, file);
  const before = await readFile(path);
  const { code } = await minify(before.toString('utf8'), { module: true, compress: true, mangle: true });
  await writeFile(path, code);
  html = html.replaceAll(sri(before), sri(Buffer.from(code)));
}
await writeFile(htmlPath, html);
