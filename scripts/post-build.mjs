// Trunk's one post_build hook (Trunk.toml): trunk starts all hooks of a stage at once, and
// these steps read what the one before wrote, so they run here one after another.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

for (const step of ['split-chunks.mjs', 'minify-js.mjs', 'single-file.mjs', 'first-paint.mjs', 'csp.mjs']) {
  execFileSync(process.execPath, [fileURLToPath(new URL(step, import.meta.url))], { stdio: 'inherit' });
}
