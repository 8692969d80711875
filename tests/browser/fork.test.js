// The fork: the original run's timeline under the fork's, both the same size and labelled,
// one cursor for both (stepping moves both to the same moment), and the events that differ
// marked on each. Its view code is a chunk fetched when the fork is first opened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, position, pressAndRead, readAfter } from './session.js';

const open = session();

/** Both timelines, as drawn: boxes, drawings, cursors and marked events. Run in the page. */
const both = () => {
  const one = (fig) => {
    const svg = fig.querySelector('svg.timeline');
    const r = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.width, b.height].map((v) => Math.round(v)); };
    const cursor = svg.querySelector('.cursor line');
    return {
      box: r(fig),
      drawing: r(svg),
      cursor: cursor.getAttribute('x1'),
      // Where it stands on screen, from the drawing's left edge.
      cursorOnScreen: Math.round(cursor.getBoundingClientRect().left - svg.getBoundingClientRect().left),
      differs: [...svg.querySelectorAll('g.ev.differs')].map((g) => g.getAttribute('data-result')),
      // The reveal: future markers on screen, and where the clip of what is drawn ends.
      future: [...svg.querySelectorAll('g.ev.future')].filter((g) => getComputedStyle(g).display !== 'none').length,
      clip: svg.classList.contains('reveal') ? svg.querySelector('clipPath rect').getAttribute('width') : null,
    };
  };
  return {
    fork: one(document.querySelector('main.app > figure.timeline-wrap')),
    original: one(document.querySelector('.fork figure.fork-original')),
  };
};

for (const [width, height, presenting] of [[1280, 720, false], [1024, 768, true]]) {
  test(`${width}x${height}${presenting ? ' presenting' : ''}: original and fork, the same size, one cursor, the differences marked`, async () => {
    const { page, context } = await open('#s=gc-pause&fence=strict&step=0', { viewport: { width, height } });
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
      await page.waitForFunction(() => document.querySelector('svg.timeline.original').classList.contains('large'));
    }
    await page.locator('body').click({ position: { x: 2, y: 2 } });
    let [at, len] = await position(page);
    let view = await readAfter(page, null, both);
    for (;;) {
      assert.deepEqual(view.original.box.slice(2), view.fork.box.slice(2), `step ${at}: the boxes`);
      assert.deepEqual(view.original.drawing.slice(2), view.fork.drawing.slice(2), `step ${at}: the drawings`);
      assert.equal(view.original.cursor, view.fork.cursor, `step ${at}: one cursor`);
      assert.equal(view.original.cursorOnScreen, view.fork.cursorOnScreen, `step ${at}: the same place on screen`);
      if (presenting) {
        // Presenting reveals both runs alike: nothing after the cursor on either timeline.
        for (const run of ['original', 'fork']) {
          assert.equal(view[run].future, 0, `step ${at}: a future marker of the ${run} is drawn`);
          assert.equal(view[run].clip, view[run].cursor, `step ${at}: the ${run}'s clip ends at its cursor`);
        }
      }
      if (at === 6) await screenshot(page, `fork-${width}${presenting ? '-present' : ''}.png`);
      if (at === len) break;
      view = await pressAndRead(page, 'ArrowRight', at, both);
      [at] = await position(page);
    }
    // A's write with the old token: refused on the original, accepted late on the fork.
    assert.deepEqual(view.original.differs, ['stale_fence']);
    assert.deepEqual(view.fork.differs, ['ok']);
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
