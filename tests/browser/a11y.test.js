// Accessibility: axe-core finds no violation on any deck scenario at its last step (every
// marker, label and ledger row the run draws), light and dark, nor at the headline's first
// step; the narration is a live region; the page works by keyboard alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { session, text, position, follow } from './session.js';
import { deck } from './deck-data.js';

const open = session();
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's rules on the page as it stands. The engine is put in the page once (over the
 * DevTools protocol, as a test's evaluate is, so the page's policy does not apply) and stays
 * across hash changes, so a check costs its rules alone: 0.13 s, against 0.9 s through
 * @axe-core/playwright's builder, which injects the engine again on every call (measured).
 */
async function axe(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  return page.evaluate(() => window.axe.run(document));
}

test('axe: zero violations on every scenario at its last step and the headline at its first, light and dark', async () => {
  const { page, context } = await open();
  const ids = await page.getByLabel('Scenario').locator('option').evaluateAll((os) => os.map((o) => o.value).filter((v) => v !== 'recording'));
  await context.close();
  assert.deepEqual(ids, deck.entries.map((e) => e.id));
  const runs = [];
  // One page a colour scheme, the two side by side (a core each); each run is reached through
  // the shareable hash, as a link would reach it.
  await Promise.all(['light', 'dark'].map(async (colorScheme) => {
    const app = await open('', { colorScheme });
    // What if… open, so its controls (drawn only once it is opened) are checked too.
    await app.page.getByTestId('whatif').locator('summary').click();
    await app.page.getByLabel('Add a client').waitFor();
    for (const id of ids) {
      for (const step of id === ids[0] ? [0, 99999] : [99999]) {
        await follow(app.page, `#s=${id}&step=${step}`);
        const result = await axe(app.page);
        const found = result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
        assert.deepEqual(found, [], `${colorScheme} ${id} step ${step}`);
        runs.push(result.passes.length);
      }
    }
    await app.context.close();
  }));
  assert.equal(runs.length, (deck.entries.length + 1) * 2, 'every entry at its last step and the headline at its first, light and dark');
  assert.ok(runs.every((n) => n > 10), 'axe really ran its rules on every page');
});

test('narration is a polite live region, so a screen reader speaks each step', async () => {
  const { page, context } = await open();
  const live = page.locator('[aria-live="polite"]');
  assert.equal(await live.count(), 1);
  assert.equal(await live.getByTestId('narration').count(), 1);
  await context.close();
});

test('keyboard only: Tab reaches the controls with a visible focus ring, Enter operates them', async () => {
  const { page, context } = await open();
  const seen = new Set();
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    const focus = await page.evaluate(() => {
      const el = document.activeElement;
      const style = getComputedStyle(el);
      return { name: el.getAttribute('aria-label') || el.id || el.textContent.trim(), outline: style.outlineStyle, width: parseFloat(style.outlineWidth) };
    });
    if (focus.name) seen.add(focus.name);
    assert.ok(focus.outline !== 'none' && focus.width >= 2, `${focus.name} shows a focus ring (${focus.outline} ${focus.width}px)`);
    if (focus.name.startsWith('Step forward')) break;
  }
  for (const want of ['scenario', 'fencing', 'Reset', 'Play']) {
    assert.ok([...seen].some((s) => s.startsWith(want)), `Tab reaches ${want}: ${[...seen].join(' | ')}`);
  }
  const [before] = await position(page);
  await page.keyboard.press('Enter');
  assert.equal((await position(page))[0], before + 1, 'Enter on Step forward steps');
  assert.match(await text(page, 'narration'), /^t=0 ms — A runs the acquire script/);
  await context.close();
});
