// The Content-Security-Policy: the page and the single file load and run under it with no
// violation, and a request to another origin is blocked by the policy (a
// securitypolicyviolation event, and the other origin never hears of it), not merely absent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST, serveDist, launch, openApp } from './harness.js';

let page0;
let browser;
// Another origin on loopback, which counts what reaches it.
let other;
const reached = [];

before(async () => {
  page0 = await serveDist();
  browser = await launch();
  other = createServer((req, res) => {
    reached.push(req.url);
    res.writeHead(200, { 'access-control-allow-origin': '*' }).end('reached');
  });
  await new Promise((ok) => other.listen(0, '127.0.0.1', ok));
});

after(async () => {
  await browser?.close();
  await page0?.close();
  await new Promise((ok) => other.close(ok));
});

/** The page's policy, as its meta tag declares it. */
async function declared(html) {
  const tag = html.match(/<meta\b[^>]*http-equiv=["']?Content-Security-Policy\b[^>]*>/i)?.[0];
  assert.ok(tag, 'a Content-Security-Policy meta tag');
  return tag.match(/\bcontent="([^"]*)"/)[1];
}

function checkPolicy(policy) {
  const directives = Object.fromEntries(
    policy.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...v]) => [name, v]),
  );
  assert.deepEqual(directives['default-src'], ["'self'"]);
  assert.ok(directives['script-src'].includes("'wasm-unsafe-eval'"), policy);
  for (const bad of ["'unsafe-inline'", "'unsafe-eval'", '*', 'data:', 'blob:', 'http:', 'https:']) {
    assert.ok(!directives['script-src'].includes(bad), `script-src allows ${bad}`);
  }
  assert.ok(!/https?:\/\//.test(policy), `no remote origin anywhere: ${policy}`);
  assert.ok(!policy.includes("'unsafe-inline'"), policy);
}

/** Tries to reach the other origin by fetch and by an image; returns the violations seen. */
async function reachOut(page) {
  const target = `http://127.0.0.1:${other.address().port}`;
  return page.evaluate(async (target) => {
    const seen = [];
    const done = new Promise((ok) => {
      document.addEventListener('securitypolicyviolation', (e) => {
        seen.push({ directive: e.effectiveDirective, blocked: e.blockedURI });
        if (seen.length === 2) ok();
      });
    });
    let fetched = 'not blocked';
    try {
      await fetch(`${target}/fetch`);
    } catch (e) {
      fetched = String(e);
    }
    const img = new Image();
    img.src = `${target}/image.png`;
    await Promise.race([done, new Promise((ok) => setTimeout(ok, 3000))]);
    return { seen, fetched };
  }, target);
}

async function check(origin, hash) {
  const { page, context, problems } = await openApp(browser, origin, hash);
  // Loaded and ran under the policy: the app drew its numbers, nothing was refused.
  assert.equal(await page.getByTestId('balance').innerText(), '80');
  assert.deepEqual(problems.errors, [], 'no violation while loading');
  reached.length = 0;
  const { seen, fetched } = await reachOut(page);
  assert.match(fetched, /Failed to fetch/);
  const target = `http://127.0.0.1:${other.address().port}`;
  assert.deepEqual(
    seen.map((s) => s.directive).sort(),
    ['connect-src', 'img-src'],
    JSON.stringify(seen),
  );
  for (const s of seen) assert.ok(s.blocked.startsWith(target), s.blocked);
  assert.deepEqual(reached, [], 'the other origin was never asked');
  assert.ok(
    problems.errors.some((e) => /Content Security Policy/.test(e)),
    `the console says the policy refused it: ${problems.errors}`,
  );
  await context.close();
}

test('dist/ declares a strict policy, runs under it, and a request to another origin is blocked by it', async () => {
  checkPolicy(await declared(await readFile(join(DIST, 'index.html'), 'utf8')));
  await check(page0.origin, '#s=gc-pause&fence=off&step=99999');
});

test('the single file from file:// runs under the same policy, its inline parts allowed by hash', async () => {
  const file = join(DIST, 'fencing-lab.html');
  const policy = await declared(await readFile(file, 'utf8'));
  checkPolicy(policy);
  assert.match(policy, /script-src [^;]*'sha256-[A-Za-z0-9+/=]{44}'/);
  assert.match(policy, /style-src [^;]*'sha256-[A-Za-z0-9+/=]{44}'/);
  await check(pathToFileURL(file).href, '#s=gc-pause&fence=off&step=99999');
});
