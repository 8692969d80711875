// The reveal (presenter mode, `p`): the run is drawn step by step, as The Secret Lives of Data
// builds its picture. What has happened is drawn with its words whole (the clip at the cursor
// cuts the shapes, never a label of a band, pause or banner that has begun), what has not
// happened is not drawn, and the event a step is about always has its label.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, follow, position, pressAndRead, readAfter } from './session.js';
import { deck } from './deck-data.js';

const open = session();

/**
 * What the timeline shows at the step on screen (run in the page): the words cut by the
 * reveal's clip, whether the step's event is labelled, and overlapping labels.
 */
const inspect = ([at]) => {
  const svg = document.querySelector('svg.timeline.main');
  const line = svg.querySelector('.cursor line').getBoundingClientRect();
  const cursor = line.left + line.width / 2;
  const seen = (el) => el.checkVisibility() && el.textContent.trim() !== '';
  const texts = [...svg.querySelectorAll('text')].filter(seen);
  // A text under a clip (its own or an ancestor's) that begins left of the cursor and reaches
  // past it is cut (one wholly right of it is not drawn at all).
  const across = (el) => { const r = el.getBoundingClientRect(); return r.left < cursor - 1 && r.right > cursor + 1; };
  const cut = texts.filter((el) => el.closest('[clip-path]') && across(el)).map((el) => el.textContent);
  const current = [...svg.querySelectorAll('g.ev.current')];
  const labelled = current.some((g) => [...g.querySelectorAll('text.ev-label')].some(seen));
  const box = (el) => el.getBoundingClientRect();
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const labels = texts.filter((el) => el.matches('.ev-label, .band-label, .conflict-label, .pause-label, .cut-label'));
  const overlaps = [];
  labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => {
    if (hit(box(a), box(b))) overlaps.push(`"${a.textContent}" on "${b.textContent}"`);
  }));
  return { at, cut, markers: current.length, labelled, overlaps };
};

for (const [width, height] of [[1024, 768], [1280, 720]]) {
  test(`${width}x${height} presenting: at every step of every entry, no begun label is cut by the reveal, the step's event is labelled, no labels overlap`, async () => {
    const { page, context } = await open('', { viewport: { width, height } });
    await page.keyboard.press('p');
    await page.waitForFunction(() => document.querySelector('svg.timeline.main').classList.contains('reveal'));
    const problems = [];
    let checked = 0;
    for (const { id } of deck.entries) {
      for (const fence of ['off', 'strict']) {
        await follow(page, `#s=${id}&fence=${fence}&step=0`);
        const [, len] = await position(page);
        let view = await readAfter(page, null, inspect);
        for (;;) {
          const where = `${id} ${fence} step ${view.at}`;
          problems.push(...view.cut.map((t) => `${where}: "${t}" cut at the cursor`));
          if (view.markers > 0 && !view.labelled) problems.push(`${where}: the step's event has no label`);
          problems.push(...view.overlaps.map((o) => `${where}: ${o}`));
          checked++;
          if (view.at === len) break;
          view = await pressAndRead(page, 'ArrowRight', view.at, inspect);
        }
      }
    }
    assert.ok(checked > 300, `checked ${checked} steps`);
    assert.deepEqual(problems, []);
    await context.close();
  });
}

/** Follows `hash` presenting at 1024x768 and returns the page. */
async function presenting(hash, viewport = { width: 1024, height: 768 }) {
  const app = await open('', { viewport });
  await app.page.keyboard.press('p');
  await app.page.waitForFunction(() => document.querySelector('svg.timeline.main').classList.contains('reveal'));
  await follow(app.page, hash);
  return app;
}

/** The visible texts of the timeline with `cls`, with their box in CSS px. */
const visible = (page, cls) => page.getByRole('group', { name: 'Timeline' }).locator(`text.${cls}`).evaluateAll(
  (els) => els.filter((el) => el.checkVisibility()).map((el) => {
    const r = el.getBoundingClientRect();
    return { text: el.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
  }),
);

test('GC pause presenting: the pause that starts at this step is named, whole; none before it; the banner reads whole at the end', async () => {
  const { page, context } = await presenting('#s=gc-pause&fence=off&step=2');
  assert.deepEqual(await visible(page, 'pause-label'), [], 'step 2: no pause yet');
  await pressAndRead(page, 'ArrowRight', 2, (p) => p);
  assert.match(await page.getByTestId('narration').innerText(), /A freezes/);
  assert.deepEqual((await visible(page, 'pause-label')).map((l) => l.text), ['GC pause 50 ms']);
  await screenshot(page, 'reveal-gc-pause-s03-1024.png');
  await follow(page, '#s=gc-pause&fence=off&step=99');
  assert.deepEqual((await visible(page, 'conflict-label')).map((l) => l.text), ['two clients believe they hold the lock']);
  const bands = (await visible(page, 'band-label')).map((l) => l.text);
  assert.deepEqual(bands, ['A · token 33', 'B · token 34']);
  await screenshot(page, 'reveal-gc-pause-end-1024.png');
  await context.close();
});

test('Waiting on a lock presenting, step 12: B\'s acquire is labelled in B\'s lane, and C\'s token-35 lease is named', async () => {
  const { page, context } = await presenting('#s=lock-queue&fence=off&step=12', { width: 1280, height: 720 });
  const lanes = await page.getByRole('group', { name: 'Timeline' }).locator('rect.lane').evaluateAll(
    (els) => els.map((el) => { const r = el.getBoundingClientRect(); return [r.top, r.bottom]; }),
  );
  for (const l of (await visible(page, 'ev-label')).filter((l) => /^acquire #34/.test(l.text))) {
    const mid = (l.top + l.bottom) / 2;
    assert.ok(mid >= lanes[1][0] && mid <= lanes[1][1], `"${l.text}" sits in B's lane (${mid} in ${lanes[1]})`);
  }
  assert.ok((await visible(page, 'band-label')).some((l) => /^C/.test(l.text)), 'C\'s lease is named');
  await screenshot(page, 'reveal-lock-queue-s12-1280.png');
  await context.close();
});

test('Redis failover presenting: a lease label does not run under the lease granted after it', async () => {
  const { page, context } = await presenting('#s=redis-failover&fence=off&step=99', { width: 1280, height: 720 });
  const timeline = page.getByRole('group', { name: 'Timeline' });
  const bands = await timeline.locator('rect.lease-band').evaluateAll((els) => els.map((el) => {
    const r = el.getBoundingClientRect();
    return { x: Number(el.getAttribute('x')), left: r.left, right: r.right };
  }));
  const labels = await timeline.locator('text.band-label').evaluateAll((els) => els.map((el) => {
    const r = el.getBoundingClientRect();
    return { text: el.textContent, x: Number(el.getAttribute('x')), left: r.left, right: r.right };
  }));
  for (const l of labels.filter((l) => l.text)) {
    // The band it names starts at or before it; a later one must not lie under its words.
    const own = Math.max(...bands.filter((b) => b.x <= l.x).map((b) => b.x));
    for (const b of bands.filter((b) => b.x > own)) {
      assert.ok(l.right <= b.left + 0.5 || l.left >= b.right - 0.5, `"${l.text}" runs under the band from x=${b.x}`);
    }
  }
  await screenshot(page, 'reveal-redis-failover-end-1280.png');
  await context.close();
});
