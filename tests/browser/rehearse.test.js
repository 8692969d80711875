// Rehearse mode: a rehearsal end to end by keyboard and by touch, its predictions scored
// right and wrong against the deck's own runs, the progress kept across a reload (from the
// single file too) and cleared by reset, and the night-before sheet printed to PDF.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, DIST } from './harness.js';
import { session, position } from './session.js';
import { deck } from './deck-data.js';

const open = session();
const fromDisk = session({ file: join(DIST, 'fencing-lab.html') });
// Screenshots and the sheet's pages (FENCING_SHOTS names another folder for them).
const SHOTS = process.env.FENCING_SHOTS ?? ARTIFACTS;
mkdirSync(SHOTS, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(SHOTS, `rehearse-${name}.png`) });

const entry = (id) => deck.entries.find((e) => e.id === id);
const dialog = (page) => page.getByRole('dialog', { name: 'Rehearse' });
const mark = (page, key) => page.getByTestId(`mark-${key}`);
const markState = (page, key) => mark(page, key).getAttribute('class');
/** "A's 33 refused: stale_fence" → the form's words for each refused write. */
const refusedLabels = (outcome) => [...outcome.matchAll(/(\w+)'s (\d+)(?: and (\w+)'s (\d+))? refused/g)]
  .flatMap((m) => [[m[1], m[2]], [m[3], m[4]]].filter(([w]) => w))
  .map(([who, token]) => new RegExp(`^${who}'s .* with token ${token}$`));

/** Presses a key until the clock reaches the run's end; returns the step each mark showed. */
async function stepThrough(page, press) {
  const seen = {};
  for (let guard = 0; guard < 80; guard++) {
    const [at, len] = await position(page);
    for (const key of ['off', 'on', 'refused']) {
      if (seen[key] === undefined && (await mark(page, key).count()) && (await markState(page, key)) !== 'pending') seen[key] = at;
    }
    if (at === len) return seen;
    await press();
  }
  throw new Error('the run never ended');
}

/** Presses Enter on the part's main button, once the page has put the focus there. */
async function enter(page, name) {
  await page.waitForFunction((n) => document.activeElement?.matches('.rehearse [data-primary]')
    && document.activeElement.textContent.trim() === n && !document.activeElement.disabled, name);
  await page.keyboard.press('Enter');
}

/** Picks `value` in the focused select with the arrow keys. */
async function arrowTo(page, select, value) {
  const values = await select.evaluate((s) => [...s.options].map((o) => o.value));
  const want = values.indexOf(value);
  assert.ok(want > 0, `${value} is offered (${values})`);
  const now = values.indexOf(await select.inputValue());
  for (let i = now; i < want; i++) await page.keyboard.press('ArrowDown');
  assert.equal(await select.inputValue(), value);
}

test('by keyboard: the headline asked, predicted (two wrong), revealed step by step, pushed back; progress kept, then reset', async () => {
  const headline = entry('gc-pause');
  const { off, strict } = headline.runs;
  const { page, context } = await open('#s=gc-pause');
  await page.keyboard.press('q');
  await dialog(page).waitFor();
  await enter(page, 'Start with the headline');
  await page.getByRole('heading', { name: headline.question }).waitFor();
  assert.match(await page.getByRole('timer').innerText(), /^(2:00|1:5\d) left$/);
  assert.match(await dialog(page).innerText(), /100 on acct:1/, 'the setup is on screen');
  assert.ok(await page.evaluate(() => [[40, 40], [640, 400], [1240, 700]]
    .every(([x, y]) => document.elementFromPoint(x, y)?.closest('.rehearse'))), 'and nothing else is');
  await shot(page, 'question');
  await enter(page, "I've answered: predict");
  const offSelect = page.getByLabel('With fencing off, the balance ends at');
  await offSelect.waitFor();
  await page.waitForFunction(() => document.activeElement?.matches('select[data-primary]'));
  await arrowTo(page, offSelect, strict.value); // wrong: the candidate forgets the double charge
  await page.keyboard.press('Tab');
  await arrowTo(page, page.getByLabel('With fencing on (strict), the balance ends at'), strict.value);
  // No write ticked: "storage refuses none", which is wrong.
  await shot(page, 'prediction');
  await page.getByRole('button', { name: 'Play the run' }).focus();
  await page.keyboard.press('Enter');
  // The fencing-off run plays with the reveal: the off mark shows at the step its card does.
  await mark(page, 'off').waitFor();
  assert.equal(await page.getByLabel('Fencing').inputValue(), 'off');
  assert.equal(await markState(page, 'off'), 'pending');
  // It plays by itself (the page's Play); Space pauses it, and the walk goes on by hand.
  await page.waitForFunction(() => !/step 0 \//.test(document.querySelector('[data-testid=clock]').textContent), null, { timeout: 5000 });
  await page.keyboard.press(' ');
  await page.getByRole('button', { name: 'Play', exact: true }).waitFor();
  assert.equal(await page.getByLabel('Fencing').inputValue(), 'off', 'Space paused the run, and pressed no button of the rehearsal');
  const offSeen = await stepThrough(page, async () => {
    await page.keyboard.press('ArrowRight');
    const [at] = await position(page);
    if ((await markState(page, 'off')) !== 'pending') return;
    assert.equal(await page.getByTestId('summary-off').locator('.v').innerText(), '?', `step ${at}: the card waits too`);
  });
  assert.ok(offSeen.off > 0);
  assert.equal(await markState(page, 'off'), 'wrong');
  assert.match(await mark(page, 'off').innerText(), new RegExp(`Wrong\\. Fencing off: the balance ends at ${off.value} \\(step ${offSeen.off} of the fencing-off run\\)\\. You said ${strict.value}\\.`));
  assert.equal(await markState(page, 'on'), 'pending', 'nothing about fencing on shows yet');
  await enter(page, 'Now with fencing on');
  await page.waitForFunction(() => document.querySelector('#fencing').value === 'strict');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await shot(page, 'reveal');
  const onSeen = await stepThrough(page, () => page.keyboard.press('ArrowRight'));
  assert.equal(await markState(page, 'on'), 'right');
  assert.equal(await markState(page, 'refused'), 'wrong');
  await shot(page, 'reveal-end');
  assert.match(await mark(page, 'refused').innerText(), /storage refuses A's debit of 10 with token 33 \(stale_fence\) .*You said none\./);
  assert.ok(onSeen.refused <= onSeen.on, 'the refused write comes no later than the end it decides');
  await enter(page, 'Their push-back');
  const pb = headline.pushbacks[0];
  await page.getByRole('heading', { name: pb.question }).waitFor();
  assert.equal(await page.getByTestId('pushback-answer').count(), 0, 'the answer waits for the candidate');
  await enter(page, 'Show the answer');
  assert.equal(await page.getByTestId('pushback-answer').innerText(), pb.answer);
  await shot(page, 'pushback');
  for (let i = 1; i < headline.pushbacks.length; i++) {
    await enter(page, 'Next');
    await enter(page, 'Show the answer');
  }
  await enter(page, 'Next');
  assert.match(await page.getByTestId('rehearse-summary').innerText(), /^1 of 3 predictions right; answered in 0:\d\d \(of 2:00\)\.$/);
  // The walk goes on to the entry the push-back points to.
  const next = entry(pb.shows);
  await page.getByRole('button', { name: `Next question: ${next.title}` }).waitFor();

  // Progress survives a reload, and reset clears it.
  await page.reload();
  await page.getByTestId('balance').waitFor();
  await page.keyboard.press('q');
  assert.match(await page.getByTestId('progress-gc-pause').innerText(), /^rehearsed 1×, wrong: off, refused, 0:\d\d$/);
  const wrongStart = page.getByRole('button', { name: 'Rehearse what I got wrong (1)' });
  assert.ok(await wrongStart.isEnabled());
  await page.getByRole('button', { name: 'Reset my progress' }).click();
  assert.equal(await page.getByTestId('progress-gc-pause').innerText(), '');
  assert.ok(await page.getByRole('button', { name: 'Rehearse what I got wrong (0)' }).isDisabled());
  await page.keyboard.press('Escape');
  assert.equal(await dialog(page).count(), 0, 'Esc closes it');
  await page.reload();
  await page.getByTestId('balance').waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem('fencing-lab.rehearse')), null);
  await context.close();
});

test('by touch: a picked entry from the deck chunk, every prediction right', async () => {
  const e = entry('toctou');
  const { off, strict } = e.runs;
  const { page, context } = await open('', { viewport: { width: 1024, height: 768 }, hasTouch: true, isMobile: true });
  await page.getByRole('button', { name: 'Rehearse', exact: true }).tap();
  await page.getByRole('checkbox', { name: `2. ${e.title}` }).tap();
  await page.getByRole('button', { name: 'Rehearse the chosen' }).tap();
  await page.getByRole('heading', { name: e.question }).waitFor();
  await page.getByRole('button', { name: "I've answered: predict" }).tap();
  await page.getByLabel('With fencing off, the balance ends at').selectOption(off.value);
  await page.getByLabel('With fencing on (strict), the balance ends at').selectOption(strict.value);
  const wanted = refusedLabels(strict.outcome);
  assert.ok(wanted.length > 0, strict.outcome);
  for (const label of wanted) await page.getByRole('checkbox', { name: label }).tap();
  await page.getByRole('button', { name: 'Play the run' }).tap();
  const stepButton = page.getByRole('button', { name: 'Next step' });
  await stepThrough(page, () => stepButton.tap());
  await page.getByRole('button', { name: 'Now with fencing on' }).tap();
  await stepThrough(page, () => stepButton.tap());
  for (const key of ['off', 'on', 'refused']) assert.equal(await markState(page, key), 'right', key);
  await page.getByRole('button', { name: 'Their push-back' }).tap();
  for (const pb of e.pushbacks) {
    await page.getByRole('heading', { name: pb.question }).waitFor();
    await page.getByRole('button', { name: 'Show the answer' }).tap();
    assert.equal(await page.getByTestId('pushback-answer').innerText(), pb.answer);
    await page.getByRole('button', { name: 'Next', exact: true }).tap();
  }
  assert.match(await page.getByTestId('rehearse-summary').innerText(), /^3 of 3 predictions right;/);
  await page.getByRole('button', { name: 'That was the last: back to the start' }).tap();
  assert.match(await page.getByTestId('progress-toctou').innerText(), /^rehearsed 1×, all right, 0:\d\d$/);
  await context.close();
});

test('from the single file on disk: the progress is kept across a reload', async () => {
  const { page, context } = await fromDisk('');
  await page.keyboard.press('q');
  await page.getByRole('button', { name: 'Start with the headline' }).click();
  await page.getByRole('button', { name: "I've answered: predict" }).click();
  await page.getByLabel('With fencing off, the balance ends at').selectOption(entry('gc-pause').runs.off.value);
  await page.getByLabel('With fencing on (strict), the balance ends at').selectOption('100');
  await page.getByRole('button', { name: 'Play the run' }).click();
  await page.reload();
  await page.getByTestId('balance').waitFor();
  await page.keyboard.press('q');
  assert.match(await page.getByTestId('progress-gc-pause').innerText(), /^rehearsed 1×, wrong: on, refused, /);
  await page.getByRole('button', { name: 'Rehearse what I got wrong (1)' }).click();
  await page.getByRole('heading', { name: entry('gc-pause').question }).waitFor();
  await context.close();
});

test('the night-before sheet prints the chosen entries, two to a page, in black and white', async () => {
  const chosen = ['gc-pause', 'toctou', 'same-token-retry', 'redis-failover'].map(entry);
  const { page, context } = await open('');
  await page.keyboard.press('q');
  for (const e of chosen) {
    const n = deck.entries.indexOf(e) + 1;
    await page.getByRole('checkbox', { name: `${n}. ${e.title}` }).check();
  }
  await page.evaluate(() => { window.print = () => { window.printed = true; }; });
  await page.getByRole('button', { name: 'Print the night-before sheet' }).click();
  await page.waitForFunction(() => window.printed === true);
  const articles = page.locator('.night-sheet article');
  assert.equal(await articles.count(), chosen.length);
  for (const [i, e] of chosen.entries()) {
    const words = await articles.nth(i).textContent();
    assert.ok(words.includes(e.question), e.id);
    assert.ok(words.includes(`Fencing off → ${e.runs.off.value}: ${e.runs.off.outcome}`), words);
    for (const pb of e.pushbacks) assert.ok(words.includes(pb.answer) && words.includes(`Source: ${pb.source}`), pb.question);
  }
  assert.equal(await page.locator('.night-sheet svg.sheet-figure').count(), chosen.length, 'a figure each');
  await page.emulateMedia({ media: 'print' });
  const colours = await page.evaluate(() => [...document.querySelectorAll('.night-sheet, .night-sheet h2, .night-sheet li')]
    .map((el) => getComputedStyle(el).color));
  assert.deepEqual([...new Set(colours)], ['rgb(0, 0, 0)'], 'black text');
  const pdf = join(SHOTS, 'rehearse-sheet.pdf');
  await page.pdf({ path: pdf, format: 'A4', printBackground: false });
  execFileSync('pdftoppm', ['-png', '-r', '70', pdf, join(SHOTS, 'rehearse-sheet')]);
  const pages = readdirSync(SHOTS).filter((f) => /^rehearse-sheet-\d+\.png$/.test(f));
  assert.equal(pages.length, chosen.length / 2, `two entries to a page (${pages})`);
  await context.close();
});

test('an embedded view has no rehearsal: q does nothing there', async () => {
  const { page, context } = await open('#s=gc-pause&embed');
  await page.keyboard.press('q');
  await page.waitForTimeout(300);
  assert.equal(await dialog(page).count(), 0);
  await context.close();
});
