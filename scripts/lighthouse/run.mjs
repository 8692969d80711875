// Lighthouse on a built dist/, served with gzip from loopback as a static host serves it:
// RUNS runs of each preset (mobile, desktop) in Debian's Chromium, printed as medians.
//   node scripts/lighthouse/run.mjs [dist] [runs]
// Prints `lighthouse.<preset>.<metric> <median>` lines (performance 0-100; ms; bytes).
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import lighthouse from 'lighthouse';
import desktop from 'lighthouse/core/config/desktop-config.js';
import * as launcher from 'chrome-launcher';

const dist = resolve(process.argv[2] ?? 'dist');
const runs = Number(process.argv[3] ?? 3);
const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};

// Gzip at level 6, what static hosts (nginx's gzip_comp_level is 1, GitHub Pages and
// Netlify about 6) commonly send; each file compressed once.
const cache = new Map();
const server = createServer(async (req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const file = join(dist, path.endsWith('/') ? `${path}index.html` : path);
  if (!file.startsWith(dist) || !(await stat(file).catch(() => null))?.isFile()) {
    return res.writeHead(404).end();
  }
  if (!cache.has(file)) cache.set(file, gzipSync(await readFile(file), { level: 6 }));
  res.writeHead(200, {
    'content-type': types[extname(file)] ?? 'application/octet-stream',
    'content-encoding': 'gzip',
    'cache-control': 'no-cache',
  });
  res.end(cache.get(file));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const url = `http://127.0.0.1:${server.address().port}/`;

const metrics = {
  performance: (r) => Math.round(r.categories.performance.score * 100),
  fcp_ms: (r) => r.audits['first-contentful-paint'].numericValue,
  lcp_ms: (r) => r.audits['largest-contentful-paint'].numericValue,
  tbt_ms: (r) => r.audits['total-blocking-time'].numericValue,
  tti_ms: (r) => r.audits.interactive.numericValue,
  transfer_bytes: (r) => r.audits['total-byte-weight'].numericValue,
  // Cumulative layout shift, in thousandths (0.001 is 1): the stage is meant to hold still.
  cls_milli: (r) => r.audits['cumulative-layout-shift'].numericValue * 1000,
};

/** One Lighthouse run in a fresh Chromium with a fresh profile. */
async function once(config) {
  const profile = mkdtempSync(join(tmpdir(), 'lighthouse-chromium-'));
  const chrome = await launcher.launch({
    chromePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
    userDataDir: profile,
    chromeFlags: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const flags = { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: ['performance'] };
    const { lhr } = await lighthouse(url, flags, config);
    if (lhr.runtimeError) throw new Error(`lighthouse: ${lhr.runtimeError.message}`);
    return lhr;
  } finally {
    await chrome.kill();
    rmSync(profile, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

try {
  for (const [preset, config] of [['mobile', undefined], ['desktop', desktop]]) {
    const results = [];
    for (let i = 0; i < runs; i += 1) results.push(await once(config));
    // LIGHTHOUSE_SAVE=dir keeps each preset's last report, to see what the figures are made of.
    if (process.env.LIGHTHOUSE_SAVE) {
      await writeFile(join(process.env.LIGHTHOUSE_SAVE, `${preset}.json`), JSON.stringify(results.at(-1)));
    }
    for (const [name, read] of Object.entries(metrics)) {
      const values = results.map(read);
      const all = values.map((v) => Math.round(v)).join(',');
      console.log(`lighthouse.${preset}.${name} ${Math.round(median(values))}  (runs ${all})`);
    }
  }
} finally {
  server.close();
}
