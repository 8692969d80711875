// Around the deck: shareable URL, fork, export, presenter mode and notes, the explorer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { screenshot } from './harness.js';
import { session, text, position, stepToEnd } from './session.js';

const open = session();

test('the URL hash restores scenario, parameters, policy and step exactly', async () => {
  const { page, context } = await open('#s=gc-pause&fence=off&ttl=30&pause.A=5,50&step=4');
  assert.equal(await page.getByLabel('Fencing').inputValue(), 'off');
  assert.deepEqual((await position(page))[0], 4);
  assert.equal(await page.getByLabel('A pause start (ms)').inputValue(), '5');
  // Every change is written back, so the address bar can be copied at any moment.
  await page.getByRole('button', { name: 'Step forward' }).click();
  // Written shortly after the last change (drags would otherwise flood the history API).
  await page.waitForFunction(() => location.hash === '#s=gc-pause&fence=off&ttl=30&pause.A=5,50&step=5');
  await stepToEnd(page);
  await page.waitForFunction(() => /step=12$/.test(location.hash));
  const hash = await page.evaluate(() => location.hash);
  const again = await open(hash);
  assert.equal(await text(again.page, 'balance'), '80');
  assert.deepEqual(await position(again.page), await position(page));
  await again.context.close();
  // A link followed just as the page's own write falls due: the write runs between the change
  // and its event, so the bar shows the old view again. The event's link is what loads.
  await page.evaluate(() => {
    const link = `${location.href.split('#')[0]}#s=gc-pause&fence=off&ttl=30&pause.A=5,50&step=2`;
    window.dispatchEvent(new HashChangeEvent('hashchange', { oldURL: location.href, newURL: link }));
  });
  await page.waitForFunction(() => /step=2$/.test(location.hash));
  assert.deepEqual((await position(page))[0], 2);
  await context.close();
});

test('a malformed or hostile hash gives a clear message and the default scenario', async () => {
  for (const [hash, why] of [
    ['#s=nope&step=3', /no scenario called/],
    ['#s=gc-pause&ttl=0', /Lease TTL must be between 1 ms and 10 minutes \(0 ms is too short\)/],
    ['#s=gc-pause&pause.A=90,50', /must end by/],
    ['#%3Cimg%20src=x%20onerror=alert(1)%3E', /a link cannot contain “<”/],
  ]) {
    const { page, context } = await open(hash);
    const error = page.getByTestId('error');
    await error.waitFor();
    assert.match(await error.innerText(), why, hash);
    assert.match(await error.innerText(), /; showing the headline instead\./);
    assert.equal(await page.getByLabel('Scenario').inputValue(), 'gc-pause');
    assert.equal(await text(page, 'balance'), '100');
    assert.equal(await page.locator('img').count(), 0);
    await context.close();
  }
});

test('fork: change a parameter and the fork on the timeline, the original as one row under it', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict');
  await stepToEnd(page);
  await page.getByRole('button', { name: 'Fork' }).click();
  await page.getByLabel('Fencing').selectOption('off');
  const fork = page.getByTestId('fork');
  assert.match(await fork.getByTestId('fork-original').innerText(), /fencing strict .* balance 90/);
  assert.match(await fork.getByTestId('fork-current').innerText(), /fencing off .* balance 80/);
  assert.equal(await fork.locator('svg.timeline.strip g.ev.write.rejected').count(), 1);
  assert.equal(await page.locator('svg.timeline.main g.ev.write.late').count(), 1);
  await screenshot(page, 'fork.png');
  await page.getByRole('button', { name: 'Close fork' }).click();
  assert.equal(await page.getByTestId('fork').count(), 0);
  await context.close();
});

test('export the timeline as SVG and PNG', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&ttl=30&pause.A=5,50&step=99');
  await page.getByText('Export…').click();
  const [svgDownload] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'SVG', exact: true }).click(),
  ]);
  assert.equal(svgDownload.suggestedFilename(), 'fencing-lab-gc-pause.svg');
  const svg = await readFile(await svgDownload.path(), 'utf8');
  assert.match(svg, /^<svg[^>]+xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /stale_fence/);
  assert.match(svg, /fill: rgb\(/, 'colours are inlined, not CSS variables');
  // The menu closed after SVG, as a menu does: it opens again for PNG.
  assert.equal(await page.locator('details.export-menu').evaluate((d) => d.open), false);
  await page.getByText('Export…').click();
  const [pngDownload] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'PNG', exact: true }).click(),
  ]);
  assert.equal(pngDownload.suggestedFilename(), 'fencing-lab-gc-pause.png');
  const png = await readFile(await pngDownload.path());
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(png.length > 10_000, `png is ${png.length} bytes`);
  await context.close();
});

test('presenter mode: large type, speaker notes on demand, clicker keys', async () => {
  const { page, context } = await open();
  const before = await page.getByTestId('narration').evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('p');
  const after = await page.getByTestId('narration').evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
  assert.ok(after > before, `narration grows from ${before}px to ${after}px`);
  assert.equal(await page.getByTestId('notes').count(), 0);
  // While presenting, `n` puts the notes in the speaker view, never on the shared screen.
  const [speaker] = await Promise.all([context.waitForEvent('page'), page.keyboard.press('n')]);
  assert.match(await speaker.getByTestId('notes').innerText(), /stale_fence/);
  assert.equal(await page.getByTestId('notes').count(), 0);
  await page.bringToFront();
  await page.keyboard.press('PageDown');
  await page.keyboard.press('.');
  assert.equal((await position(page))[0], 2);
  await page.keyboard.press('PageUp');
  assert.equal((await position(page))[0], 1);
  await screenshot(page, 'presenter.png');
  await context.close();
});

test('presenter mode comes with fullscreen; a quick p p leaves it as it was; leaving fullscreen ends it', async () => {
  const { page, context } = await open();
  const presenting = () => page.evaluate(() => document.querySelector('main.app').classList.contains('presenting'));
  const settles = (full, on) => page.waitForFunction(([f, p]) => !!document.fullscreenElement === f && document.querySelector('main.app').classList.contains('presenting') === p, [full, on]);
  await page.keyboard.press('p');
  await settles(true, true);
  // Pressed about as fast as fullscreen comes or goes, its changes landing among the presses
  // or after both: presenter mode ends as it began, and stays so. (Fullscreen asked for while
  // it is still going is dropped by the browser: after off-and-on it may not come back.)
  for (const on of [true, false]) {
    for (let round = 0; round < 3; round++) {
      await page.keyboard.press('p');
      await page.keyboard.press('p');
      await page.waitForTimeout(500);
      assert.equal(await presenting(), on, `presenting after p p, round ${round}`);
    }
    if (on) await page.keyboard.press('p');
    await settles(false, false);
  }
  // The viewer leaves fullscreen (the browser's own exit, as Esc), a while after the p:
  // presenter mode ends too.
  await page.keyboard.press('p');
  await settles(true, true);
  await page.waitForTimeout(1100);
  await page.evaluate(() => document.exitFullscreen());
  await settles(false, false);
  await context.close();
});

test('explorer: every policy counts superseded writes; out-of-order only off; a counterexample loads', async () => {
  const { page, context } = await open();
  await page.getByRole('button', { name: 'Explore' }).click();
  const status = page.getByTestId('explore-status');
  await page.waitForFunction(
    () => {
      const m = (document.querySelector('[data-testid=explore-status]')?.textContent ?? '').match(/(\d+) \/ (\d+)/);
      return m && m[1] === m[2];
    },
    null,
    { timeout: 60_000 },
  );
  assert.match(await status.innerText(), /^15153 \/ 15153 schedules/);
  const cell = async (policy, id) => (await page.getByTestId(`explore-${policy}`).getByTestId(id).innerText()).trim();
  const late = async (policy) => Number(await cell(policy, 'late'));
  assert.ok((await late('off')) > (await late('strict')), 'fencing off lets more superseded writes through');
  assert.ok((await late('strict')) > 0, 'strict still accepts a superseded write that arrives before the newer token');
  assert.equal(await late('same_epoch'), await late('strict'));
  assert.equal(Number(await cell('strict', 'twice')), await late('strict'));
  assert.ok(Number(await cell('off', 'order')) > 0);
  assert.match(await cell('strict', 'order'), /by rule/, 'a count fixed by the rule is not shown as a finding');
  assert.ok(Number(await cell('strict', 'two')) > 0, 'strict still has two believers');
  assert.match(await text(page, 'explore-footnote'), /before the newer token did.*handoff barrier/);
  await screenshot(page, 'explorer.png');
  await page.getByTestId('load-off-0').click();
  assert.equal(await page.getByLabel('Fencing').inputValue(), 'off');
  const [at, len] = await position(page);
  assert.equal(at, len, 'a loaded counterexample opens at its end');
  assert.equal(await page.locator('svg.timeline.main g.ev.write.late').count(), 1);
  await page.waitForFunction(() => /fence=off/.test(location.hash));
  await context.close();
});

test('redis-failover: tokens from etcd / ZooKeeper survive the failover; the hash keeps the choice', async () => {
  const { page, context } = await open('#s=redis-failover&fence=same_epoch&step=99999');
  // INCR on the same Redis: the promoted replica hands out 33 again, same-epoch admits both.
  assert.equal(await text(page, 'balance'), '80');
  assert.match(await text(page, 'summary-on'), /double charge: job ran twice/);
  await page.getByText('What if…').click();
  await page.getByLabel('Tokens from').selectOption('lock_service');
  await page.waitForFunction(() => /tokens=lock_service/.test(location.hash));
  await stepToEnd(page);
  // A linearizable store loses nothing in a leader change: B waits, finds the job done.
  assert.equal(await text(page, 'balance'), '90');
  assert.match(await text(page, 'summary-off'), /no conflict/);
  const hash = await page.evaluate(() => location.hash);
  const again = await open(hash);
  await again.page.getByText('What if…').click();
  assert.equal(await again.page.getByLabel('Tokens from').inputValue(), 'lock_service');
  assert.equal(await text(again.page, 'balance'), '90');
  await again.context.close();
  await context.close();
});

test('what if: release by compare-and-delete, no handoff barrier, no failover — from the controls and the URL', async () => {
  const { page, context } = await open('#s=unsafe-release&fence=strict&step=99999');
  assert.equal(await page.locator('svg.timeline.main g.ev[data-result="deleted_other_lease"]').count(), 1);
  await page.getByText('What if…').click();
  await page.getByLabel('Release').selectOption('cad');
  await page.waitForFunction(() => /release=cad/.test(location.hash));
  await stepToEnd(page);
  assert.equal(await page.locator('svg.timeline.main g.ev[data-result="deleted_other_lease"]').count(), 0);
  assert.match(await text(page, 'summary-on'), /no conflict/);
  await context.close();

  const bare = await open('#s=handoff-barrier&fence=same_epoch&barrier=off&step=99999');
  assert.match(await text(bare.page, 'summary-on'), /duplicate publish: job ran twice/);
  assert.equal(await bare.page.locator('svg.timeline.main g.ev.write.late').count(), 1);
  await bare.page.getByText('What if…').click();
  await bare.page.getByLabel('Handoff barrier').check();
  await bare.page.waitForFunction(() => !/barrier=off/.test(location.hash));
  await stepToEnd(bare.page);
  assert.match(await text(bare.page, 'summary-on'), /refused: stale_fence/);
  await bare.context.close();

  const calm = await open('#s=redis-failover&fence=same_epoch&step=99999');
  await calm.page.getByText('What if…').click();
  const at = calm.page.getByLabel('Lock failover at (ms)');
  assert.equal(await at.inputValue(), '5');
  await calm.page.getByRole('button', { name: 'Remove Lock failover' }).click();
  await calm.page.waitForFunction(() => /faults=none/.test(location.hash));
  assert.equal(await at.count(), 0, 'the row is gone');
  await stepToEnd(calm.page);
  assert.equal(await text(calm.page, 'balance'), '90');
  // Added back from the list of kinds, halfway along the timeline.
  await calm.page.getByLabel('Fault to add').selectOption({ label: 'Lock failover' });
  await calm.page.getByRole('button', { name: 'Add fault' }).click();
  await calm.page.waitForFunction(() => /faults=failover\.30\.cut/.test(location.hash));
  await at.fill('500');
  await at.press('Enter');
  assert.match(await text(calm.page, 'error'), /must come by/);
  assert.equal(await at.inputValue(), '30', 'the field shows the last good value again');
  await screenshot(calm.page, 'whatif.png');
  await calm.context.close();
});

test('pauses on any lane: a drag on an empty stretch draws one (a click does not), a double-click removes it, the link keeps both', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=99');
  const laneB = await page.locator('svg.timeline.main g.grid rect.lane').nth(1).boundingBox();
  const x = (t) => laneB.x + ((78 + 9 * t) * laneB.width) / 1000;
  const y = laneB.y + laneB.height / 2;
  // A plain click on B's empty lane adds nothing (a stray click must not change the story).
  await page.mouse.click(x(70), y);
  assert.equal(await page.getByTestId('pause-B').count(), 0);
  // B's lane has no pause: press at t=40 and drag to t=60.
  await page.mouse.move(x(40), y);
  await page.mouse.down();
  await page.mouse.move(x(60), y, { steps: 8 });
  await page.mouse.up();
  assert.equal(await page.getByTestId('pause-B').count(), 1);
  const start = Number(await page.getByLabel('B pause start (ms)').inputValue());
  const length = Number(await page.getByLabel('B pause length (ms)').inputValue());
  assert.ok(Math.abs(start - 40) <= 1, `B's pause starts at ${start} ms`);
  assert.ok(Math.abs(length - 20) <= 2, `B's pause lasts ${length} ms`);
  await page.waitForFunction((s) => location.hash.includes(`pause.B=${s},`), start);
  // Double-click A's pause: it is gone, from the timeline, the fields and the link.
  await page.getByTestId('pause-A').locator('rect.pause-body').dblclick();
  assert.equal(await page.getByTestId('pause-A').count(), 0);
  assert.equal(await page.getByLabel('A pause start (ms)').count(), 0);
  // Without A's pause A finishes before its lease runs out; B finds the job done.
  assert.equal(await text(page, 'balance'), '90');
  assert.equal(await page.getByTestId('ledger-row').count(), 1);
  await page.waitForFunction(() => location.hash.includes('pause.A=none'));
  const link = await page.evaluate(() => location.hash);
  const fresh = await open(link);
  assert.equal(await fresh.page.getByTestId('pause-A').count(), 0);
  assert.equal(await fresh.page.getByLabel('B pause start (ms)').inputValue(), String(start));
  await fresh.context.close();
  // The keyboard's way, under What if…: "+ pause A", and "− pause B".
  await page.locator('details.whatif summary').click();
  await page.getByRole('button', { name: 'Add pause A' }).click();
  assert.equal(await page.getByLabel('A pause start (ms)').inputValue(), '50');
  assert.equal(await page.getByLabel('A pause length (ms)').inputValue(), '10');
  await page.getByRole('button', { name: 'Remove pause B' }).click();
  assert.equal(await page.getByTestId('pause-B').count(), 0);
  await context.close();
});

test("a pause by keyboard: Tab to A's pause, arrows move it, Shift+arrows resize it, Delete removes it", async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=6');
  const pauseA = page.getByRole('slider', { name: /^A's GC pause 50 ms: arrow keys move it/ });
  await pauseA.focus();
  const [at] = await position(page);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  // The pause moved 2 ms and the story did not step (→ stays with the focused pause).
  assert.equal((await position(page))[0], at);
  assert.equal(await page.getByLabel('A pause start (ms)').inputValue(), '7');
  assert.equal(await page.getByLabel('A pause length (ms)').inputValue(), '50');
  assert.equal(await pauseA.getAttribute('aria-valuenow'), '7');
  assert.equal(await pauseA.getAttribute('aria-valuetext'), 'starts at 7 ms, lasts 50 ms');
  await page.keyboard.press('Shift+ArrowLeft');
  assert.equal(await page.getByLabel('A pause length (ms)').inputValue(), '49');
  await page.waitForFunction(() => location.hash.includes('pause.A=7,49'));
  await page.keyboard.press('Delete');
  assert.equal(await page.getByTestId('pause-A').count(), 0);
  await page.waitForFunction(() => location.hash.includes('pause.A=none'));
  // Without the pause A finishes within its lease; B finds the job done.
  await stepToEnd(page);
  assert.equal(await text(page, 'balance'), '90');
  assert.equal(await page.getByTestId('ledger-row').count(), 1);
  await context.close();
});

test('what if a third client: + client adds lane C (a copy of B), the link keeps it, − client removes it', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=99');
  const lanes = page.locator('svg.timeline.main .grid text.lane-name.actor');
  assert.deepEqual(await lanes.allTextContents(), ['A', 'B']);
  await page.locator('details.whatif summary').click();
  await page.getByRole('button', { name: 'Add a client' }).click();
  assert.deepEqual(await lanes.allTextContents(), ['A', 'B', 'C']);
  // C contends with B for the lock; storage still takes one debit under strict fencing.
  await stepToEnd(page);
  assert.equal(await text(page, 'balance'), '90');
  assert.ok(await page.locator('svg.timeline.main g.ev.c2').count() > 0, 'C has markers of its own');
  await page.waitForFunction(() => location.hash.includes('clients=3'));
  const fresh = await open(await page.evaluate(() => location.hash));
  assert.deepEqual(await fresh.page.locator('svg.timeline.main .grid text.lane-name.actor').allTextContents(), ['A', 'B', 'C']);
  await fresh.context.close();
  await page.getByRole('button', { name: 'Remove a client' }).click();
  assert.deepEqual(await lanes.allTextContents(), ['A', 'B']);
  // Two is the fewest: the button says so by being disabled.
  assert.ok(await page.getByRole('button', { name: 'Remove a client' }).isDisabled());
  await context.close();
});

test("what if B's packets are slow: + delay gives B a delay field, the link keeps it, − delay takes it away", async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=99');
  assert.equal(await page.getByLabel('B network delay (ms)').count(), 0);
  await page.locator('details.whatif summary').click();
  await page.getByRole('button', { name: 'Add packet delay B' }).click();
  const field = page.getByLabel('B network delay (ms)');
  assert.equal(await field.inputValue(), '10');
  // The exact value goes in the field: B's debit now lands 25 ms after it is sent.
  await field.fill('25');
  await field.press('Enter');
  await page.waitForFunction(() => location.hash.includes('delay.B=25'));
  assert.match(await page.getByTestId('ledger').innerText(), /60 ms\s+B\s+34/);
  const fresh = await open(await page.evaluate(() => location.hash));
  assert.equal(await fresh.page.getByLabel('B network delay (ms)').inputValue(), '25');
  await fresh.context.close();
  await page.getByRole('button', { name: 'Remove packet delay B' }).click();
  assert.equal(await page.getByLabel('B network delay (ms)').count(), 0);
  await context.close();
});

test("a packet delay drawn on the timeline: drag B's write to the right, double-click it to take the delay off", async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=99');
  const laneB = await page.locator('svg.timeline.main g.grid rect.lane').nth(1).boundingBox();
  const dx = (ms) => (9 * ms * laneB.width) / 1000;
  // B's debit lands at t=35: its marker on the storage lane is B's colour.
  const write = page.locator('svg.timeline.main g.ev.write.c1').last();
  const box = await write.locator('circle.dot').boundingBox();
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + dx(25), y, { steps: 10 });
  await page.mouse.up();
  const delay = Number(await page.getByLabel('B network delay (ms)').inputValue());
  assert.ok(Math.abs(delay - 25) <= 1, `B's packets are delayed ${delay} ms`);
  await page.waitForFunction((d) => location.hash.includes(`delay.B=${d}`), delay);
  // Now A's stale write lands first, before storage has seen 34: both debits land.
  assert.equal(await text(page, 'balance'), '80');
  assert.equal(await page.getByTestId('ledger-row').count(), 2);
  await screenshot(page, 'delay-drawn.png');
  await page.locator('svg.timeline.main g.ev.write.c1').last().locator('circle.dot').dblclick();
  assert.equal(await page.getByLabel('B network delay (ms)').count(), 0);
  assert.equal(await text(page, 'balance'), '90');
  await context.close();
});

test('what if the replica lags: 5 ms behind it has A\'s SET and nothing is lost; cut off, the lock is granted twice', async () => {
  const { page, context } = await open('#s=redis-failover&fence=same_epoch&step=99');
  assert.equal(await text(page, 'balance'), '80');
  await page.locator('details.whatif summary').click();
  const lag = page.getByLabel('Lock failover replica lag (ms)');
  assert.equal(await lag.inputValue(), '', 'the deck cuts replication before the run');
  await lag.fill('5');
  await lag.press('Enter');
  await page.waitForFunction(() => location.hash.includes('faults=failover.5.5'));
  // A's SET at t=0 reached the replica: A keeps the lock, B waits and finds the job done.
  assert.equal(await text(page, 'balance'), '90');
  assert.equal(await page.getByTestId('ledger-row').count(), 1);
  const fresh = await open('#s=redis-failover&fence=same_epoch&lag=5&step=3');
  assert.match(await text(fresh.page, 'narration'), /5 ms behind.*had reached it/);
  await fresh.context.close();
  await lag.fill('10');
  await lag.press('Enter');
  await page.waitForFunction(() => location.hash.includes('faults=failover.5.10'));
  assert.equal(await text(page, 'balance'), '80');
  await lag.fill('');
  await lag.press('Enter');
  await page.waitForFunction(() => !location.hash.includes('faults='));
  await context.close();
});

test('What if… → Faults: a storage failover added to the headline loses B\'s debit, and the balance changes', async () => {
  const { page, context, problems } = await open('#s=gc-pause&fence=off&step=99999');
  assert.equal(await text(page, 'balance'), '80');
  await page.getByText('What if…').click();
  const faults = page.getByRole('group', { name: 'Faults' });
  await faults.getByRole('combobox', { name: 'Fault to add' }).selectOption({ label: 'Storage failover' });
  await faults.getByRole('button', { name: 'Add fault' }).click();
  const row = faults.getByRole('group', { name: 'Storage failover' });
  await row.getByRole('spinbutton', { name: 'Storage failover at (ms)' }).fill('45');
  await row.getByRole('spinbutton', { name: 'Storage failover at (ms)' }).press('Enter');
  const lag = row.getByRole('spinbutton', { name: 'Storage failover lag (ms)' });
  await lag.fill('15');
  await lag.press('Enter');
  await page.waitForFunction(() => /faults=storage\.45\.15(&|$)/.test(location.hash));
  // The standby, 15 ms behind at t=45, has not B's debit of t=35: only A's is left.
  await stepToEnd(page);
  assert.equal(await text(page, 'balance'), '90');
  await row.getByRole('button', { name: 'Remove Storage failover' }).click();
  await page.waitForFunction(() => !location.hash.includes('faults='));
  await stepToEnd(page);
  assert.equal(await text(page, 'balance'), '80');
  assert.deepEqual(problems.errors, []);
  await context.close();
});

test('what if: its controls are a chunk fetched on first open; if it cannot be fetched the panel says so, and reopening fetches it', async () => {
  const { page, context, problems } = await open('#s=gc-pause');
  await page.route('**/split_what_ifs-*.wasm', (route) => route.abort());
  const summary = page.locator('details.whatif summary');
  await summary.click();
  const alert = page.getByTestId('whatif').getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.innerText(), /could not be fetched from the page's server\. Reload the page to try again\./);
  for (const e of problems.errors.splice(0)) assert.match(e, /ERR_FAILED|Failed to fetch/);
  await page.unroute('**/split_what_ifs-*.wasm');
  await summary.click();
  await summary.click();
  await page.getByLabel('Add a client').click();
  await page.waitForFunction(() => /clients=3/.test(location.hash));
  assert.equal(await alert.count(), 0);
  await context.close();
});
