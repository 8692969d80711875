// One browser test per deck scenario: open its shareable URL at the last step and check the
// outcome the page shows (balance, the decisive marker) against what the core promises.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, text, position } from './session.js';
import { deck, POLICIES } from './deck-data.js';

const open = session();

// [id, { policy: expected value }, { policy: data-result codes that must appear on the
// timeline }, { policy: steps }], from the core's own `deck --json`: no copy of the outcome
// table here.
const DECK = deck.entries.map((e) => [
  e.id,
  Object.fromEntries(POLICIES.map((p) => [p, e.runs[p].value])),
  Object.fromEntries(POLICIES.map((p) => [p, e.runs[p].codes])),
  Object.fromEntries(POLICIES.map((p) => [p, e.runs[p].steps])),
]);

for (const [id, balances, markers, steps] of DECK) {
  test(`deck: ${id}`, async () => {
    for (const [policy, balance] of Object.entries(balances)) {
      const { page, context } = await open(`#s=${id}&fence=${policy}&step=99999`);
      assert.equal(await page.getByLabel('Scenario').inputValue(), id);
      assert.equal(await page.getByLabel('Fencing').inputValue(), policy);
      const [at, len] = await position(page);
      assert.equal(at, len, `${id} opens at its last step`);
      // The page counts the core's steps: a run of identical events is one step here too.
      assert.equal(len, steps[policy], `${id} under ${policy}: steps`);
      assert.equal(await text(page, 'balance'), balance, `${id} under ${policy}`);
      assert.ok((await text(page, 'question')).length > 10, 'the interview question is shown');
      assert.ok((await text(page, 'narration')).length > 10);
      for (const code of markers[policy] ?? []) {
        const n = await page.locator(`svg.timeline.main g.ev[data-result="${code}"]`).count();
        assert.ok(n > 0, `${id}/${policy}: a ${code} marker is on the timeline`);
      }
      if (id === 'uuid-token') {
        // No stale_fence anywhere: the superseded write passed the comparison.
        assert.equal(await page.locator('svg.timeline.main g.ev[data-result="stale_fence"]').count(), 0);
        if (policy !== 'off') {
          assert.match(await text(page, 'summary-on'), /A's 842162 landed from a superseded lease, by luck of the draw \(842162 > 103985\)/);
          assert.equal(await text(page, 'last-fence'), '842162');
        }
        await page.getByTestId('whatif').locator('summary').click();
        assert.equal(await page.getByLabel('Tokens from').inputValue(), 'random');
        if (policy === 'strict') {
          // What if… tokens from a counter again: the same schedule refuses A's 33.
          await page.getByLabel('Tokens from').selectOption('same_redis');
          await page.waitForFunction(() => location.hash.includes('tokens=same_redis'));
          assert.match(await text(page, 'summary-on'), /A's 33 refused: stale_fence; last fence 34/);
        }
      }
      if (id === 'claim-row') {
        const summary = policy === 'off' ? 'summary-off' : 'summary-on';
        const provider = policy === 'off' ? /the provider charged once; 1 call deduped by its idempotency key/ : /A's 33 refused: stale_fence; last fence 34; the provider charged once/;
        assert.match(await text(page, summary), provider);
        assert.equal(await page.locator('svg.timeline.main g.ev[data-result="deduped"]').count(), policy === 'off' ? 1 : 0);
      }
      if (id === 'lock-delay') {
        assert.match(await text(page, 'summary-off'), /double charge: job ran twice — A's 33 landed from a superseded lease/);
        // Step back to B's refusal at t=30: the lock-delay, not a live lease, refuses it.
        const back = await open(`#s=${id}&fence=${policy}&step=6`);
        assert.deepEqual((await position(back.page))[0], 6);
        assert.match(await text(back.page, 'narration'), /lock-delay keeps acct:1 from everyone until t=50/);
        await back.context.close();
      }
      if (id === 'efficiency') {
        assert.match(await text(page, 'summary-off'), /wasted work, no harm: job ran twice — A's 33 landed from a superseded lease/);
        if (policy === 'off') {
          // Step back to A's late rebuild: it lands, and rewrites the value already there.
          const back = await open(`#s=${id}&fence=off&step=11`);
          assert.deepEqual((await position(back.page))[0], 11);
          assert.match(await text(back.page, 'narration'), /wrote the value the row already held: wasted work, no harm/);
          await back.context.close();
        }
      }
      if (id === 'drift-margin') {
        // Step back to A's deadline check: its slow clock reads 28 ms, past 22, so it stops;
        // without the margin it would have written.
        const back = await open(`#s=${id}&fence=${policy}&step=8`);
        assert.deepEqual((await position(back.page))[0], 8);
        assert.match(await text(back.page, 'narration'), /running 20% slow, reads 28 ms since its lease began \(36 ms on the lock server's clock\).*without the margin/);
        assert.match(await text(back.page, 'talking-point'), /exaggerated for visibility/);
        await back.context.close();
        if (policy === 'off') {
          // What if… no margin: A's slow clock lets it debit after its lease ran out.
          const bare = await open(`#s=${id}&fence=off&margin=0&step=99999`);
          assert.equal(await text(bare.page, 'balance'), '80');
          await bare.context.close();
          const bad = await open(`#s=${id}&drift=fast`);
          assert.match(await text(bad.page, 'error'), /Client clock drift must be between 0 per mille and 900 per mille \(“fast” is not a whole number\)/);
          await bad.context.close();
        }
      }
      if (id === 'sequencer') {
        await page.getByTestId('whatif').locator('summary').click();
        assert.equal(await page.getByLabel('Storage checks').inputValue(), 'sequencer');
        assert.match(await text(page, 'summary-off'), /double charge: job ran twice — A's 33 landed from a superseded lease/);
        if (policy !== 'off') {
          assert.match(await text(page, 'summary-on'), /A's 33 refused: stale_sequencer; last fence 34/);
          // Step back to A's debit at t=45: refused, though storage has seen no token yet.
          const back = await open(`#s=${id}&fence=${policy}&step=9`);
          assert.deepEqual((await position(back.page))[0], 9);
          const words = await text(back.page, 'narration');
          assert.match(words, /passes the fencing rule \(storage has seen no token yet\)/);
          assert.match(words, /B holds it now, with token 34\. Rejected: stale_sequencer/);
          await back.context.close();
        }
        if (policy === 'strict') {
          // What if… storage checks only the highest token: the same schedule lets A's 33 in.
          const plain = await open(`#s=${id}&fence=strict&step=99999`);
          await plain.page.getByTestId('whatif').locator('summary').click();
          await plain.page.getByLabel('Storage checks').selectOption('highest');
          await plain.page.waitForFunction(() => location.hash.includes('check=highest'));
          assert.equal(await text(plain.page, 'balance'), '80');
          assert.match(await text(plain.page, 'summary-on'), /double charge: job ran twice — A's 33 landed from a superseded lease/);
          await plain.context.close();
        }
        if (policy === 'off') {
          const bad = await open(`#s=${id}&check=chubby`);
          assert.match(await text(bad.page, 'error'), /check must be highest, sequencer or read_then_write, not “chubby”/);
          await bad.context.close();
        }
      }
      if (id === 'partition') {
        // The window is drawn on A's lane, and no pause anywhere.
        const cut = page.locator('svg.timeline.main g.cut');
        assert.equal(await cut.count(), 1);
        assert.equal(await cut.locator('text.cut-label').textContent(), 'cut off from lock service');
        assert.match(await cut.locator('title').textContent(), /A cut off from the lock service \(not from storage\), t=15 to t=65/);
        assert.equal(await page.locator('svg.timeline.main .pause').count(), 0);
        // Step 12: A's client gives up on its renewal at t=50, after its write.
        const learned = await open(`#s=${id}&fence=${policy}&step=12`);
        assert.match(await text(learned.page, 'narration'), /^t=50 ms — A's client gives up on the renewal it sent at t=20: no reply in 30 ms\./);
        assert.match(await text(learned.page, 'narration'), /Too late for its write, sent at t=48 after the lease went to B: a self-cancel cannot call it back\./);
        await learned.context.close();
        if (policy === 'off') {
          assert.match(await text(page, 'summary-off'), /double charge: job ran twice — A's 33 landed from a superseded lease, after 34/);
          // Edited in the link: a 10 ms timeout gives up at t=30, before A writes: 90 unfenced.
          const quick = await open(`#s=${id}&fence=off&locktimeout.A=10&step=99999`);
          assert.equal(await text(quick.page, 'balance'), '90');
          assert.equal(await quick.page.locator('svg.timeline.main g.ev[data-result="stale_fence"]').count(), 0);
          await quick.context.close();
          // Edited: the partition later (25 to 55): the t=20 renewal gets through, and the
          // lease now runs until t=50, past A's debit at 48: one charge, nobody refused.
          const late = await open(`#s=${id}&fence=off&partition.A=25,30&step=99999`);
          assert.equal(await text(late.page, 'balance'), '90');
          assert.match(await late.page.locator('svg.timeline.main g.cut title').textContent(), /t=25 to t=55/);
          await late.context.close();
          const bad = await open(`#s=${id}&partition.A=90,20`);
          assert.match(await text(bad.page, 'error'), /A's partition must end by t=100 ms/);
          await bad.context.close();
        }
      }
      if (id === 'row-lock') {
        // No token anywhere, and the same words whatever the policy.
        assert.equal(await page.locator('svg.timeline.main g.ev[data-result="stale_fence"]').count(), 0);
        assert.match(await text(page, 'summary-off'), /A's UPDATE failed: session_ended \(25P03\)/);
        assert.match(await text(page, 'summary-on'), /A's UPDATE failed: session_ended \(25P03\)/);
        assert.equal(await text(page, 'last-fence'), 'none');
        assert.match(await text(page, 'narration'), /terminated that session at t=30: FATAL 25P03/);
        // Step back to B's grant at t=30: it waited 10 ms in the lock queue.
        const back = await open(`#s=${id}&fence=${policy}&step=6`);
        assert.deepEqual((await position(back.page))[0], 6);
        assert.match(await text(back.page, 'narration'), /B's SELECT … FOR UPDATE returns after waiting 10 ms/);
        assert.match(await text(back.page, 'holder'), /^B \(row lock; idle timeout at 60 ms\)$/);
        await back.context.close();
      }
      if (id === 'renewal') {
        // The chart opens with the notes (n): alone it would cover the story.
        assert.equal(await page.getByTestId('herd').count(), 0);
        await page.keyboard.press('n');
        assert.match(await text(page, 'herd-caption'), /1000 holders/);
        // Folded so the page fits a projector; one click on its summary opens the chart.
        await page.getByTestId('herd').locator('summary').click();
        assert.ok(await page.locator('.herd-chart rect.herd-bar.fixed').first().isVisible());
      }
      if (id === 'lock-queue') {
        // Two waiters queued (no lock_held refusals: nobody polls).
        assert.equal(await page.locator('svg.timeline.main g.ev[data-result="lock_wait"]').count(), 2);
        assert.equal(await page.locator('svg.timeline.main g.ev[data-result="lock_held"]').count(), 0);
      }
      if (id === 'raft-partition') {
        // Step back to A's renewal at t=20: the minority member answers no leader, and the
        // client learns at its lease deadline (etcd's keep-alive), not at its own timeout.
        const back = await open(`#s=${id}&fence=${policy}&step=5`);
        assert.match(await text(back.page, 'narration'), /minority side until t=65: it has no leader to pass it to, so it answers "etcdserver: no leader"/);
        assert.match(await text(back.page, 'narration'), /by t=40, its lease deadline/);
        await back.context.close();
      }
      if (id === 'redis-restart') {
        // The marker says what happened to the one Redis: a restart, not a failover.
        const marker = page.locator('svg.timeline.main g.ev[data-result="failover"]');
        assert.match(await marker.locator('title').textContent(), /killed \(kill -9\) and restarts from its last snapshot/);
        assert.doesNotMatch(await text(page, 'narration'), /promoted|replica/);
      }
      if (id === 'cross-region') {
        assert.match(await text(page, 'summary-on'), /A's 33 landed from a superseded lease/);
        if (policy === 'strict') {
          // What if… one region: the round trip to 0, and the fence refuses A again.
          await page.getByTestId('whatif').locator('summary').click();
          const rtt = page.getByLabel('Lock service round trip (ms)');
          assert.equal(await rtt.inputValue(), '20');
          await rtt.fill('0');
          await rtt.press('Enter');
          await page.waitForFunction(() => location.hash.includes('rtt=0'));
          assert.match(await text(page, 'summary-on'), /A's 33 refused: stale_fence; last fence 34/);
        }
      }
      if (id === 'renewal-herd') {
        // Its own herd: the seed's 10,000 holders, all in one millisecond on a fixed schedule.
        await page.keyboard.press('n');
        assert.match(await text(page, 'herd-caption'), /^10000 holders .* the fixed schedule peaks at 10000 renewals per /);
        assert.match(await text(page, 'question'), /Ten thousand jobs renew their leases on one schedule/);
        await page.getByTestId('herd').locator('summary').click();
        assert.ok(await page.locator('.herd-chart rect.herd-bar.jittered').first().isVisible());
      }
      if (policy === 'strict' || policy === Object.keys(balances).at(-1)) await screenshot(page, `deck-${id}-${policy}.png`);
      await context.close();
    }
  });
}

test('what if… storage checks the sequencer: the pause that ends at t=31 on the headline, 80 then 90', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&ttl=30&pause.A=5,26&step=99999');
  assert.equal(await text(page, 'balance'), '80');
  assert.match(await text(page, 'summary-on'), /double charge: job ran twice — A's 33 landed from a superseded lease/);
  await page.getByTestId('whatif').locator('summary').click();
  assert.equal(await page.getByLabel('Storage checks').inputValue(), 'highest');
  await page.getByLabel('Storage checks').selectOption('sequencer');
  await page.waitForFunction(() => location.hash.includes('check=sequencer'));
  assert.equal(await text(page, 'balance'), '90');
  assert.match(await text(page, 'summary-on'), /A's 33 refused: stale_sequencer; last fence 34/);
  assert.ok(await page.locator('svg.timeline.main g.ev[data-result="stale_sequencer"]').count() > 0);
  // The link keeps it: reopened, the page shows the same run.
  const hash = await page.evaluate(() => location.hash);
  const again = await open(hash);
  assert.equal(await text(again.page, 'balance'), '90');
  await again.page.getByTestId('whatif').locator('summary').click();
  assert.equal(await again.page.getByLabel('Storage checks').inputValue(), 'sequencer');
  await again.context.close();
  await context.close();
});

test('the scenario picker loads each entry at step 0', async () => {
  const { page, context } = await open();
  // Every deck entry has its browser test above: the picker offers exactly these, and
  // last, the way to a recording from real servers.
  const offered = await page.getByLabel('Scenario').locator('option').evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(offered, [...DECK.map(([id]) => id), 'recording']);
  for (const [id] of DECK) {
    await page.getByLabel('Scenario').selectOption(id);
    assert.deepEqual((await position(page))[0], 0);
    await page.waitForFunction((want) => location.hash.startsWith(`#s=${want}&`), id);
  }
  await context.close();
});

test('the deck past the headline is fetched when another entry is first picked; if it cannot be, the page says so and stays', async () => {
  const { page, context, problems } = await open('');
  // The other entries' builders and notes are a wasm chunk of their own.
  const chunks = () =>
    page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => /split_deck_entries-/.test(n)));
  assert.deepEqual(await chunks(), [], 'the deck is not fetched when the headline opens');
  await page.route('**/split_deck_entries-*.wasm', (route) => route.abort());
  await page.getByLabel('Scenario').selectOption('toctou');
  const error = page.getByTestId('error');
  await error.waitFor();
  assert.match(await error.innerText(), /other scenarios could not be fetched/);
  assert.equal(await page.getByLabel('Scenario').inputValue(), 'gc-pause', 'the picker shows what is on screen');
  assert.match(await text(page, 'question'), /holder stalls longer than the TTL/);
  for (const e of problems.errors.splice(0)) assert.match(e, /ERR_FAILED|Failed to fetch/);
  await page.getByRole('button', { name: 'Dismiss' }).click();
  await page.unroute('**/split_deck_entries-*.wasm');
  await page.getByLabel('Scenario').selectOption('toctou');
  await page.waitForFunction(() => location.hash.includes('s=toctou'));
  assert.equal(await page.getByLabel('Scenario').inputValue(), 'toctou');
  // Resource timing lists the aborted fetch too.
  const fetches = (await chunks()).length;
  assert.equal(fetches, 2, 'fetched again once it was needed');
  // Once in, every entry is: the next pick fetches nothing.
  await page.getByLabel('Scenario').selectOption('row-lock');
  await page.waitForFunction(() => location.hash.includes('s=row-lock'));
  assert.equal((await chunks()).length, fetches);
  await context.close();
});
