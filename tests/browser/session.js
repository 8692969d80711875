// One server and one browser per test file; every page opened through it is checked at the
// end for console errors and for requests that leave the page's own origin.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { serveDist, launch, openApp } from './harness.js';

/**
 * `where`: `{ prefix }` serves dist/ under a sub-path; `{ file }` opens that file from disk
 * (file://) with no server at all; `{ dist }` serves another build (the test-hooks one).
 */
export function session(where = {}) {
  let server;
  let browser;
  const opened = [];
  before(async () => {
    server = where.file
      ? { origin: pathToFileURL(where.file).href, close: async () => {} }
      : await serveDist(where.prefix ?? '', where.dist);
    browser = await launch();
  });
  after(async () => {
    for (const { problems } of opened) {
      assert.deepEqual(problems.foreign, [], 'no request leaves the page origin');
      assert.deepEqual(problems.errors, [], 'no console or page errors');
    }
    await browser?.close();
    await server?.close();
  });
  return async (hash = '', options = {}) => {
    const app = await openApp(browser, server.origin, hash, options);
    opened.push(app);
    return app;
  };
}

export const text = (page, id) => page.getByTestId(id).innerText();

/** The current step and the number of steps, read off the clock line. */
export async function position(page) {
  const [, at, len] = (await text(page, 'clock')).match(/step (\d+) \/ (\d+)/);
  return [Number(at), Number(len)];
}

/**
 * Sets the page's hash, as a followed link does, and waits until the page shows it: the
 * scenario it names, its fencing policy when it names one, and its step (or the last step).
 * One page can so show many runs: a page load is about 0.55 s of a projector walk's 0.95 s.
 */
export async function follow(page, hash) {
  const want = new URLSearchParams(hash.replace(/^#/, ''));
  const step = Number(want.get('step') ?? 0);
  await page.evaluate((h) => { window.location.hash = h; }, hash);
  // A deadline, not a count of polls: on a loaded machine each poll's round trips take longer.
  for (const deadline = Date.now() + 10_000; ;) {
    const [at, len] = await position(page);
    const shown = (await page.getByLabel('Scenario').inputValue()) === want.get('s')
      && (!want.has('fence') || (await page.getByLabel('Fencing').inputValue()) === want.get('fence'))
      && at === Math.min(step, len);
    if (shown) return;
    assert.ok(Date.now() < deadline, `${hash}: the page never showed it within 10 s`);
    await page.waitForTimeout(10);
  }
}

/** Clicks Step forward until the last step; returns the number of steps. */
export async function stepToEnd(page) {
  const forward = page.getByRole('button', { name: 'Step forward' });
  for (let i = 0; i < 80; i++) {
    const [at, len] = await position(page);
    if (at === len) return len;
    await forward.click();
  }
  throw new Error('never reached the end');
}

/**
 * Presses `key` (a real key press) and, in one round trip, waits for the clock to leave step
 * `from` and hands `measure` (a function run in the page) the new position. The walks over
 * every step use it: one press and one evaluate a step instead of five calls.
 */
export async function pressAndRead(page, key, from, measure) {
  await page.keyboard.press(key);
  return readAfter(page, from, measure);
}

/** `measure(position)` run in the page once the clock shows a step other than `from` (null: now). */
export function readAfter(page, from, measure) {
  // One expression evaluated over the DevTools protocol (not page script, so a Content
  // Security Policy does not apply): wait for the clock to move, then measure.
  return page.evaluate(`(async () => {
    const clock = () => document.querySelector('[data-testid=clock]').textContent.match(/step (\\d+) \\/ (\\d+)/).slice(1).map(Number);
    for (let i = 0; i < 500 && ${JSON.stringify(from)} !== null && clock()[0] === ${JSON.stringify(from)}; i++) await new Promise((ok) => setTimeout(ok, 4));
    return (${measure})(clock());
  })()`);
}

/** One finger (a touch screen's): down at (x, y), moved in `steps` to (x + dx, y), lifted. */
export async function swipe(page, x, y, dx, steps = 8) {
  const cdp = await page.context().newCDPSession(page);
  const at = (px) => [{ x: px, y, id: 1, radiusX: 4, radiusY: 4, force: 1 }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(x) });
  for (let i = 1; i <= steps; i++) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: at(x + (dx * i) / steps) });
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}
