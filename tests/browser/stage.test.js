// The room: what the audience sees on a projector. The stage holds still from step to step,
// panels open beside the stage instead of squeezing it, presenter mode reveals the run step
// by step and keeps the notes off the shared screen, and a speaker view in a second window
// follows the page both ways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, text, position, follow, pressAndRead, readAfter } from './session.js';
import { deck } from './deck-data.js';

const open = session();

/** The timeline's box and the step shown, run in the page. */
const box = ([at, len]) => {
  const r = document.querySelector('figure.timeline-wrap').getBoundingClientRect();
  return { at, len, box: [r.left, r.top, r.width, r.height].map((v) => Math.round(v * 10) / 10).join(',') };
};

/** Every step of the run on screen, forward (→) from step 0: the boxes it showed. */
async function boxes(page) {
  const seen = [];
  let view = await readAfter(page, null, box);
  for (let i = 0; i < 80; i++) {
    seen.push(view);
    if (view.at === view.len) return seen;
    view = await pressAndRead(page, 'ArrowRight', view.at, box);
  }
  throw new Error('the walk never reached its end');
}

for (const [width, height] of [[1280, 720], [1024, 768]]) {
  test(`${width}x${height}: the timeline's box does not move or resize at any step of any entry, normal and presenting`, async () => {
    const { page, context } = await open('', { viewport: { width, height } });
    const moved = [];
    const sizes = new Set();
    for (const mode of ['normal', 'presenting']) {
      if (mode === 'presenting') {
        await page.keyboard.press('p');
        await page.waitForFunction(() => document.querySelector('main.app').classList.contains('presenting'));
      }
      for (const { id } of deck.entries) {
        for (const fence of ['off', 'strict', 'same_epoch']) {
          await follow(page, `#s=${id}&fence=${fence}&step=0`);
          const seen = await boxes(page);
          const first = seen[0].box;
          sizes.add(`${mode} ${first}`);
          for (const s of seen) {
            if (s.box !== first) moved.push(`${mode} ${id} ${fence} step ${s.at}: ${s.box} (step 0: ${first})`);
          }
        }
      }
    }
    assert.deepEqual(moved, [], 'steps at which the timeline moved or resized');
    console.log(`${width}x${height}: timeline boxes ${[...sizes].join(' | ')}`);
    await context.close();
  });
}

test('1280x720: with a panel open the timeline keeps its size, the cards stay in view, and What if… leaves the story and the drawing uncovered', async () => {
  const { page, context } = await open('#s=gc-pause&fence=off&step=6');
  const measure = () => page.evaluate(() => {
    const r = (q) => document.querySelector(q).getBoundingClientRect();
    const t = r('figure.timeline-wrap');
    // On screen and not under a panel: what is drawn at each card's middle is the card.
    const seen = (q) => {
      const b = r(q);
      return !!document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2)?.closest(q);
    };
    return {
      w: t.width, h: t.height, ledger: r('[data-testid=ledger]').bottom, cards: r('.compare').bottom,
      uncovered: seen('[data-testid=summary-off]') && seen('[data-testid=summary-on]'),
      balance: seen('.metrics'),
      // The story and the whole drawing: what is at each corner of the timeline's box and at
      // the narration's middle is theirs.
      stage: seen('[data-testid=narration]') && [[0.02, 0.05], [0.98, 0.05], [0.02, 0.95], [0.98, 0.95], [0.5, 0.5]]
        .every(([x, y]) => !!document.elementFromPoint(t.x + x * t.width, t.y + y * t.height)?.closest('figure.timeline-wrap')),
    };
  });
  const closed = await measure();
  const panels = [
    ['notes', async () => page.keyboard.press('n'), async () => page.keyboard.press('n')],
    ['what if', async () => page.getByText('What if…').click(), async () => page.getByText('What if…').click()],
    ['explore', async () => page.getByRole('button', { name: 'Explore' }).click(), async () => page.getByRole('button', { name: 'Explore' }).click()],
    ['fork', async () => page.getByRole('button', { name: 'Fork' }).click(), async () => page.getByRole('button', { name: 'Close fork' }).click()],
    ['export', async () => page.getByText('Export…').click(), async () => page.getByText('Export…').click()],
  ];
  for (const [name, show, hide] of panels) {
    await show();
    await page.waitForTimeout(150);
    await screenshot(page, `panel-${name.replace(' ', '-')}-1280.png`);
    // The fork too: its original is one row under the stage (fork.test.js), the stage keeps
    // 90 % of its size and the ledger and cards their place.
    const m = await measure();
    assert.ok(m.w >= 0.9 * closed.w && m.h >= 0.9 * closed.h, `${name}: timeline ${m.w}x${m.h} against ${closed.w}x${closed.h}`);
    assert.ok(m.ledger <= 720 && m.cards <= 720, `${name}: ledger ends at ${m.ledger}, cards at ${m.cards}`);
    assert.ok(m.uncovered, `${name}: the panel covers the off/on cards`);
    // What if… edits the run: it opens over the storage band, so the story, the whole drawing
    // and the cards show each edit as it is made; the drawers open at the right instead, over
    // the stage's edge, and leave the balance be.
    if (name === 'what if') assert.ok(m.stage, 'what if: the panel covers the story or the drawing');
    else assert.ok(m.balance, `${name}: the panel covers the balance`);
    console.log(`${name}: timeline ${(100 * m.w / closed.w).toFixed(1)} % wide, ${(100 * m.h / closed.h).toFixed(1)} % high`);
    await hide();
    await page.waitForTimeout(50);
  }
  await context.close();
});

test('presenter mode reveals the run step by step: no future on screen, the outcome at the step that decides it', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=0', { viewport: { width: 1024, height: 768 } });
  // Exploring: the future is drawn in ghost and both outcomes are on the cards.
  assert.ok((await page.locator('svg.timeline.main g.ev.future').count()) > 0);
  assert.match(await text(page, 'summary-off'), /80/);
  await page.keyboard.press('p');
  await page.waitForFunction(() => document.querySelector('svg.timeline.main').classList.contains('reveal'));
  const shown = () => page.evaluate(() => {
    const visible = [...document.querySelectorAll('svg.timeline.main g.ev')].filter((g) => getComputedStyle(g).display !== 'none');
    const clip = document.querySelector('#revealed rect').getAttribute('width');
    const cursor = document.querySelector('svg.timeline.main .cursor line').getAttribute('x1');
    return { visible: visible.length, future: visible.filter((g) => g.classList.contains('future')).length, clip, cursor };
  });
  const start = await shown();
  assert.equal(start.visible, 0, 'nothing drawn at step 0');
  assert.equal(start.clip, start.cursor, 'the clip ends at the cursor');
  assert.doesNotMatch(await text(page, 'summary-off'), /80/, 'the ending is not on screen before the story starts');
  assert.doesNotMatch(await text(page, 'summary-on'), /90/);
  await screenshot(page, 'reveal-step0-1024-present.png');
  // Step on: markers appear one step at a time, never a future one, until the cards show.
  let [at, len] = await position(page);
  let decided = null;
  while (at < len) {
    await page.keyboard.press('ArrowRight');
    [at] = await readAfter(page, at, (p) => p);
    const s = await shown();
    assert.equal(s.future, 0, `step ${at}: a future marker is drawn`);
    assert.equal(s.clip, s.cursor, `step ${at}`);
    if (decided === null && /80/.test(await text(page, 'summary-off'))) decided = at;
  }
  assert.ok(decided !== null && decided > 1, `the outcome appears at step ${decided}, not before the story`);
  assert.match(await text(page, 'summary-on'), /90/);
  await screenshot(page, 'reveal-end-1024-present.png');
  // The narration reads from the back of the room.
  const narration = await page.getByTestId('narration').evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
  assert.ok(narration >= 20, `narration ${narration}px`);
  await context.close();
});

test('presenter controls: a toolbar, Esc leaves, ? opens the keys, notes stay off the shared screen', async () => {
  const { page, context } = await open('#s=gc-pause&fence=off&step=2');
  await page.keyboard.press('?');
  const sheet = page.getByRole('dialog', { name: 'Keys' });
  await sheet.waitFor();
  assert.match(await sheet.innerText(), /fencing off ↔ on/);
  assert.match(await sheet.innerText(), /speaker view/);
  await page.keyboard.press('Escape');
  await sheet.waitFor({ state: 'detached' });
  await page.keyboard.press('n');
  await page.getByTestId('notes').waitFor();
  await page.keyboard.press('p');
  const bar = page.getByRole('navigation', { name: 'Presenter tools' });
  await bar.waitFor();
  for (const name of ['Exit', 'Laser', 'Speaker view', 'Keys']) {
    assert.ok(await bar.getByRole('button', { name }).isVisible(), name);
  }
  assert.equal(await page.getByTestId('notes').isVisible(), false, 'notes are not on the projected screen');
  await bar.getByRole('button', { name: 'Laser' }).click();
  assert.equal(await bar.getByRole('button', { name: 'Laser' }).getAttribute('aria-pressed'), 'true');
  await bar.getByRole('button', { name: 'Keys' }).click();
  await sheet.waitFor();
  await page.keyboard.press('Escape');
  await sheet.waitFor({ state: 'detached' });
  assert.ok(await page.locator('main.app.presenting').count(), 'the first Esc closes the sheet only');
  await screenshot(page, 'presenter-toolbar-1280.png');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.querySelector('main.app').classList.contains('presenting'));
  await page.keyboard.press('p');
  await bar.getByRole('button', { name: 'Exit' }).click();
  await page.waitForFunction(() => !document.querySelector('main.app').classList.contains('presenting'));
  await context.close();
});

test('fencing: the page opens with fencing off, f flips off and on, a picked scenario keeps the choice', async () => {
  const { page, context } = await open();
  const fencing = page.getByLabel('Fencing');
  assert.equal(await fencing.inputValue(), 'off', 'the failure first');
  await page.keyboard.press('f');
  await page.waitForFunction(() => document.querySelector('#fencing').value === 'strict');
  await page.keyboard.press('f');
  await page.waitForFunction(() => document.querySelector('#fencing').value === 'off');
  await fencing.selectOption('same_epoch');
  await page.getByLabel('Scenario').selectOption('toctou');
  await page.waitForFunction(() => document.querySelector('#scenario').value === 'toctou');
  assert.equal(await fencing.inputValue(), 'same_epoch', 'picking a scenario keeps the fencing choice');
  await context.close();
});

test("a drag keeps the cursor on the same event, not the same index", async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=0');
  // Step to B's debit.
  const current = () => page.evaluate(() => document.querySelector('svg.timeline.main g.ev.current title')?.textContent ?? '');
  for (let i = 0; i < 30 && !/— B's debit/.test(await current()); i++) {
    const [at] = await position(page);
    await page.keyboard.press('ArrowRight');
    await readAfter(page, at, (p) => p);
  }
  const before = await current();
  assert.match(before, /— B's debit/);
  const stepBefore = (await position(page))[0];
  // Move A's pause later by 3 ms with its keys: A's events move, B's debit stays the event shown.
  const pause = page.getByRole('slider', { name: /A's GC pause/ });
  await pause.focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => /pause\.A=8,/.test(location.hash));
  assert.equal(await current(), before, `step ${stepBefore} → ${(await position(page))[0]}`);
  assert.equal(await page.getByTestId('change-note').count(), 0, 'A still lands after B: nothing to say');
  // Shorten it to end at t=31: A's 33 now reaches storage first, and a line says so.
  await page.getByLabel('A pause start (ms)').fill('5');
  await page.getByLabel('A pause start (ms)').press('Enter');
  await page.getByLabel('A pause length (ms)').fill('26');
  await page.getByLabel('A pause length (ms)').press('Enter');
  const note = page.getByTestId('change-note');
  await note.waitFor();
  assert.equal(await note.innerText(), "A's 33 now reaches storage before B's 34, so strict cannot refuse it: balance 80 (was 90).");
  assert.match(await current(), /^t=35 ms — B's debit of 10 with token 34 is accepted/, 'still on B\'s debit');
  await screenshot(page, 'drag-note-1280.png');
  // The next step (the field had the keys: leave it first) takes the note away.
  await page.getByLabel('A pause length (ms)').blur();
  await page.keyboard.press('ArrowRight');
  await note.waitFor({ state: 'detached' });
  await context.close();
});

test('the speaker view: a second window with the Say line and the next step, following the page both ways', async () => {
  const { page, context } = await open('#s=gc-pause&fence=off&step=1');
  const [speaker] = await Promise.all([context.waitForEvent('page'), page.keyboard.press('s')]);
  await speaker.getByTestId('speaker-step').waitFor();
  const step = async (p, id) => Number((await text(p, id)).match(/step (\d+)/)[1]);
  const until = async (what, fn) => {
    for (const deadline = Date.now() + 10_000; !(await fn());) {
      assert.ok(Date.now() < deadline, what);
      await new Promise((ok) => setTimeout(ok, 20));
    }
  };
  await until('the speaker view opens on the page\'s step', async () => (await step(speaker, 'speaker-step')) === 1);
  assert.match(await text(speaker, 'speaker-say'), /.+/);
  assert.match(await text(speaker, 'speaker-next'), /^Next: .+/);
  assert.match(await text(speaker, 'speaker-question'), /.+/);
  assert.ok(await speaker.getByTestId('notes').isVisible(), 'the notes are in the speaker view');
  // The page steps: the speaker view follows.
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await until('the speaker view follows the page', async () => (await step(speaker, 'speaker-step')) === 3);
  // The speaker view steps and flips fencing: the page follows.
  await speaker.keyboard.press('ArrowRight');
  await until('the page follows the speaker view', async () => (await position(page))[0] === 4);
  await speaker.keyboard.press('f');
  await until('fencing follows', async () => (await page.getByLabel('Fencing').inputValue()) === 'strict');
  await speaker.setViewportSize({ width: 1280, height: 720 });
  await screenshot(speaker, 'speaker-view.png');
  await context.close();
});
