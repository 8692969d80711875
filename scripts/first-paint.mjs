// Trunk post_build step (scripts/post-build.mjs), before csp.mjs: index.html's static first
// screen paints before the wasm is asked for. trunk preloads the wasm from the <head> and its
// loader fetches it at once, so the 300 KB download competes with the first paint; here the
// preload goes, and the loader waits for one frame (the first paint) before fetching.
// (ui::start draws the app a frame later again, after the wasm has run.)
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const path = join(process.env.TRUNK_STAGING_DIR, 'index.html');
let html = await readFile(path, 'utf8');
const preload = /<link\b(?=[^>]*\brel=["']?preload\b)(?=[^>]*\.wasm\b)[^>]*>/g;
html = html.replace(preload, '');
const init = /(<script\b[^>]*type=["']?module["']?[^>]*>[\s\S]*?)(const\s+wasm\s*=\s*await\s+init\s*\()/;
if (!init.test(html)) throw new Error('first-paint: no trunk loader calling init() in index.html');
// A tab opened in the background paints no frame, so there the fetch starts at once. (A
// timed fallback would not do: on a busy device the first frame can take longer than it.)
const frame =
  "if (document.visibilityState !== 'hidden') await new Promise((go) => requestAnimationFrame(() => setTimeout(go, 0)));\n";
html = html.replace(init, (_, head, call) => `${head}${frame}${call}`);
await writeFile(path, html);
