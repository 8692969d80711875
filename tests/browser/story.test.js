// The story line on a projector: at every step of every deck entry, fencing off and strict,
// the narration and the Say line fit the lines reserved for them (nothing cut mid-sentence),
// presenting their type reads from the back of the room (≥ 18 CSS px), and the timeline's
// box does not move while they change; the outcome cards' words stay inside their band.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, follow, readAfter, pressAndRead } from './session.js';
import { deck } from './deck-data.js';

const open = session();

/** The narration's and the Say line's fit, and the timeline's box, a frame after the step
 * shows (the fitting is measured in the page). Run in the page. */
const story = async ([at, len]) => {
  await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
  const one = (el) => {
    // The smallest type of the words in it (the element and every part holding words).
    const holders = [el, ...el.querySelectorAll('*')]
      .filter((e) => [...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.data.trim()));
    // Cut: taller than its own box, or running past the box of a part around it that
    // clips (the lines reserved for the story, the story itself).
    const bottom = el.getBoundingClientRect().bottom;
    const past = [];
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowY === 'visible') continue;
      const r = up.getBoundingClientRect();
      past.push(bottom - (r.top + up.clientTop + up.clientHeight));
    }
    return {
      over: Math.round(Math.max(el.scrollHeight - el.clientHeight, ...past)),
      px: Math.min(...holders.map((e) => parseFloat(getComputedStyle(e).fontSize))),
      text: el.textContent,
    };
  };
  const t = document.querySelector('figure.timeline-wrap').getBoundingClientRect();
  return {
    at,
    len,
    narration: one(document.querySelector('[data-testid=narration]')),
    say: one(document.querySelector('.story .say')),
    // The outcome cards, in the band under the ledger: a long outcome must not run past it.
    off: one(document.querySelector('[data-testid=summary-off]')),
    on: one(document.querySelector('[data-testid=summary-on]')),
    box: [t.left, t.top, t.width, t.height].map((v) => Math.round(v * 10) / 10).join(','),
  };
};

for (const [width, height, presenting] of [[1024, 768, true], [1280, 720, true], [1280, 720, false]]) {
  const where = `${width}x${height}${presenting ? ' presenting' : ''}`;
  test(`${where}: every step's narration and Say line fit their lines, large enough, and the stage holds still`, async () => {
    const { page, context } = await open('', { viewport: { width, height } });
    if (presenting) {
      await page.keyboard.press('p');
      await page.waitForFunction(() => document.querySelector('main.app').classList.contains('presenting'));
    }
    const cut = [];
    const small = [];
    const moved = [];
    let steps = 0;
    let least = Infinity;
    let stage = null;
    for (const { id } of deck.entries) {
      for (const fence of ['off', 'strict']) {
        await follow(page, `#s=${id}&fence=${fence}&step=0`);
        let view = await readAfter(page, null, story);
        for (let i = 0; ; i++) {
          assert.ok(i < 80, `${id} ${fence}: the walk never reached its end`);
          steps += 1;
          stage ??= view.box;
          if (view.box !== stage) moved.push(`${id} ${fence} step ${view.at}: ${view.box} (first: ${stage})`);
          for (const part of ['narration', 'say']) {
            const p = view[part];
            if (p.over > 1) cut.push(`${id} ${fence} step ${view.at} ${part} (${p.over} px over): ${p.text}`);
            least = Math.min(least, p.px);
            if (presenting && p.px < 18) small.push(`${id} ${fence} step ${view.at} ${part}: ${p.px} px`);
          }
          for (const card of ['off', 'on']) {
            const c = view[card];
            if (c.over > 1) cut.push(`${id} ${fence} step ${view.at} card ${card} (${c.over} px over): ${c.text}`);
          }
          if (view.at === view.len) break;
          view = await pressAndRead(page, 'ArrowRight', view.at, story);
        }
      }
    }
    console.log(`${where}: ${steps} steps, ${cut.length} cut, smallest story type ${least} px, timeline ${stage}`);
    await follow(page, '#s=gc-pause&fence=strict&step=6');
    await screenshot(page, `story-gc-pause-6-${width}${presenting ? '-present' : ''}.png`);
    assert.deepEqual(cut, [], 'narration or Say lines cut off');
    assert.deepEqual(small, [], 'story type under 18 px presenting');
    assert.deepEqual(moved, [], 'steps at which the timeline moved or resized');
    await context.close();
  });
}
