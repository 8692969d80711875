// Timeline type on a projector: in presenter mode every label of the drawing reads from the
// back of the room (≥ 18 CSS px at 1024×768), and no two labels overlap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, follow } from './session.js';
import { deck } from './deck-data.js';

const open = session();

/** Every label of the main timeline (its words: lane names, ticks, bands, pauses, markers'
 * labels; not the glyph inside a marker's dot): its class, text, rendered height (its font size
 * times the drawing's scale), its box on screen and its marker. And the markers' dots. Run in
 * the page. */
const drawing = () => {
  const svg = document.querySelector('svg.timeline.main');
  const scale = svg.getScreenCTM().a;
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const labels = [...svg.querySelectorAll('text:not(.glyph)')].map((t) => ({
    cls: t.getAttribute('class'),
    text: t.textContent,
    px: parseFloat(getComputedStyle(t).fontSize) * scale,
    box: box(t),
    owner: t.closest('g.ev'),
  }));
  const dots = [...svg.querySelectorAll('g.ev circle.dot')].map((c) => ({ box: box(c), owner: c.closest('g.ev') }));
  const hit = (a, b) => a[0] < b[2] - 0.5 && b[0] < a[2] - 0.5 && a[1] < b[3] - 0.5 && b[1] < a[3] - 0.5;
  const overlaps = [];
  labels.forEach((l, i) => {
    labels.slice(i + 1).forEach((m) => { if (hit(l.box, m.box)) overlaps.push(`"${l.text}" on "${m.text}"`); });
    dots.forEach((d) => { if (d.owner !== l.owner && hit(l.box, d.box)) overlaps.push(`"${l.text}" on a marker`); });
  });
  return { labels: labels.map(({ cls, text, px }) => ({ cls, text, px })), overlaps, markers: dots.length };
};

test('1024x768 presenting: every timeline label is at least 18 px high, and none overlaps another', async () => {
  const { page, context } = await open('', { viewport: { width: 1024, height: 768 } });
  await page.keyboard.press('p');
  await page.waitForFunction(() => document.querySelector('main.app').classList.contains('presenting'));
  const small = [];
  const overlaps = [];
  let least = Infinity;
  for (const { id } of deck.entries) {
    for (const fence of ['off', 'strict']) {
      await follow(page, `#s=${id}&fence=${fence}&step=999`);
      const seen = await page.evaluate(drawing);
      assert.ok(seen.markers > 3 && seen.labels.length > 10, `${id}: the whole run is drawn`);
      for (const l of seen.labels) {
        least = Math.min(least, l.px);
        if (l.px < 18) small.push(`${id} ${fence} ${l.cls} "${l.text}": ${l.px.toFixed(1)} px`);
      }
      overlaps.push(...seen.overlaps.map((o) => `${id} ${fence}: ${o}`));
    }
  }
  console.log(`smallest label: ${least.toFixed(1)} px`);
  assert.deepEqual(small, [], 'labels under 18 px');
  assert.deepEqual(overlaps, [], 'labels that overlap');
  await follow(page, '#s=gc-pause&fence=off&step=999');
  await screenshot(page, 'type-gc-pause-1024-present.png');
  await context.close();
});
