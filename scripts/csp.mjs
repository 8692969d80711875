// Trunk post_build step (scripts/post-build.mjs), the last: index.html's
// Content-Security-Policy allows no inline script, so this adds the hash of each inline
// <script> trunk wrote into the page (its module loader) to the policy's script-src. Every
// profile, so the dev build's page runs under the same policy as the release's.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const path = join(process.env.TRUNK_STAGING_DIR, 'index.html');
let html = await readFile(path, 'utf8');
const inline = /<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g;
const hashes = [...html.matchAll(inline)].map(
  ([, code]) => `'sha256-${createHash('sha256').update(code, 'utf8').digest('base64')}'`,
);
const tag = html.match(/<meta\b[^>]*http-equiv=["']?Content-Security-Policy\b[^>]*>/i)?.[0];
const content = tag?.match(/\bcontent="([^"]*)"/)?.[1];
if (!content) throw new Error('csp: index.html declares no Content-Security-Policy meta tag');
const policy = content
  .split(';')
  .map((d) => d.trim())
  .filter(Boolean)
  .map((d) => (d.startsWith('script-src ') ? [d, ...hashes].join(' ') : d))
  .join('; ');
html = html.replace(tag, tag.replace(content, policy));
await writeFile(path, html);
