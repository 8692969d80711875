// Shared set-up for the browser tests: a static server for dist/ on loopback and
// Debian's Chromium driven by playwright-core (never a downloaded browser).
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { existsSync, mkdirSync } from 'node:fs';
import { extname, join, normalize, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const DIST = process.env.FENCING_DIST ?? join(here, '..', '..', 'dist');
/** The same app built with `--features test-hooks` (a deliberate panic, bench hooks). */
export const HOOKS_DIST = process.env.FENCING_HOOKS_DIST ?? join(here, '..', '..', 'dist-test');
export const ARTIFACTS = join(here, 'artifacts');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Serves `dist` (DIST unless told) on 127.0.0.1 at a free port, under `prefix` (e.g. '/tools/fencing-lab', as a
 * static host would serve a sub-path); anything outside the prefix is a 404.
 */
export async function serveDist(prefix = '', dist = DIST) {
  if (!existsSync(join(dist, 'index.html'))) {
    throw new Error(`no build at ${dist}: run trunk build --release first`);
  }
  const server = createServer(async (req, res) => {
    const full = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (!full.startsWith(`${prefix}/`)) {
      res.writeHead(404).end('outside the served path');
      return;
    }
    const path = full.slice(prefix.length);
    const file = join(dist, path === '/' ? 'index.html' : path);
    if (!file.startsWith(dist)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return { origin: `http://127.0.0.1:${port}${prefix}`, close: () => new Promise((ok) => server.close(ok)) };
}

/** Launches Debian's Chromium headless with the flags this machine needs. */
export async function launch() {
  // playwright gives every launch a fresh, empty profile directory of its own.
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Opens the app at `hash` in a fresh 1280x720 page. Records console errors, page errors
 * and every request that leaves the page's own origin.
 */
export async function openApp(browser, origin, hash = '', options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, ...options });
  const page = await context.newPage();
  const problems = { errors: [], foreign: [] };
  page.on('pageerror', (e) => problems.errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.errors.push(m.text());
  });
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:')) problems.foreign.push(u);
  });
  // `origin` is a served folder, or one file (the single-file build opened from disk).
  await page.goto(origin.endsWith('.html') ? `${origin}${hash}` : `${origin}/${hash}`);
  await page.getByTestId('balance').waitFor();
  return { page, context, problems };
}

export async function screenshot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path });
  return path;
}
