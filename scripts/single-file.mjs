// Trunk post_build hook (Trunk.toml), after minify-js.mjs: writes fencing-lab.html, the
// whole app in one self-contained file (CSS, the JavaScript glue, its snippets and the wasm
// inlined), which works opened straight from disk (file://) with no server and no network.
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

if (process.env.TRUNK_PROFILE !== 'release') process.exit(0);
const staging = process.env.TRUNK_STAGING_DIR;
const files = await readdir(staging, { recursive: true });
const one = (test, what) => {
  const found = files.filter(test);
  if (found.length !== 1) throw new Error(`single-file: expected one ${what}, found ${found.length}`);
  return found[0];
};
const wasmFile = one((f) => f.endsWith('_bg.wasm'), 'wasm file');
const glueFile = one((f) => !f.includes('/') && f.endsWith('.js'), 'glue script');
const cssFiles = files.filter((f) => f.endsWith('.css'));
const dataUrl = (code) => `data:text/javascript;base64,${Buffer.from(code).toString('base64')}`;

// The glue imports its snippets by relative path; a file has no neighbours, so each import
// becomes a data: URL of the snippet itself.
let glue = await readFile(join(staging, glueFile), 'utf8');
const snippet = /(from\s*|import\s*\(\s*)(["'])\.\/(snippets\/[^"']+)\2/g;
const imports = [...glue.matchAll(snippet)];
for (const [whole, head, quote, path] of imports) {
  const code = await readFile(join(staging, path), 'utf8');
  glue = glue.replace(whole, `${head}${quote}${dataUrl(code)}${quote}`);
}
if (/["']\.\/snippets\//.test(glue)) throw new Error('single-file: a snippet import was not inlined');

const css = (await Promise.all(cssFiles.map((f) => readFile(join(staging, f), 'utf8')))).join('\n');
const wasm = (await readFile(join(staging, wasmFile))).toString('base64');
const index = await readFile(join(staging, 'index.html'), 'utf8');
// Keep the page's own head (title, meta) and body; drop every link to a neighbouring file.
const bodyAt = index.indexOf('<body>');
if (bodyAt < 0) throw new Error('single-file: index.html has no <body>');
const head = index
  .slice(0, bodyAt)
  .replace(/<!doctype html>|<html[^>]*>|<\/?head>/gi, '')
  .replace(/<link\b[^>]*>/g, '')
  .replace(/<script type=["']?module["']?>[\s\S]*?<\/script>/g, '');
const body = index.slice(bodyAt + '<body>'.length).replace(/<\/body>[\s\S]*$/, '');
const loader = `import init, * as bindings from '${dataUrl(glue)}';
const bytes = Uint8Array.from(atob('${wasm}'), (c) => c.charCodeAt(0));
const wasm = await init({ module_or_path: bytes });
window.wasmBindings = bindings;
dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));`;
const html = `<!doctype html><html lang=en><head>${head}<link href="data:," rel=icon><style>${css}</style><script type=module>${loader}</script></head><body>${body}</body></html>`;
await writeFile(join(staging, 'fencing-lab.html'), html);
