// Projectors: at 1024x768 and 1280x720, normal and presenter mode, every deck scenario at
// every step fits the screen with no scrolling sideways or down, and the timeline keeps at
// least 150 px. At 1024x768, the tighter screen, under every fencing policy; at 1280x720 under
// each scenario's own. A long step in the middle of a run (a narration of five lines) is
// where a page overflows, so the walk goes through all of them, as a presenter would with →.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, follow, pressAndRead, readAfter } from './session.js';
import { deck } from './deck-data.js';

const open = session();

/** The page's extent and the timeline's height, with the step it shows (run in the page). */
const fit = ([at, len]) => {
  const svg = document.querySelector('svg.timeline.main').getBoundingClientRect();
  return { at, len, w: document.documentElement.scrollWidth, h: document.documentElement.scrollHeight, svg: svg.height };
};

/** Every step from where the page is to the end (→) or back to step 0 (←): what does not fit. */
async function walk(page, key, label, [width, height]) {
  const misfits = [];
  let view = await readAfter(page, null, fit);
  for (let i = 0; i < 80; i++) {
    const { at, len, w, h, svg } = view;
    if (w > width || h > height || svg < 150) misfits.push(`${label} step ${at}: ${w}x${h}, timeline ${Math.round(svg)} px`);
    if ((key === 'ArrowRight' && at === len) || (key === 'ArrowLeft' && at === 0)) return misfits;
    view = await pressAndRead(page, key, at, fit);
  }
  throw new Error(`${label}: the walk never reached its end`);
}

for (const [width, height, policies] of [[1024, 768, ['off', 'strict', 'same_epoch']], [1280, 720, [null]]]) {
  test(`projector ${width}x${height}: every step of every scenario fits, normal and presenter mode`, async () => {
    // One page, each run reached through its link's hash, as a presenter's links reach it.
    const { page } = await open('', { viewport: { width, height } });
    const ids = await page.getByLabel('Scenario').locator('option').evaluateAll((os) => os.map((o) => o.value).filter((v) => v !== 'recording'));
    assert.deepEqual(ids, deck.entries.map((e) => e.id));
    const presenting = (on) => page.waitForFunction((want) => document.querySelector('main.app').classList.contains('presenting') === want, on);
    const misfits = [];
    let runs = 0;
    for (const id of ids) {
      for (const fence of policies) {
        await follow(page, `#s=${id}${fence ? `&fence=${fence}` : ''}&step=0`);
        const label = `${id}${fence ? ` ${fence}` : ''}`;
        const shot = id === 'unsafe-release' && (fence ?? 'off') === 'off';
        // Forward through the run as it is, then back through it in presenter mode.
        misfits.push(...(await walk(page, 'ArrowRight', label, [width, height])));
        if (shot) await screenshot(page, `projector-${width}-normal.png`);
        await page.keyboard.press('p');
        await presenting(true);
        if (shot) await screenshot(page, `projector-${width}-present.png`);
        misfits.push(...(await walk(page, 'ArrowLeft', `${label} presenting`, [width, height])));
        await page.keyboard.press('p');
        await presenting(false);
        runs += 1;
      }
    }
    assert.equal(runs, ids.length * policies.length);
    assert.deepEqual(misfits, [], 'steps that scroll or squeeze the timeline');
  });
}
