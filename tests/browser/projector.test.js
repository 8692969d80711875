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

/** What the storage band shows, run in the page: every visible piece of text in it with its
 * size in CSS px and whether its box (or a box that clips it) cuts it off, and the off/on
 * cards' boxes. */
const band = () => {
  const clips = ['.bottom', '.ledger-panel', '.compare', '.side', '.log-scroll'];
  const texts = [];
  const walker = document.createTreeWalker(document.querySelector('.bottom'), NodeFilter.SHOW_TEXT);
  for (let n; (n = walker.nextNode());) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el.checkVisibility({ visibilityProperty: true })) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const rects = [...range.getClientRects()];
    const cut = clips.map((q) => el.closest(q)).filter(Boolean).some((c) => {
      const b = c.getBoundingClientRect();
      return rects.some((r) => r.bottom > b.bottom + 1 || r.right > b.right + 1);
    });
    texts.push({ text: n.textContent.trim(), px: parseFloat(getComputedStyle(el).fontSize), cut });
  }
  const box = (id) => {
    const r = document.querySelector(`[data-testid=${id}]`).getBoundingClientRect();
    return [r.left, r.top, r.width, r.height].map(Math.round).join(',');
  };
  return { texts, cards: `${box('summary-off')} | ${box('summary-on')}` };
};

/** The storage band through every step of `hash` in presenter mode: what it showed. */
async function bandWalk(page, hash) {
  await follow(page, hash);
  const seen = [];
  let view = await readAfter(page, null, ([at, len]) => ({ at, len }));
  for (let i = 0; i < 80; i++) {
    seen.push({ at: view.at, ...(await page.evaluate(band)) });
    if (view.at === view.len) return seen;
    view = await pressAndRead(page, 'ArrowRight', view.at, ([at, len]) => ({ at, len }));
  }
  throw new Error(`${hash}: the walk never reached its end`);
}

test('presenting at 1024x768: the storage band reads at 18 px and up, uncut, and the off/on cards hold still', async () => {
  const { page } = await open('', { viewport: { width: 1024, height: 768 } });
  await page.keyboard.press('p');
  await page.waitForFunction(() => document.querySelector('main.app').classList.contains('presenting'));
  const small = [];
  const cut = [];
  for (const hash of ['#s=gc-pause&fence=off&step=0', '#s=gc-pause&fence=strict&step=0', '#s=storage-failover&fence=strict&step=0']) {
    const seen = await bandWalk(page, hash);
    for (const { at, texts } of seen) {
      small.push(...texts.filter((t) => t.px < 18).map((t) => `${hash} step ${at}: "${t.text}" ${t.px} px`));
      cut.push(...texts.filter((t) => t.cut).map((t) => `${hash} step ${at}: "${t.text}"`));
    }
    // The cards keep their boxes while the reveal holds the outcome back and once it shows.
    assert.deepEqual([...new Set(seen.map((s) => s.cards))], [seen[0].cards], `${hash}: the cards moved`);
    const words = seen.at(-1).texts.map((t) => t.text).join(' ');
    assert.match(words, /fencing off\s→ \d+/, `${hash}: the outcome is shown at the end`);
    if (hash.startsWith('#s=gc-pause&fence=off')) await screenshot(page, 'band-1024-present.png');
  }
  assert.deepEqual(small, [], 'text under 18 px in the storage band');
  assert.deepEqual(cut, [], 'text cut off in the storage band');
});

test('presenting at 1280x720 and 1024x768: the off/on cards hold still at every step of every entry', async () => {
  for (const viewport of [{ width: 1280, height: 720 }, { width: 1024, height: 768 }]) {
    const { page, context } = await open('', { viewport });
    await page.keyboard.press('p');
    await page.waitForFunction(() => document.querySelector('main.app').classList.contains('presenting'));
    const moved = [];
    const floor = [];
    for (const { id } of deck.entries) {
      const seen = await bandWalk(page, `#s=${id}&fence=strict&step=0`);
      const boxes = new Set(seen.map((s) => s.cards));
      if (boxes.size > 1) moved.push(`${id}: ${[...boxes].join(' / ')}`);
      // A long outcome may step its type down, never under 16 px nor cut.
      const end = seen.at(-1).texts.filter((t) => t.px < 16 || t.cut);
      floor.push(...end.map((t) => `${id}: "${t.text}" ${t.px} px${t.cut ? ', cut' : ''}`));
    }
    assert.deepEqual(moved, [], `${viewport.width}x${viewport.height}: cards that moved`);
    assert.deepEqual(floor, [], `${viewport.width}x${viewport.height}: text under 16 px or cut at the end`);
    await context.close();
  }
});

test('1024x768: every parameter field is in view, "A pauses at" with both of its fields', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict', { viewport: { width: 1024, height: 768 } });
  for (const label of ['Lease TTL (ms)', 'A pause start (ms)', 'A pause length (ms)']) {
    const field = page.getByLabel(label);
    const seen = await field.evaluate((el) => {
      const b = el.getBoundingClientRect();
      const row = el.closest('.pauses').getBoundingClientRect();
      const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
      return { inRow: b.left >= row.left - 0.5 && b.right <= row.right + 0.5 && b.width > 30, onTop: hit === el, right: b.right };
    });
    assert.ok(seen.inRow && seen.onTop && seen.right <= 1024, `${label}: ${JSON.stringify(seen)}`);
  }
  assert.match(await page.locator('.pauses').innerText(), /A pauses at\s+ms for\s+ms/);
  await screenshot(page, 'params-1024.png');
  await context.close();
});

test('Storage fails over: from the failover on, the write the standby never got is marked lost in the log', async () => {
  const { page, context } = await open('#s=storage-failover&fence=strict&step=0');
  const failover = Number(await page.locator('svg.timeline.main g.ev').filter({ hasText: 'standby promoted' }).getAttribute('data-step'));
  assert.ok(failover > 1, `the failover's step: ${failover}`);
  const row = page.getByTestId('ledger').getByTestId('ledger-row').first();
  await follow(page, `#s=storage-failover&fence=strict&step=${failover - 1}`);
  assert.match(await row.innerText(), /B\s+34\s+−10\s+accepted\s+90/);
  assert.doesNotMatch(await row.innerText(), /lost/);
  await follow(page, `#s=storage-failover&fence=strict&step=${failover}`);
  assert.equal(await page.getByTestId('balance').innerText(), '100');
  assert.match(await row.innerText(), /B\s+34\s+−10\s+accepted · lost in failover\s+90/);
  // Struck through, as a refused write is: the balance no longer holds it.
  const struck = await row.locator('td').first().evaluate((td) => getComputedStyle(td).textDecorationLine);
  assert.equal(struck, 'line-through');
  await screenshot(page, 'lost-write-1280.png');
  await follow(page, '#s=storage-failover&fence=strict&step=99');
  assert.match(await row.innerText(), /lost in failover/);
  await context.close();
});
