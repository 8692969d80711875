// The story's far words (a renewal, a request on its way, the lock's faults, a client cut
// off: core::story::far) are a chunk of their own. The headline opens without them; a run
// that needs them is drawn with every sentence, whichever way it comes: a link, a What if…,
// or after the deck (whose chunk brings them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { session } from './session.js';

const open = session();

// The headline with a Redis failover while A holds the lease: a far topic (Fault).
const LINK = '#s=gc-pause&fence=off&failover=20&step=99999';

/** Every marker's narration (its tooltip), in timeline order. */
const narrations = (page) => page.locator('svg.timeline.main g.ev > title').allTextContents();

/** The chunks the page has fetched so far. */
const chunks = (page) =>
  page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .map((e) => e.name.split('/').pop())
      .filter((n) => /^(split_|chunk-)/.test(n)),
  );

/** Each narration says something after its time stamp ("t=20 ms — …"). */
function allWorded(said) {
  assert.ok(said.length > 5, `markers: ${said.length}`);
  for (const s of said) assert.match(s, /^t=[^—]+ — \S/, `a sentence with no words: ${JSON.stringify(s)}`);
}

test('a link to the headline with a failover fetches the far words first, and every step is worded', async () => {
  const { page, context, problems } = await open(LINK);
  const direct = await narrations(page);
  allWorded(direct);
  assert.ok((await chunks(page)).some((n) => n.startsWith('split_far_words-')), `${await chunks(page)}`);
  assert.ok(!(await chunks(page)).some((n) => n.startsWith('split_deck_entries-')), 'the deck is not needed');
  assert.deepEqual(problems.errors, []);
  await context.close();

  // The same run, reached after a deck entry brought the far words with the deck.
  const other = await open('#s=redis-failover&fence=off&step=99999');
  await other.page.evaluate((h) => {
    location.hash = h;
  }, LINK);
  await other.page.waitForFunction(() => /^#s=gc-pause&/.test(location.hash));
  await other.page.waitForFunction((n) => document.querySelectorAll('svg.timeline.main g.ev').length === n, direct.length);
  assert.deepEqual(await narrations(other.page), direct);
  assert.ok(!(await chunks(other.page)).some((n) => n.startsWith('split_far_words-')), 'the deck brought them');
  await other.context.close();
});

test('What if… a failover on the headline: the run is drawn with its far words', async () => {
  const { page, context, problems } = await open('#s=gc-pause&fence=off&step=99999');
  assert.deepEqual(await chunks(page), []);
  await page.getByText('What if…').click();
  await page.getByLabel('Fault to add').selectOption({ label: 'Lock failover' });
  await page.getByRole('button', { name: 'Add fault' }).click();
  const at = page.getByLabel('Lock failover at (ms)');
  await at.fill('20');
  await at.press('Enter');
  await page.waitForFunction(() => /faults=(?:[^&]*,)?failover\.20\b/.test(location.hash));
  await page.waitForFunction(() =>
    [...document.querySelectorAll('svg.timeline.main g.ev > title')].some((t) => /^t=20 ms/.test(t.textContent)),
  );
  const said = await narrations(page);
  allWorded(said);
  assert.ok((await chunks(page)).some((n) => n.startsWith('split_far_words-')), `${await chunks(page)}`);
  assert.deepEqual(problems.errors, []);
  await context.close();
});
