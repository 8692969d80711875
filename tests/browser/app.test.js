// The headline scenario in a real (headless Debian) Chromium against the built dist/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, text, stepToEnd, position } from './session.js';

const open = session();

test('fencing on: A is rejected stale_fence, balance 90, last fence 34', async () => {
  const { page, context } = await open();
  // The page opens on the failure; one `f` turns fencing on.
  assert.equal(await page.getByLabel('Fencing').inputValue(), 'off');
  await page.keyboard.press('f');
  await page.waitForFunction(() => document.querySelector('#fencing').value === 'strict');
  assert.equal(await text(page, 'balance'), '100');
  const steps = await stepToEnd(page);
  assert.ok(steps >= 8, `headline has ${steps} steps`);
  assert.equal(await text(page, 'balance'), '90');
  assert.equal(await text(page, 'last-fence'), '34');
  const rows = page.getByTestId('ledger').getByTestId('ledger-row');
  assert.equal(await rows.count(), 2);
  assert.match(await rows.nth(0).innerText(), /B\s+34\s+−10\s+accepted/);
  assert.match(await rows.nth(1).innerText(), /A\s+33\s+−10\s+stale_fence/);
  // The rejected write is visibly marked on the storage lane.
  const rejected = page.locator('svg.timeline g.ev.write.rejected');
  assert.equal(await rejected.count(), 1);
  assert.equal(await rejected.getAttribute('data-result'), 'stale_fence');
  assert.match(await text(page, 'summary-off'), /80/);
  assert.match(await text(page, 'summary-on'), /90/);
  await screenshot(page, 'fencing-on-end.png');
  // Stepping back is indexing: one step back undoes nothing, it just shows the earlier state.
  await page.getByRole('button', { name: 'Step back' }).click();
  assert.equal(await page.getByTestId('ledger-row').count(), 2);
  await page.getByRole('button', { name: 'Reset' }).click();
  assert.equal(await text(page, 'balance'), '100');
  assert.equal(await page.getByTestId('ledger-row').count(), 0);
  await context.close();
});

test('fencing off: both debits land, balance 80, last write token 33', async () => {
  const { page, context } = await open();
  await page.getByLabel('Fencing').selectOption('off');
  await stepToEnd(page);
  assert.equal(await text(page, 'balance'), '80');
  assert.equal(await text(page, 'last-fence'), '33');
  const rows = page.getByTestId('ledger-row');
  assert.equal(await rows.count(), 2);
  assert.match(await rows.nth(1).innerText(), /A\s+33\s+−10\s+accepted/);
  assert.equal(await page.locator('svg.timeline g.ev.write.late').count(), 1);
  assert.match(await text(page, 'narration'), /.+/);
  await screenshot(page, 'fencing-off-end.png');
  await context.close();
});

test("dragging A's pause to end before expiry gives a run with no conflict", async () => {
  const { page, context } = await open();
  const grip = page.getByTestId('pause-A-resize');
  const box = await grip.boundingBox();
  const svg = await page.locator('svg.timeline').boundingBox();
  const pxPerMs = (svg.width * 0.9) / 100; // plot is 900 of 1000 user units, horizon 100 ms
  // Shrink the 5..55 pause to about 5..20: it now ends before the 30 ms lease expires.
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) {
    await page.mouse.move(box.x + box.width / 2 - i * 3.5 * pxPerMs, box.y + box.height / 2);
  }
  await page.mouse.up();
  const length = Number(await page.getByLabel('A pause length (ms)').inputValue());
  assert.ok(length >= 10 && length <= 20, `pause length now ${length} ms`);
  await stepToEnd(page);
  assert.equal(await page.locator('svg.timeline g.ev.write.rejected').count(), 0);
  assert.equal(await page.locator('svg.timeline rect.conflict').count(), 0);
  // A charged before its lease ran out; B reads the job's status, finds it done and skips.
  const rows = page.getByTestId('ledger-row');
  assert.equal(await rows.count(), 1);
  assert.match(await rows.nth(0).innerText(), /A\s+33\s+−10\s+accepted/);
  assert.equal(await text(page, 'balance'), '90');
  assert.equal(await page.locator('svg.timeline.main g.ev').filter({ hasText: 'done (a debit has landed), so it skips' }).count(), 1);
  assert.match(await text(page, 'summary-on'), /no conflict/);
  assert.match(await text(page, 'summary-off'), /no conflict/);
  await screenshot(page, 'short-pause.png');

  // Moving the whole block (not resizing) shifts its start and keeps its length.
  const body = page.getByTestId('pause-A').locator('rect.pause-body');
  const b = await body.boundingBox();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2 + 20 * pxPerMs, b.y + b.height / 2, { steps: 8 });
  await page.mouse.up();
  const start = Number(await page.getByLabel('A pause start (ms)').inputValue());
  assert.ok(start >= 22 && start <= 28, `pause start now ${start} ms`);
  assert.equal(Number(await page.getByLabel('A pause length (ms)').inputValue()), length);
  await context.close();
});

test('a drag edits the page in place, and ends exactly as a fresh load of its link', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=99');
  // Tag every node of the timeline drawing; a panel written whole would lose the tags.
  const tagged = await page.evaluate(() => {
    const nodes = document.querySelectorAll('svg.timeline g.drawing *');
    nodes.forEach((n) => { n.__kept = true; });
    return nodes.length;
  });
  const body = page.getByTestId('pause-A').locator('rect.pause-body');
  const b = await body.boundingBox();
  const svg = await page.locator('svg.timeline').boundingBox();
  const pxPerMs = (svg.width * 0.9) / 100;
  // Right across the point where A's write lands before the lease expires, then back a little.
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2 + 30 * pxPerMs, b.y + b.height / 2, { steps: 30 });
  await page.mouse.move(b.x + b.width / 2 + 18 * pxPerMs, b.y + b.height / 2, { steps: 6 });
  await page.mouse.up();
  const start = Number(await page.getByLabel('A pause start (ms)').inputValue());
  assert.ok(start >= 20 && start <= 26, `pause start now ${start} ms`);
  const kept = await page.evaluate(() =>
    [...document.querySelectorAll('svg.timeline g.drawing *')].filter((n) => n.__kept).length);
  assert.ok(kept > tagged / 2, `${kept} of ${tagged} timeline nodes were edited in place, not rebuilt`);

  // Each panel, with attributes sorted, plus what every field shows.
  const snapshot = (p) => p.evaluate(() => {
    // Comments are the renderer's own placeholders, not content.
    const canon = (n) => n.nodeType === 8 ? ''
      : n.nodeType === 3 ? n.nodeValue
      : `<${n.nodeName}${[...n.attributes].map((a) => ` ${a.name}=${a.value}`).sort().join('')}>${[...n.childNodes].map(canon).join('')}</>`;
    const panels = ['svg.timeline g.drawing', 'section.story', 'section.ledger-panel', 'section.compare', 'section.pauses']
      .map((sel) => canon(document.querySelector(sel)));
    const fields = [...document.querySelectorAll('section.pauses input')].map((i) => `${i.dataset.param}=${i.value}`);
    return { panels, fields, balance: document.querySelector('[data-testid=balance]').textContent };
  });
  await page.waitForFunction((s) => location.hash.includes(`pause.A=${s},`), start);
  const dragged = await snapshot(page);
  assert.ok(dragged.fields.includes(`pause-start=${start}`), dragged.fields.join(' '));
  const link = await page.evaluate(() => location.hash);
  const fresh = await open(link);
  assert.deepEqual(await snapshot(fresh.page), dragged);
  await fresh.context.close();
  await context.close();
});

test('keyboard: arrows step, . steps (clicker), f toggles fencing, Space plays', async () => {
  const { page, context } = await open();
  await page.locator('body').click({ position: { x: 5, y: 700 } });
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  assert.match(await text(page, 'clock'), /^step 3 \//);
  await page.keyboard.press('ArrowLeft');
  assert.match(await text(page, 'clock'), /^step 2 \//);
  await page.keyboard.press('.');
  assert.match(await text(page, 'clock'), /^step 3 \//);
  await page.keyboard.press('f');
  assert.equal(await page.getByLabel('Fencing').inputValue(), 'strict');
  await page.keyboard.press('f');
  assert.equal(await page.getByLabel('Fencing').inputValue(), 'off');
  await page.keyboard.press('Home');
  await page.getByLabel('Speed').selectOption('400');
  await page.locator('body').click({ position: { x: 5, y: 700 } });
  await page.keyboard.press(' ');
  await page.getByRole('button', { name: 'Pause' }).waitFor();
  await page.getByRole('button', { name: 'Play' }).waitFor({ timeout: 15000 });
  const [, at, len] = (await text(page, 'clock')).match(/step (\d+) \/ (\d+)/);
  assert.equal(at, len, 'play ran to the end and stopped');
  assert.equal(await text(page, 'balance'), '80');
  await context.close();
});

test('out-of-range input shows a message and keeps the last good state', async () => {
  const { page, context } = await open();
  await stepToEnd(page);
  const length = page.getByLabel('A pause length (ms)');
  await length.fill('500');
  await length.press('Enter');
  const error = page.getByTestId('error');
  await error.waitFor();
  assert.match(await error.innerText(), /must end by t=100 ms/);
  assert.equal(await text(page, 'balance'), '80');
  assert.equal(await length.inputValue(), '50', 'the input shows the last good value again');
  await length.fill('-5');
  await length.press('Enter');
  assert.match(await error.innerText(), /A pause length must be between 1 ms and 95 ms \(-5 is negative/);
  await page.getByRole('button', { name: 'Dismiss' }).click();
  assert.equal(await page.getByTestId('error').count(), 0);
  await context.close();
});

test('dark theme and reduced motion render the same story', async () => {
  const { page, context } = await open('', { colorScheme: 'dark', reducedMotion: 'reduce' });
  await stepToEnd(page);
  assert.equal(await text(page, 'balance'), '80');
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(20, 22, 26)');
  await screenshot(page, 'dark-end.png');
  await context.close();
});

test('pause 5..31: strict fencing accepts A\'s superseded write, and the page says why', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&ttl=30&pause.A=5,26&step=99999');
  // A wakes at 31, just after B got 34 at 30 but before B writes at 35: storage has not seen 34.
  assert.equal(await text(page, 'balance'), '80');
  const rows = page.getByTestId('ledger-row');
  assert.match(await rows.nth(0).innerText(), /A\s+33\s+−10\s+accepted/);
  assert.match(await rows.nth(1).innerText(), /B\s+34\s+−10\s+accepted/);
  assert.match(await text(page, 'summary-on'), /double charge: job ran twice — A's 33 landed from a superseded lease/);
  assert.equal(await page.locator('svg.timeline.main g.ev.write.late').count(), 1);
  // Step back to A's write: the narration and the Say line explain the gap fencing leaves.
  const step = Number(await page.locator('svg.timeline.main g.ev.write.late').getAttribute('data-step'));
  const [, len] = await position(page);
  await page.locator('body').click({ position: { x: 5, y: 700 } });
  for (let i = step; i < len; i++) await page.keyboard.press('ArrowLeft');
  assert.equal((await position(page))[0], step);
  assert.match(await text(page, 'narration'), /B has already been granted token 34, but storage has not seen it yet, so 33 passes the check/);
  assert.match(await text(page, 'talking-point'), /only once storage has seen 34.*handoff barrier/);
  await screenshot(page, 'late-write-strict.png');
  await context.close();
});
