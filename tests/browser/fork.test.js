// The fork: the stage draws the fork and keeps its place; the original runs as one row (the
// strip) under it, as wide as the stage's drawing and at its scale, so one cursor stands at the
// same x on both at every step; the events that differ are marked on both; one line names both
// runs; the ledger and the cards stay on screen. Its view code is a chunk fetched when the
// fork is first opened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, position, pressAndRead, readAfter } from './session.js';

const open = session();

/** Both runs, as drawn: drawings, cursors (on screen), marked events, the reveal. Run in the page. */
const both = () => {
  const one = (svg) => {
    const r = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.width, b.height].map((v) => Math.round(v)); };
    const cursor = svg.querySelector('.cursor line');
    const c = cursor.getBoundingClientRect();
    const { a: scale, e: origin } = svg.getScreenCTM();
    return {
      drawing: r(svg),
      // Where time 0's x (user unit 0) is on the page, and CSS px a unit.
      origin,
      scale,
      cursor: cursor.getAttribute('x1'),
      // Where it stands on the page (its middle), in CSS px.
      cursorOnScreen: Math.round((c.left + c.width / 2) * 2) / 2,
      differs: [...svg.querySelectorAll('g.ev.differs')].map((g) => g.getAttribute('data-result')),
      // The words shown on the drawing and their height on screen.
      labels: [...svg.querySelectorAll('text:not(.glyph)')].filter((t) => getComputedStyle(t.closest('g.ev') ?? t).display !== 'none' && t.textContent)
        .map((t) => ({ text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale })),
      // The reveal: future markers on screen, and where the clip of what is drawn ends.
      future: [...svg.querySelectorAll('g.ev.future')].filter((g) => getComputedStyle(g).display !== 'none').length,
      clip: svg.classList.contains('reveal') ? svg.querySelector('clipPath rect').getAttribute('width') : null,
    };
  };
  const bottom = (q) => document.querySelector(q).getBoundingClientRect().bottom;
  return {
    fork: one(document.querySelector('main.app > figure.timeline-wrap svg.timeline.main')),
    original: one(document.querySelector('.fork svg.timeline.strip')),
    // The ledger and the cards, inside the window.
    below: Math.max(bottom('[data-testid=ledger]'), bottom('.compare'), bottom('[data-testid=summary-on]')) - window.innerHeight,
  };
};

for (const [width, height, presenting] of [[1280, 720, false], [1024, 768, true]]) {
  test(`${width}x${height}${presenting ? ' presenting' : ''}: the original's row under the stage, one cursor, the differences marked, the ledger on screen`, async () => {
    const { page, context } = await open('#s=gc-pause&fence=strict&step=0', { viewport: { width, height } });
    // The stage's box with the fork closed, in the mode measured.
    const stageBox = () => page.evaluate(() => {
      const b = document.querySelector('main.app > figure.timeline-wrap').getBoundingClientRect();
      return [b.width, b.height];
    });
    if (presenting) await page.keyboard.press('p');
    await page.waitForTimeout(200);
    const closed = await stageBox();
    if (presenting) await page.keyboard.press('p');
    const fetched = [];
    page.on('request', (r) => { if (/split_fork/.test(r.url())) fetched.push(r.url()); });
    await page.waitForTimeout(300);
    assert.deepEqual(fetched, [], 'the fork is not fetched before it is opened');
    await page.getByRole('button', { name: 'Fork' }).click();
    await page.getByLabel('Fencing').selectOption('off');
    const fork = page.getByRole('region', { name: 'Original and fork' });
    await fork.getByRole('img', { name: 'Original timeline' }).waitFor();
    assert.equal(fetched.length, 1, 'its chunk is fetched when first opened');
    assert.equal(await page.getByTestId('fork-current').innerText(), 'Fork: fencing off (was strict) · balance 80 (was 90)');
    assert.equal(await page.getByTestId('fork-original').innerText(), 'Original: fencing strict · balance 90');
    if (presenting) {
      await page.keyboard.press('p');
      await page.waitForFunction(() => document.querySelector('svg.timeline.strip').classList.contains('large'));
    }
    await page.locator('body').click({ position: { x: 2, y: 2 } });
    // The diagram stays the hero: 90 % of its closed width and height.
    const forked = await stageBox();
    assert.ok(forked[0] >= 0.9 * closed[0] && forked[1] >= 0.9 * closed[1], `the stage ${forked} against ${closed} closed`);
    console.log(`${width}x${height}${presenting ? ' presenting' : ''}: the stage keeps ${(100 * forked[0] / closed[0]).toFixed(1)} % x ${(100 * forked[1] / closed[1]).toFixed(1)} %`);
    let [at, len] = await position(page);
    let view = await readAfter(page, null, both);
    for (;;) {
      // One scale and one place: the same time at the same x on the page.
      assert.ok(Math.abs(view.original.origin - view.fork.origin) <= 0.5, `step ${at}: x=0 at ${view.original.origin} and ${view.fork.origin} px`);
      assert.ok(Math.abs(view.original.scale - view.fork.scale) < 0.002, `step ${at}: scales ${view.original.scale} and ${view.fork.scale}`);
      assert.ok(view.original.drawing[1] > view.fork.drawing[1] + view.fork.drawing[3], `step ${at}: the strip is under the stage`);
      assert.equal(view.original.cursor, view.fork.cursor, `step ${at}: one cursor`);
      assert.ok(Math.abs(view.original.cursorOnScreen - view.fork.cursorOnScreen) <= 0.5, `step ${at}: the cursors at ${view.original.cursorOnScreen} and ${view.fork.cursorOnScreen} px`);
      assert.ok(view.below <= 0, `step ${at}: the ledger or the cards end ${view.below} px below the window`);
      if (presenting) {
        // Presenting reveals both runs alike: nothing after the cursor on either timeline.
        for (const run of ['original', 'fork']) {
          assert.equal(view[run].future, 0, `step ${at}: a future marker of the ${run} is drawn`);
          assert.equal(view[run].clip, view[run].cursor, `step ${at}: the ${run}'s clip ends at its cursor`);
        }
        // The stage's own words stay as large as with the fork closed: 18 CSS px or more.
        for (const l of view.fork.labels) assert.ok(l.px >= 18, `step ${at}: the stage's "${l.text}" is ${l.px.toFixed(2)} px`);
      }
      if (at === 6) await screenshot(page, `fork-${width}${presenting ? '-present' : ''}.png`);
      if (at === len) break;
      view = await pressAndRead(page, 'ArrowRight', at, both);
      [at] = await position(page);
    }
    // A's write with the old token: refused on the original, accepted late on the fork.
    assert.deepEqual(view.original.differs, ['stale_fence']);
    assert.deepEqual(view.fork.differs, ['ok']);
    // The strip names its run and labels the write that differs, readable from the back presenting.
    assert.deepEqual(view.original.labels.map((l) => l.text), ['original', '−10 #33 stale_fence']);
    if (presenting) {
      for (const l of view.original.labels) assert.ok(l.px >= 18, `"${l.text}" is ${l.px.toFixed(1)} px`);
    }
    assert.equal(await page.locator('svg.timeline.main g.ev.differs.late').count(), 1);
    await screenshot(page, `fork-end-${width}${presenting ? '-present' : ''}.png`);
    // Closed, the marks go with it.
    // Presenting hides the tools row: the fork carries its own Close fork, reached there.
    await page.getByRole('button', { name: 'Close fork' }).click();
    await fork.waitFor({ state: 'detached' });
    assert.equal(await page.locator('g.ev.differs').count(), 0);
    await context.close();
  });
}

test('412x915: on a phone the original\'s row follows the stage as it scrolls sideways', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=0', { viewport: { width: 412, height: 915 }, hasTouch: true, isMobile: true });
  await page.getByRole('button', { name: 'Fork' }).click();
  await page.getByLabel('Fencing').selectOption('off');
  await page.locator('.fork svg.timeline.strip').waitFor();
  const origins = () => page.evaluate(() => ['main.app > figure.timeline-wrap svg.timeline.main', '.fork svg.timeline.strip']
    .map((q) => { const m = document.querySelector(q).getScreenCTM(); return [m.e, m.a]; }));
  for (let i = 0; i < 12; i++) await page.getByRole('button', { name: /Step forward/ }).click();
  await page.waitForTimeout(200);
  const [stage, strip] = await origins();
  assert.ok(stage[0] < -100, `the stage scrolled to its end (x=0 at ${stage[0]} px)`);
  assert.ok(Math.abs(stage[0] - strip[0]) <= 1 && Math.abs(stage[1] - strip[1]) < 0.002, `the stage's x=0 at ${stage}, the strip's at ${strip}`);
  await page.locator('.fork').scrollIntoViewIfNeeded();
  await screenshot(page, 'fork-412-phone.png');
  await context.close();
});
