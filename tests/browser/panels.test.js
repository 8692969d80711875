// The page's panels and menus behave as a presenter expects of any slide tool: a drawer
// opened before presenter mode never reaches the shared screen, Esc closes the top thing
// open before it leaves presenter mode, a drawer never covers the buttons that close it,
// Export… closes like a menu, the rehearsal's Play plays with the balance in sight, and the
// keys sheet scrolls instead of ending on a cut row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { screenshot } from './harness.js';
import { session, position } from './session.js';
import { deck } from './deck-data.js';

const open = session();
const SCREENS = [[1280, 720], [1024, 768]];
/** Fails fast where the old page left a button under a drawer (a click there waits in vain). */
const QUICK = { timeout: 3000 };

/** Whether the element `q` is on screen and on top at its middle (nothing drawn over it). */
const onTop = (page, q) => page.evaluate((sel) => {
  const el = document.querySelector(sel);
  if (!el) return false;
  const b = el.getBoundingClientRect();
  const hit = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
  return b.width > 0 && b.bottom <= innerHeight && !!hit && el.contains(hit);
}, q);

const presenting = (page, on) => page.waitForFunction(
  (want) => document.querySelector('main.app').classList.contains('presenting') === want, on);

for (const [width, height] of SCREENS) {
  test(`${width}x${height}: a drawer opened before p is not on the shared screen; Esc then leaves presenter mode`, async () => {
    const { page, context } = await open('#s=gc-pause&fence=off&step=3', { viewport: { width, height } });
    await page.getByRole('button', { name: 'Explore' }).click();
    const explorer = page.getByTestId('explorer');
    await explorer.waitFor();
    await page.keyboard.press('n');
    await page.getByTestId('notes').waitFor();
    await page.keyboard.press('p');
    await presenting(page, true);
    await page.waitForTimeout(200);
    await screenshot(page, `panels-drawer-then-p-${width}.png`);
    assert.equal(await explorer.isVisible(), false, 'the explorer is not on the shared screen');
    assert.equal(await page.getByTestId('notes').isVisible(), false, 'nor the notes');
    for (const q of ['[data-testid=narration]', '[data-testid=clock]', '[data-testid=balance]', '[data-testid=summary-on]']) {
      assert.ok(await onTop(page, q), `${q} is in sight while presenting`);
    }
    // Nothing is open on the shared screen: the first Esc leaves presenter mode.
    await page.keyboard.press('Escape');
    await presenting(page, false);
    // The drawers are back as they were, for the presenter's own screen.
    await explorer.waitFor();
    await context.close();
  });

  test(`${width}x${height}: the drawers end above the tools row; their buttons close them, and so does Esc`, async () => {
    const { page, context } = await open('#s=gc-pause&fence=off&step=6', { viewport: { width, height } });
    const notesButton = page.getByRole('button', { name: 'Notes' });
    const exploreButton = page.getByRole('button', { name: 'Explore' });
    await notesButton.click();
    await page.getByTestId('notes').waitFor();
    await exploreButton.click();
    const explorer = page.getByTestId('explorer');
    await explorer.waitFor();
    await page.waitForFunction(() => /(\d+) \/ \1 schedules/.test(document.querySelector('[data-testid=explore-status]')?.textContent ?? ''), null, { timeout: 60_000 });
    await screenshot(page, `panels-drawers-${width}.png`);
    for (const name of ['Notes', 'Explore', 'Reveal', 'Rehearse', 'Present', 'Fork']) {
      const box = await page.getByRole('button', { name, exact: true }).boundingBox();
      const free = await page.evaluate(({ x, y, n }) => document.elementFromPoint(x, y)?.closest('button')?.textContent.trim() === n,
        { x: box.x + box.width / 2, y: box.y + box.height / 2, n: name });
      assert.ok(free, `${name} is not under a drawer`);
    }
    // The explorer's table keeps to the drawer: every column, headers included, in sight.
    const fit = await page.evaluate(() => {
      const section = document.querySelector('[data-testid=explorer]').getBoundingClientRect();
      const cells = [...document.querySelectorAll('[data-testid=explorer] th, [data-testid=explorer] td')];
      return { right: section.right, widest: Math.max(...cells.map((c) => c.getBoundingClientRect().right)), heads: cells.filter((c) => c.tagName === 'TH').map((c) => c.textContent) };
    });
    assert.ok(fit.heads.includes('two believe they hold it'), fit.heads.join(' | '));
    assert.ok(fit.widest <= fit.right + 0.5, `the table runs to ${fit.widest}, past the drawer's ${fit.right}`);
    // Its own button closes each drawer.
    await exploreButton.click(QUICK);
    await explorer.waitFor({ state: 'detached' });
    await notesButton.click(QUICK);
    await page.getByTestId('notes').waitFor({ state: 'detached' });
    // Esc closes one drawer a press, and leaves the step where it was.
    await page.keyboard.press('n');
    await exploreButton.click();
    await explorer.waitFor();
    await page.keyboard.press('Escape');
    await explorer.waitFor({ state: 'detached' });
    assert.ok(await page.getByTestId('notes').isVisible(), 'one Esc closes one drawer');
    await page.keyboard.press('Escape');
    await page.getByTestId('notes').waitFor({ state: 'detached' });
    assert.equal((await position(page))[0], 6);
    await context.close();
  });
}

test('Export… closes after an action, on Esc and on a click outside it', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=3');
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const menu = page.locator('details.export-menu');
  const isOpen = () => menu.evaluate((d) => d.open);
  const summary = page.getByText('Export…');
  await summary.click();
  await page.getByRole('button', { name: 'Copy embed code' }).click();
  await page.getByTestId('tool-status').getByRole('textbox', { name: 'Embed code' }).waitFor();
  assert.equal(await isOpen(), false, 'closed after Copy embed code');
  await page.keyboard.press('ArrowRight');
  assert.equal(await isOpen(), false, 'and still closed after a step');
  await screenshot(page, 'panels-export-after-copy-1280.png');
  await summary.click();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'SVG', exact: true }).click()]);
  assert.equal(download.suggestedFilename(), 'fencing-lab-gc-pause.svg');
  assert.equal(await isOpen(), false, 'closed after SVG');
  await summary.click();
  assert.equal(await isOpen(), true);
  await page.keyboard.press('Escape');
  assert.equal(await isOpen(), false, 'Esc closes it');
  await summary.click();
  await page.getByTestId('narration').click();
  assert.equal(await isOpen(), false, 'a click outside closes it');
  // What if… closes on Esc too.
  await page.locator('details.whatif summary').click();
  const whatIfOpen = () => page.locator('details.whatif').evaluate((d) => d.open);
  assert.equal(await whatIfOpen(), true);
  await page.keyboard.press('Escape');
  assert.equal(await whatIfOpen(), false, 'Esc closes What if…');
  // Its own controls that are not actions (the Animation's size) leave it open.
  await summary.click();
  await page.getByLabel('Animation size').selectOption({ label: '1280×720' });
  assert.equal(await isOpen(), true, 'picking a size is not an action');
  await context.close();
});

for (const [width, height] of SCREENS) {
  test(`${width}x${height}: rehearse's Play the run plays it, with the balance, the write log and the cards in sight`, async () => {
    const { off, strict } = deck.entries.find((e) => e.id === 'gc-pause').runs;
    const { page, context } = await open('#s=gc-pause', { viewport: { width, height } });
    await page.getByRole('button', { name: 'Rehearse', exact: true }).click();
    await page.getByRole('button', { name: 'Start with the headline' }).click();
    await page.getByRole('button', { name: "I've answered: predict" }).click();
    await page.getByLabel('With fencing off, the balance ends at').selectOption(off.value);
    await page.getByLabel('With fencing on (strict), the balance ends at').selectOption(strict.value);
    await page.getByRole('button', { name: 'Play the run' }).click();
    await page.getByTestId('mark-off').waitFor();
    for (const q of ['.metrics', '[data-testid=balance]', '[data-testid=last-fence]', '.log-scroll', '[data-testid=summary-off]', '[data-testid=summary-on]', '[data-testid=clock]', 'svg.timeline.main']) {
      assert.ok(await onTop(page, q), `${q} is in sight while the run is watched`);
    }
    // The run plays by itself: no key pressed, no Next step.
    await page.waitForFunction(() => /step [1-9]\d* \//.test(document.querySelector('[data-testid=clock]').textContent), null, { timeout: 5000 });
    await screenshot(page, `panels-rehearse-watch-${width}.png`);
    // It plays to its end (faster: the page's own Speed), where the off prediction is marked.
    await page.getByLabel('Speed').selectOption('400');
    await page.waitForFunction(() => { const m = document.querySelector('[data-testid=clock]').textContent.match(/step (\d+) \/ (\d+)/); return m[1] === m[2]; }, null, { timeout: 30_000 });
    assert.notEqual(await page.getByTestId('mark-off').getAttribute('class'), 'pending');
    await screenshot(page, `panels-rehearse-end-${width}.png`);
    await context.close();
  });
}

test('1280x720 presenting: the keys sheet ends in the window and scrolls to its last row', async () => {
  const { page, context } = await open('#s=gc-pause&step=4');
  await page.keyboard.press('p');
  await presenting(page, true);
  await page.keyboard.press('?');
  const sheet = page.getByRole('dialog', { name: 'Keys' });
  await sheet.waitFor();
  const body = page.getByRole('region', { name: 'All the keys' });
  const m = await body.evaluate((el) => {
    const b = el.getBoundingClientRect();
    const sheetBox = el.closest('.sheet').getBoundingClientRect();
    return { bottom: b.bottom, sheetBottom: sheetBox.bottom, scrolls: el.scrollHeight > el.clientHeight, overflowY: getComputedStyle(el).overflowY };
  });
  assert.ok(m.sheetBottom <= 720, `the sheet ends at ${m.sheetBottom}`);
  assert.equal(m.overflowY, 'auto');
  await screenshot(page, 'panels-keys-1280-present.png');
  // Scrolled to its end, the last row is whole and in the window.
  await body.evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await page.waitForTimeout(100);
  const last = await body.evaluate((el) => {
    const row = el.querySelector('tr:last-child').getBoundingClientRect();
    return { rowBottom: row.bottom, bodyBottom: el.getBoundingClientRect().bottom };
  });
  assert.ok(last.rowBottom <= last.bodyBottom + 0.5, `the last row ends at ${last.rowBottom}, under the sheet's ${last.bodyBottom}`);
  await screenshot(page, 'panels-keys-1280-present-end.png');
  await page.keyboard.press('Escape');
  await sheet.waitFor({ state: 'detached' });
  assert.ok(await page.locator('main.app.presenting').count(), 'Esc closed the sheet, not presenter mode');
  console.log(`keys sheet: ${m.scrolls ? 'scrolls' : 'fits'}`);
  await context.close();
});

test('axe: no violation with the drawers, the Export… menu and the keys sheet open', async () => {
  const { page, context } = await open('#s=gc-pause&fence=off&step=6', { viewport: { width: 1024, height: 768 } });
  await page.keyboard.press('n');
  await page.getByRole('button', { name: 'Explore' }).click();
  await page.getByTestId('explorer').waitFor();
  await page.getByText('Export…').click();
  await page.getByRole('button', { name: 'Copy embed code' }).waitFor();
  await page.keyboard.press('?');
  await page.getByRole('region', { name: 'All the keys' }).waitFor();
  await page.evaluate(readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'));
  const { violations, passes } = await page.evaluate(() => window.axe.run(document));
  assert.deepEqual(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' ')}`), []);
  assert.ok(passes.length > 10, 'axe ran its rules');
  await context.close();
});
