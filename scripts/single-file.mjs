// Trunk post_build step (scripts/post-build.mjs), after minify-js.mjs: writes
// fencing-lab.html, the whole app in one self-contained file (CSS, the JavaScript glue, its
// snippets and the wasm inlined), which works opened straight from disk (file://) with no
// server and no network, under the page's Content-Security-Policy with the hashes of its
// inline script and style.
import { createHash } from 'node:crypto';
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
const glueFile = one((f) => !f.includes('/') && f.endsWith('.js') && f !== '__wasm_split.js', 'glue script');
const cssFiles = files.filter((f) => f.endsWith('.css'));

// One inline module, so the page's Content-Security-Policy can allow it by its hash alone
// (a data: or blob: module would need data: or blob: in script-src): each snippet the glue
// imports by relative path becomes a function scope inside the glue, and the glue's exports
// become an object the loader uses.
const exported = (code) => {
  const names = [];
  code = code.replace(
    /(^|[;})\s])export\s+((?:async\s+)?function\s*\*?|class|const|let|var)\s*([A-Za-z_$][\w$]*)/g,
    (_, lead, kind, name) => (names.push([name, name]), `${lead}${kind} ${name}`),
  );
  code = code.replace(/(^|[;})\s])export\s*\{([^}]*)\}\s*;?/g, (_, lead, list) => {
    for (const item of list.split(',').map((i) => i.trim()).filter(Boolean)) {
      const [local, as = local] = item.split(/\s+as\s+/);
      names.push([as, local]);
    }
    return lead;
  });
  if (/(^|[;})\s])export\s*(\{|\*|default\b|async\b|function\b|class\b|const\b|let\b|var\b)/.test(code)) {
    throw new Error('single-file: an export form it does not know');
  }
  return { code, object: `{${names.map(([as, local]) => `${JSON.stringify(as)}:${local}`).join(',')}}` };
};
let glue = await readFile(join(staging, glueFile), 'utf8');
const snippet = /import\s*\{([^}]*)\}\s*from\s*(["'])\.\/(snippets\/[^"']+)\2\s*;?/g;
for (const [whole, list, , path] of [...glue.matchAll(snippet)]) {
  const { code, object } = exported(await readFile(join(staging, path), 'utf8'));
  const bindings = list
    .split(',')
    .map((i) => i.trim())
    .filter(Boolean)
    .map((i) => i.replace(/\s+as\s+/, ':'))
    .join(',');
  glue = glue.replace(whole, () => `const{${bindings}}=(()=>{${code};return ${object}})();`);
}
// The lazy chunks' loader (__wasm_split.js, scripts/split-chunks.mjs) imports the glue's
// initSync and the glue imports it: it becomes an object defined after the glue, and each
// chunk it would fetch is inlined as bytes.
const loaderImport = /import\s*\*\s*as\s*([A-Za-z_$][\w$]*)\s*from\s*(["'])\.\/__wasm_split\.js\2\s*;?/g;
const loaderNames = [...glue.matchAll(loaderImport)].map((m) => m[1]);
glue = glue.replace(loaderImport, '');
if (/\bimport\s*[{*\w"']/.test(glue.replace(/import\.meta/g, ''))) {
  throw new Error('single-file: the glue imports something that was not inlined');
}
const linked = exported(glue);
let loader = '';
if (loaderNames.length > 0) {
  let code = await readFile(join(staging, '__wasm_split.js'), 'utf8');
  const glueName = glueFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const glueImport = new RegExp(
    String.raw`import\s*\{\s*initSync(?:\s+as\s+([A-Za-z_$][\w$]*))?\s*\}\s*from\s*(["'])\.\/${glueName}\2\s*;?`,
  );
  const local = code.match(glueImport);
  if (!local) throw new Error('single-file: __wasm_split.js does not import initSync from the glue');
  code = code.replace(glueImport, `const ${local[1] ?? 'initSync'}=(${linked.object}).initSync;`);
  const chunk = /fetch\(\s*new\s+URL\(\s*(["'])\.\/([^"']+\.wasm)\1\s*,\s*import\.meta\.url\s*\)\s*\)/g;
  for (const [whole, , file] of [...code.matchAll(chunk)]) {
    const b64 = (await readFile(join(staging, file))).toString('base64');
    const bytes = `Uint8Array.from(atob('${b64}'),(c)=>c.charCodeAt(0))`;
    code = code.replace(whole, () => `Promise.resolve(new Response(${bytes},{headers:{'content-type':'application/wasm'}}))`);
  }
  if (/import\.meta|\bimport\s*[{*\w"']/.test(code)) throw new Error('single-file: __wasm_split.js has a reference it cannot inline');
  const { code: body, object } = exported(code);
  const [first, ...more] = loaderNames;
  loader = `const ${first}=(()=>{${body};return ${object}})();${more.map((n) => `const ${n}=${first};`).join('')}`;
}

const css = (await Promise.all(cssFiles.map((f) => readFile(join(staging, f), 'utf8')))).join('\n');
const wasm = (await readFile(join(staging, wasmFile))).toString('base64');
const index = await readFile(join(staging, 'index.html'), 'utf8');
// Keep the page's own head (title, meta) and body; drop every link to a neighbouring file.
const bodyAt = index.indexOf('<body>');
if (bodyAt < 0) throw new Error('single-file: index.html has no <body>');
const policyTag = /<meta\b[^>]*http-equiv=["']?Content-Security-Policy\b[^>]*>/i;
const policy = index.match(policyTag)?.[0]?.match(/\bcontent="([^"]*)"/)?.[1];
if (!policy) throw new Error('single-file: index.html declares no Content-Security-Policy');
const head = index
  .slice(0, bodyAt)
  .replace(/<!doctype html>|<html[^>]*>|<\/?head>/gi, '')
  .replace(policyTag, '')
  .replace(/<link\b[^>]*>/g, '')
  .replace(/<script type=["']?module["']?>[\s\S]*?<\/script>/g, '');
const body = index.slice(bodyAt + '<body>'.length).replace(/<\/body>[\s\S]*$/, '');
// The loader in a block of its own, so its names cannot clash with the glue's.
const script = `${linked.code}
${loader}
{
  const bindings = ${linked.object};
  const bytes = Uint8Array.from(atob('${wasm}'), (c) => c.charCodeAt(0));
  const wasm = await bindings.default({ module_or_path: bytes });
  window.wasmBindings = bindings;
  dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
}`;
// The page's own policy, with its one script and one style allowed by their hashes.
const sha = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const own = policy
  .split(';')
  .map((d) => d.trim())
  .filter(Boolean)
  .map((d) => (d.startsWith('script-src ') ? `${d} ${sha(script)}` : d))
  .map((d) => (d.startsWith('style-src ') ? `${d} ${sha(css)}` : d))
  .join('; ');
const html = `<!doctype html><html lang=en><head><meta charset=utf-8><meta http-equiv=Content-Security-Policy content="${own}">${head.replace(/<meta charset=[^>]*>/i, '')}<link href="data:," rel=icon><style>${css}</style><script type=module>${script}</script></head><body>${body}</body></html>`;
await writeFile(join(staging, 'fencing-lab.html'), html);
