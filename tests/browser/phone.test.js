// A phone (412x915, touch): the timeline is drawn at a fixed, readable scale (its smallest
// label 11 CSS px or more) in a box that scrolls sideways, the current step's cursor stays in
// that box as a finger taps through the run, and nothing else on the page scrolls sideways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir } from 'node:fs/promises';
import { screenshot } from './harness.js';
import { session, position, text, swipe } from './session.js';

const open = session();
const PHONE = { viewport: { width: 412, height: 915 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2.6 };

/** Where the screenshots are kept for the note, when that folder is there. */
async function keep(path, name) {
  if (!process.env.FENCING_SHOTS) return;
  await mkdir(process.env.FENCING_SHOTS, { recursive: true });
  await copyFile(path, `${process.env.FENCING_SHOTS}/${name}`);
}

const scrolled = (page) => page.evaluate(() => document.querySelector('.timeline-wrap').scrollLeft);

/** The main timeline's smallest label as drawn: font size times the drawing's scale on screen. */
const smallestLabel = (page) => page.evaluate(() => {
  const svg = document.querySelector('svg.timeline.main');
  const scale = svg.getScreenCTM().a;
  const labels = [...svg.querySelectorAll('text')]
    .filter((t) => t.textContent.trim() && t.getBoundingClientRect().width > 0)
    .map((t) => ({ text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale, box: t.getBoundingClientRect().height }));
  labels.sort((a, b) => a.px - b.px);
  return { scale, count: labels.length, smallest: labels[0] };
});

/** The cursor's x on screen and the timeline box's visible span, in CSS px. */
const cursorInBox = (page) => page.evaluate(() => {
  const wrap = document.querySelector('.timeline-wrap');
  const box = wrap.getBoundingClientRect();
  const line = document.querySelector('svg.timeline.main .cursor line').getBoundingClientRect();
  return { x: line.left + line.width / 2, left: box.left, right: box.left + wrap.clientWidth, scrolled: wrap.scrollLeft };
});

/** Elements that reach past the screen's right edge, outside the timeline's own box. */
const pastTheEdge = (page) => page.evaluate(() => [...document.querySelectorAll('body *')]
  .filter((e) => !e.closest('.timeline-wrap') && !e.closest('.export-stage'))
  .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
  .map((e) => `${e.tagName}.${e.className.baseVal ?? e.className}`));

test('phone 412x915: the timeline reads at 11 px and up, scrolls sideways, and taps step through it', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict', PHONE);
  // The first screen says what a finger does, not only what a key does.
  assert.match(await text(page, 'narration'), /tap Step forward/);
  const label = await smallestLabel(page);
  assert.ok(label.count > 10, JSON.stringify(label));
  assert.ok(label.smallest.px >= 11, `smallest label ${JSON.stringify(label.smallest)} at scale ${label.scale}`);
  // Its box, not the page, scrolls sideways.
  const sizes = await page.evaluate(() => {
    const wrap = document.querySelector('.timeline-wrap');
    return { page: document.documentElement.scrollWidth, inner: wrap.scrollWidth, shown: wrap.clientWidth };
  });
  assert.equal(sizes.page, 412, JSON.stringify(sizes));
  assert.ok(sizes.inner > sizes.shown, `the timeline scrolls sideways: ${JSON.stringify(sizes)}`);
  assert.deepEqual(await pastTheEdge(page), []);
  await keep(await screenshot(page, 'phone-after.png'), 'phone-after.png');

  // Step buttons a thumb can hit.
  const forward = page.getByRole('button', { name: 'Step forward' });
  const back = page.getByRole('button', { name: 'Step back' });
  for (const b of [forward, back]) {
    const box = await b.boundingBox();
    assert.ok(box.width >= 44 && box.height >= 44, `${await b.innerText()}: ${box.width}x${box.height}`);
  }
  // Tap to the end: every step's cursor is inside the box's visible part.
  const [, last] = await position(page);
  const seen = [];
  for (let step = 1; step <= last; step++) {
    await forward.tap();
    await page.waitForFunction((s) => document.querySelector('[data-testid=clock]').textContent.startsWith(`step ${s} /`), step);
    const c = await cursorInBox(page);
    seen.push(c.scrolled);
    assert.ok(c.x >= c.left && c.x <= c.right, `step ${step}: cursor at ${c.x}, box ${c.left}..${c.right}`);
  }
  assert.ok(Math.max(...seen) > 0, `the box scrolled to follow the cursor: ${seen}`);
  // At the end every label is drawn (the lease's "expired" among them): still 11 px and up.
  const end = await smallestLabel(page);
  assert.ok(end.smallest.px >= 11, `smallest label at the end ${JSON.stringify(end.smallest)}`);
  console.log(`smallest label: ${label.smallest.px.toFixed(1)} px at the start, ${end.smallest.px.toFixed(1)} px ("${end.smallest.text}") at the end`);
  await keep(await screenshot(page, 'phone-after-end.png'), 'phone-after-end.png');
  // And back by tap: the cursor comes back into view at the start.
  for (let step = last - 1; step >= 0; step--) {
    await back.tap();
    await page.waitForFunction((s) => document.querySelector('[data-testid=clock]').textContent.startsWith(`step ${s} /`), step);
  }
  const start = await cursorInBox(page);
  assert.ok(start.x >= start.left && start.x <= start.right, JSON.stringify(start));
  assert.deepEqual(await pastTheEdge(page), []);
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 412);
  await context.close();
});

test('phone 412x915: a finger pans the timeline, and still drags the pause by its edge', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict', PHONE);
  const box = await page.locator('.timeline-wrap').boundingBox();
  // Along the storage lane, where nothing is dragged: the box pans.
  await swipe(page, box.x + box.width - 40, box.y + box.height - 70, -200);
  await page.waitForFunction(() => document.querySelector('.timeline-wrap').scrollLeft > 100);
  // Until it comes to rest.
  for (let last = -1, now = await scrolled(page); now !== last; last = now, now = await scrolled(page)) {
    await page.waitForTimeout(150);
  }
  assert.equal(await page.getByLabel('A pause length (ms)').inputValue(), '50');
  // How far a fling carries the box depends on the swipe's timing: bring A's resize edge to
  // the middle of the box, as a reader would pan to it.
  await page.evaluate(() => {
    const wrap = document.querySelector('.timeline-wrap');
    const edge = document.querySelector('[data-testid=pause-A-resize]').getBoundingClientRect();
    const box = wrap.getBoundingClientRect();
    wrap.scrollLeft += edge.x + edge.width / 2 - (box.x + box.width / 2);
  });
  await page.waitForTimeout(100);
  // On A's resize edge: the pause shrinks by the distance moved, and the box stays put.
  const before = await scrolled(page);
  const grip = await page.getByTestId('pause-A-resize').boundingBox();
  assert.ok(grip.x > box.x && grip.x + grip.width < box.x + box.width, `the edge is in view: ${JSON.stringify(grip)}`);
  const pxPerMs = (await page.locator('svg.timeline.main').boundingBox()).width * 0.9 / 100;
  await swipe(page, grip.x + grip.width / 2, grip.y + grip.height / 2, -20 * pxPerMs);
  const length = Number(await page.getByLabel('A pause length (ms)').inputValue());
  assert.ok(length >= 28 && length <= 32, `resized to ${length} ms`);
  assert.equal(await scrolled(page), before, 'the box did not pan under the finger');
  await context.close();
});

test('phone 412x915: every column of the write log is on screen, a lost write and a long token included', async () => {
  const { page, context } = await open('#s=gc-pause&fence=off&step=99', PHONE);
  const outside = [];
  for (const hash of ['#s=gc-pause&fence=off&step=99', '#s=storage-failover&fence=strict&step=99', '#s=uuid-token&fence=strict&step=99', '#s=claim-row&fence=off&step=99']) {
    await page.evaluate((h) => { window.location.hash = h; }, hash);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=ledger-row]').length >= 2);
    const cells = await page.getByTestId('ledger').evaluate((table) => {
      const box = table.closest('.log-scroll');
      const shown = box.getBoundingClientRect();
      return {
        scrolls: box.scrollWidth > box.clientWidth,
        heads: [...table.querySelectorAll('th')].filter((th) => th.checkVisibility()).length,
        cells: [...table.querySelectorAll('th, td')].map((c) => ({ text: c.textContent, right: c.getBoundingClientRect().right, edge: Math.min(shown.right, window.innerWidth) })),
      };
    });
    assert.equal(cells.scrolls, false, `${hash}: the log scrolls sideways`);
    assert.equal(cells.heads, 6, `${hash}: time, writer, token, change, result and the figure after it`);
    outside.push(...cells.cells.filter((c) => c.right > c.edge + 0.5).map((c) => `${hash}: "${c.text}" ends at ${c.right}`));
  }
  assert.deepEqual(outside, [], 'log cells past the screen');
  await keep(await screenshot(page, 'phone-log.png'), 'phone-log.png');
  await context.close();
});

test('phone 412x915: the lanes\' names stay at the box\'s left edge while the drawing scrolls under them', async () => {
  const { page, context } = await open('#s=gc-pause&fence=off&step=12', PHONE);
  await page.waitForFunction(() => document.querySelector('.timeline-wrap').scrollLeft > 0);
  // What is drawn just inside the box's left edge, level with each lane's name, is that name.
  const seen = await page.evaluate(() => {
    const wrap = document.querySelector('.timeline-wrap').getBoundingClientRect();
    return [...document.querySelectorAll('svg.timeline.main .pinned-names text')].map((t) => {
      const b = t.getBoundingClientRect();
      const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
      return { name: t.textContent, inBox: b.left >= wrap.left && b.right <= wrap.left + 90, onTop: hit === t };
    });
  });
  assert.deepEqual(seen.map((s) => s.name), ['A', 'B', 'lease', 'storage']);
  for (const s of seen) assert.ok(s.inBox && s.onTop, `${s.name}: ${JSON.stringify(s)}`);
  await screenshot(page, 'phone-pinned-names.png');
  // On a larger screen the box never scrolls and the grid's own names are the only ones.
  await page.setViewportSize({ width: 1280, height: 720 });
  const shown = await page.evaluate(() => getComputedStyle(document.querySelector('.pinned-names')).display);
  assert.equal(shown, 'none');
  await context.close();
});
