// Taking it anywhere: the single self-contained file opened from disk, and dist/ served
// from a sub-path as a static host would. Both must work with no request leaving the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { DIST, screenshot } from './harness.js';
import { session, text, position, stepToEnd } from './session.js';

const FILE = join(DIST, 'fencing-lab.html');
const RECORDING = fileURLToPath(new URL('../../assets/recordings/gc-pause-off.json', import.meta.url));
const fromDisk = session({ file: FILE });
const subPath = session({ prefix: '/tools/fencing-lab' });

test('the single file works from file:// with no server: story, URL hash, reload', async () => {
  assert.ok((await stat(FILE)).size > 100_000, 'fencing-lab.html carries the wasm');
  const { page, context } = await fromDisk('#s=gc-pause&fence=off&step=99999');
  assert.ok(page.url().startsWith('file://'), page.url());
  assert.equal(await text(page, 'balance'), '80');
  assert.match(await text(page, 'summary-off'), /double charge/);
  // The hash is still the state: step back, and a reload of the written address restores it.
  await page.getByRole('button', { name: 'Step back' }).click();
  const [at] = await position(page);
  await page.waitForFunction((s) => location.hash.endsWith(`step=${s}`), at);
  await page.reload();
  await page.getByTestId('balance').waitFor();
  assert.equal((await position(page))[0], at);
  await page.getByLabel('Fencing').selectOption('strict');
  await stepToEnd(page);
  assert.equal(await text(page, 'balance'), '90');
  await screenshot(page, 'single-file.png');
  // The lazy parts are inlined too: the recording reader reads a pasted recording.
  await page.getByLabel('Scenario').selectOption('recording');
  await page.getByLabel('Recorded trace (JSON)').fill(await readFile(RECORDING, 'utf8'));
  await page.getByRole('button', { name: 'Show recording' }).click();
  await page.getByTestId('recorded').waitFor();
  assert.equal(await page.getByLabel('Scenario').inputValue(), 'gc-pause');
  await context.close();
});

test('the speaker view works from the single file too: both file:// windows follow each other', async () => {
  const { page, context } = await fromDisk('#s=gc-pause&fence=off&step=1');
  const [speaker] = await Promise.all([context.waitForEvent('page'), page.keyboard.press('s')]);
  assert.ok(speaker.url().startsWith('file://'), speaker.url());
  await speaker.getByTestId('speaker-step').waitFor();
  const step = async () => Number((await text(speaker, 'speaker-step')).match(/step (\d+)/)[1]);
  await page.keyboard.press('ArrowRight');
  for (const deadline = Date.now() + 10_000; (await step()) !== 2;) {
    assert.ok(Date.now() < deadline, 'the speaker view follows the page from file://');
    await new Promise((ok) => setTimeout(ok, 20));
  }
  await speaker.keyboard.press('ArrowRight');
  for (const deadline = Date.now() + 10_000; (await position(page))[0] !== 3;) {
    assert.ok(Date.now() < deadline, 'the page follows the speaker view from file://');
    await new Promise((ok) => setTimeout(ok, 20));
  }
  assert.match(await speaker.getByTestId('notes').innerText(), /stale_fence/);
  await context.close();
});

test('dist/ served under /tools/fencing-lab/ loads every asset from that path', async () => {
  const { page, context } = await subPath('#s=delayed-packet&fence=strict&step=99999');
  assert.match(page.url(), /\/tools\/fencing-lab\/#s=delayed-packet/);
  assert.equal(await text(page, 'balance'), '90');
  await context.close();
});
