// Timeline labels: in every deck scenario, at every step, no label overlaps another label or a
// marker other than its own. One viewport: the drawing is an SVG whose viewBox scales it (and
// its text, sized in user units) uniformly, so what overlaps at one size overlaps at every
// size; 1024x768 is the projector size the other tests check fit at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, follow, position, pressAndRead, readAfter } from './session.js';

const open = session();

/** Overlaps among the timeline's labels and markers, as drawn by the browser. */
const overlaps = () => {
  const svg = document.querySelector('svg.timeline.main');
  const box = (el) => el.getBoundingClientRect();
  const labels = [...svg.querySelectorAll('text.ev-label, text.band-label, text.conflict-label')]
    .map((el) => ({ text: el.textContent, b: box(el), owner: el.closest('g.ev') }));
  const dots = [...svg.querySelectorAll('g.ev circle.dot')].map((el) => ({ b: box(el), owner: el.closest('g.ev') }));
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const found = [];
  labels.forEach((l, i) => {
    labels.slice(i + 1).forEach((m) => { if (hit(l.b, m.b)) found.push(`"${l.text}" on "${m.text}"`); });
    dots.forEach((d) => { if (d.owner !== l.owner && hit(l.b, d.b)) found.push(`"${l.text}" on a marker`); });
  });
  return { found, labels: labels.length };
};

for (const [width, height] of [[1024, 768]]) {
  test(`labels ${width}x${height}: none overlaps another label or marker, at any step`, async () => {
    // One page, each run reached through its link's hash.
    const { page } = await open('', { viewport: { width, height } });
    const ids = await page.getByLabel('Scenario').locator('option').evaluateAll((os) => os.map((o) => o.value).filter((v) => v !== 'recording'));
    const problems = [];
    let checked = 0;
    for (const id of ids) {
      await follow(page, `#s=${id}&step=99999`);
      const [, len] = await position(page);
      await page.locator('body').click({ position: { x: 2, y: height - 2 } });
      let view = await readAfter(page, null, overlaps);
      for (let step = len; step >= 0; step--) {
        const { found, labels } = view;
        assert.ok(labels >= 3, `${id} step ${step}: the timeline has its labels (${labels})`);
        problems.push(...found.map((f) => `${id} step ${step}: ${f}`));
        checked++;
        if (step > 0) view = await pressAndRead(page, 'ArrowLeft', step, overlaps);
      }
      assert.equal((await position(page))[0], 0, `${id}: stepped back to the start`);
      if (id === 'unsafe-release') await screenshot(page, `labels-${width}.png`);
    }
    assert.ok(checked > 100, `checked ${checked} steps`);
    assert.deepEqual(problems, []);
  });
}
