// A trace recorded on real Redis and PostgreSQL (bash scripts/replay.sh), imported into the
// page: by file, by paste, and refused with a reason when it is not one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { screenshot } from './harness.js';
import { session, text, stepToEnd } from './session.js';

const open = session();
const sample = (name) =>
  fileURLToPath(new URL(`../../assets/recordings/${name}`, import.meta.url));

test('a recording chosen as a file is drawn on the timeline, labelled with the servers it ran on', async () => {
  const { page, context } = await open('#s=toctou');
  // The recording reader is a wasm chunk of its own, fetched when a recording is read.
  const chunks = () =>
    page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => /split_recording_reader-/.test(n)));
  assert.deepEqual(await chunks(), [], 'the reader is not fetched at load');
  await page.getByLabel('Scenario').selectOption('recording');
  await page.getByLabel('Recording file').setInputFiles(sample('gc-pause-off.json'));
  const banner = page.getByTestId('recorded');
  await banner.waitFor();
  assert.equal((await chunks()).length, 1, 'the reader is fetched once it is needed');
  assert.match(await banner.innerText(), /recorded on Redis 7\.0\.15 · PostgreSQL 15\.18/);
  assert.match(await banner.innerText(), /not a simulation/);
  assert.equal(await page.getByLabel('Scenario').inputValue(), 'gc-pause');
  assert.equal(await page.getByLabel('Fencing').inputValue(), 'off');
  await stepToEnd(page);
  // Redis let both in and the plain UPDATE took both debits: the job ran twice.
  assert.equal(await text(page, 'balance'), '80');
  assert.equal(await page.locator('svg.timeline.main g.ev.write.late').count(), 1);
  await screenshot(page, 'recorded.png');
  // Step back works on a recording as on a run.
  await page.getByRole('button', { name: 'Step back' }).click();
  assert.equal(await page.getByTestId('recorded').count(), 1);
  // Any change simulates again, and says so by dropping the label.
  await page.getByLabel('Fencing').selectOption('strict');
  await page.getByTestId('recorded').waitFor({ state: 'detached' });
  await context.close();
});

test('a pasted recording is shown; a bad one is refused with a reason and the view stays', async () => {
  const { page, context } = await open('#s=toctou');
  await page.getByLabel('Scenario').selectOption('recording');
  const area = page.getByLabel('Recorded trace (JSON)');
  const show = page.getByRole('button', { name: 'Show recording' });
  const error = page.getByTestId('error');
  for (const [bad, why] of [
    ['{"scenario": ', /not a recorded trace/],
    ['{"hello": 1}', /not a recorded trace/],
  ]) {
    await area.fill(bad);
    await show.click();
    await error.waitFor();
    assert.match(await error.innerText(), why);
    assert.equal(await page.getByLabel('Scenario').inputValue(), 'toctou');
    assert.equal(await page.getByTestId('recorded').count(), 0);
    await page.getByRole('button', { name: 'Dismiss' }).click();
  }
  const strict = await readFile(sample('gc-pause-strict.json'), 'utf8');
  // A bad field is named by its path, without the list of every kind there is; and the
  // browser's JSON.parse names where the text stops being JSON.
  for (const [bad, why, not] of [
    [strict.replace('"lease_ttl": 30', '"lease_ttl": "thirty"'), /scenario\.lease_ttl: invalid type: string "thirty"/],
    [strict.replace('"Acquired"', '"Stolen"'), /events\[0\]\.kind: unknown variant `Stolen`/, /expected one of/],
    [strict.slice(0, 500), /JSON/],
  ]) {
    await area.fill(bad);
    await show.click();
    await error.waitFor();
    assert.match(await error.innerText(), why);
    if (not) assert.doesNotMatch(await error.innerText(), not);
    await page.getByRole('button', { name: 'Dismiss' }).click();
  }
  // Tampered: a balance the events do not give.
  await area.fill(strict.replace('"balance": 90', '"balance": 70'));
  await show.click();
  await error.waitFor();
  assert.match(await error.innerText(), /does not add up/);
  await page.getByRole('button', { name: 'Dismiss' }).click();
  await area.fill(strict);
  await show.click();
  await page.getByTestId('recorded').waitFor();
  await stepToEnd(page);
  assert.equal(await text(page, 'balance'), '90');
  assert.equal(await page.locator('svg.timeline.main g.ev.write.rejected').count(), 1);
  await context.close();
});

test('when the reader cannot be fetched the page says so and stays; asking again fetches it', async () => {
  const { page, context, problems } = await open('#s=toctou');
  await page.route('**/split_recording_reader-*.wasm', (route) => route.abort());
  await page.getByLabel('Scenario').selectOption('recording');
  await page.getByLabel('Recorded trace (JSON)').fill(await readFile(sample('gc-pause-off.json'), 'utf8'));
  const show = page.getByRole('button', { name: 'Show recording' });
  await show.click();
  const error = page.getByTestId('error');
  await error.waitFor();
  assert.match(await error.innerText(), /recording reader could not be fetched/);
  assert.equal(await page.getByLabel('Scenario').inputValue(), 'toctou');
  // The console errors are the aborted fetch's, and only those.
  for (const e of problems.errors.splice(0)) assert.match(e, /ERR_FAILED|Failed to fetch/);
  await page.getByRole('button', { name: 'Dismiss' }).click();
  await page.unroute('**/split_recording_reader-*.wasm');
  await show.click();
  await page.getByTestId('recorded').waitFor();
  assert.equal(await page.getByLabel('Scenario').inputValue(), 'gc-pause');
  await context.close();
});
