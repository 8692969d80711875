// Opening fast: index.html's static first screen shows before the wasm has arrived, the app
// takes its place in one task (one <main>, nothing shifts), and the panels it draws a few
// tasks later work.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveDist, launch } from './harness.js';

let server;
let browser;
before(async () => {
  server = await serveDist();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('before the wasm arrives the static first screen shows the title and what the lab is', async () => {
  const context = await browser.newContext({ viewport: { width: 412, height: 823 } });
  const page = await context.newPage();
  // Hold the wasm back: what shows is index.html alone.
  await page.route('**/*.wasm', () => {});
  await page.goto(`${server.origin}/`);
  const shell = page.locator('#shell');
  await shell.waitFor();
  assert.match(await shell.locator('h1').innerText(), /fencing-lab/);
  assert.match(await shell.locator('.narration').innerText(), /lease lock/);
  const box = await shell.locator('.narration').boundingBox();
  assert.ok(box.width > 300 && box.height > 100, `a large first text: ${JSON.stringify(box)}`);
  await context.close();
});

test('the app replaces the first screen in one task, and nothing on screen shifts', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.__shifts = [];
    new PerformanceObserver((list) => {
      // Shifts right after a click or key are the user's doing, not the load's.
      for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shifts.push(e.value);
    }).observe({ type: 'layout-shift', buffered: true });
  });
  await page.goto(`${server.origin}/#s=gc-pause&fence=off&step=99999`);
  await page.getByTestId('balance').waitFor();
  assert.equal(await page.getByTestId('balance').innerText(), '80');
  assert.equal(await page.locator('#shell').count(), 0, 'the static first screen is gone');
  assert.equal(await page.locator('main').count(), 1);
  // The panels drawn a few tasks later work: What if… adds a client.
  await page.locator('details.whatif summary').click();
  await page.getByLabel('Add a client').click();
  await page.waitForFunction(() => /clients=3/.test(location.hash));
  const shifts = await page.evaluate(() => window.__shifts);
  assert.equal(shifts.reduce((a, b) => a + b, 0), 0, `layout shifts: ${shifts}`);
  await context.close();
});

test('opening fetches none of the parts split off the wasm: each is fetched when first used', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  await page.goto(`${server.origin}/`);
  // The last panels drawn: the app is all there.
  await page.getByTestId('balance').waitFor();
  await page.getByRole('button', { name: 'Present' }).waitFor();
  const chunks = () =>
    page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name.split('/').pop()).filter((n) => /^(split_|chunk-)/.test(n)));
  assert.deepEqual(await chunks(), []);
  await page.getByRole('button', { name: 'Explore' }).click();
  await page.getByTestId('explorer').waitFor();
  assert.ok((await chunks()).some((n) => n.startsWith('split_explorer-')), `${await chunks()}`);
  await context.close();
});

test('on a phone (412 px) the page fits the screen: nothing scrolls sideways', async () => {
  const context = await browser.newContext({
    viewport: { width: 412, height: 823 },
    isMobile: true,
    hasTouch: true,
  });
  const page = await context.newPage();
  await page.goto(`${server.origin}/#s=gc-pause`);
  await page.getByRole('button', { name: 'Present' }).waitFor();
  const wide = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    screen: window.innerWidth,
    // Anything drawn past the screen's right edge, by tag and class (but the timeline's
    // drawing, which its own box scrolls sideways: tests/browser/phone.test.js).
    past: [...document.querySelectorAll('body *')]
      .filter((e) => !e.closest('.timeline-wrap') && e.getBoundingClientRect().right > 413)
      .map((e) => `${e.tagName}.${e.className.baseVal ?? e.className}`),
  }));
  assert.equal(wide.page, 412, JSON.stringify(wide));
  assert.equal(wide.screen, 412, JSON.stringify(wide));
  assert.deepEqual(wide.past, []);
  // Each picker still sits beside its label.
  const label = await page.getByText('Fencing', { exact: true }).boundingBox();
  const picker = await page.getByLabel('Fencing').boundingBox();
  assert.ok(Math.abs(label.y + label.height / 2 - (picker.y + picker.height / 2)) < 8, `${JSON.stringify([label, picker])}`);
  await context.close();
});
