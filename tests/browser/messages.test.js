// Messages in a user's words: a broken link and a bad value typed into a field each say what
// was wrong and what is allowed, the page runs nothing from the link, and the last good
// state stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, text, position, stepToEnd } from './session.js';

const open = session();

/** The message the page shows, without its Dismiss button. */
const message = (page) => page.getByRole('alert').locator('span').innerText();

const headline = (why) => `This link cannot be loaded: ${why}; showing the headline instead.`;

test('a broken link says what is wrong with it, in what the user wrote, and shows the headline', async () => {
  for (const [hash, why] of [
    // The browser sends these %-escaped; the message names the character itself.
    ['#s=<img src=x onerror=window.pwned=1>', 'a link cannot contain “<”'],
    ['#s=gc-pause&ttl=<script>window.pwned=1</script>', 'a link cannot contain “<”'],
    ['#s=nope&step=3', 'there is no scenario called “nope”'],
    ['#s=gc-pause&ttl=0', 'Lease TTL must be between 1 ms and 10 minutes (0 ms is too short)'],
    ['#s=gc-pause&ttl=-5', 'Lease TTL must be between 1 ms and 10 minutes (-5 is negative)'],
    [
      '#s=gc-pause&ttl=99999999999999999999',
      'Lease TTL must be between 1 ms and 10 minutes (9999999999999999… ms is too long)',
    ],
    [
      '#s=gc-pause&pause.A=90,50',
      "A's pause must end by t=100 ms, the end of the timeline (it would end at 140 ms)",
    ],
    ['#s=gc-pause&ttl=%zz', 'the link has a broken escape: a % in a link is followed by two hex digits'],
  ]) {
    const { page, context } = await open(hash);
    await page.getByRole('alert').waitFor();
    assert.equal(await message(page), headline(why), hash);
    assert.equal(await page.getByLabel('Scenario').inputValue(), 'gc-pause', hash);
    assert.deepEqual((await position(page))[0], 0, hash);
    assert.equal(await text(page, 'balance'), '100', hash);
    // Nothing from the link ran or was drawn as markup.
    assert.equal(await page.evaluate(() => window.pwned), undefined, hash);
    assert.equal(await page.locator('main img, main script').count(), 0, hash);
    if (hash.includes('<img')) await screenshot(page, 'message-link.png');
    await context.close();
  }
});

test('a bad value typed into a field says the range in ms and minutes, and the run stays', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=99');
  await stepToEnd(page);
  assert.equal(await text(page, 'balance'), '90');
  const ttl = page.getByLabel('Lease TTL (ms)');
  for (const [typed, why] of [
    ['0', '0 ms is too short'],
    ['-5', '-5 is negative'],
    ['600001', '600001 ms is too long'],
    ['2.5', '“2.5” is not a whole number'],
    ['', 'the value is empty'],
  ]) {
    await ttl.fill(typed);
    await ttl.press('Enter');
    await page.getByRole('alert').waitFor();
    assert.equal(await message(page), `Lease TTL must be between 1 ms and 10 minutes (${why}).`, typed);
    assert.equal(await ttl.inputValue(), '30', 'the field shows the TTL in force again');
    assert.equal(await text(page, 'balance'), '90', typed);
  }
  await screenshot(page, 'message-field.png');
  const length = page.getByLabel('A pause length (ms)');
  await length.fill('500');
  await length.press('Enter');
  assert.equal(
    await message(page),
    "A pause length must be between 1 ms and 95 ms (500 ms is too long; A's pause must end by t=100 ms, the end of the timeline).",
  );
  assert.equal(await length.inputValue(), '50');
  // A good value is taken, and the message goes.
  await ttl.fill('100');
  await ttl.press('Enter');
  await page.waitForFunction(() => /ttl=100/.test(location.hash));
  assert.equal(await page.getByRole('alert').count(), 0);
  await context.close();
});

test('a What if… time says its range, the timeline end included', async () => {
  const { page, context } = await open('#s=redis-failover&fence=same_epoch&step=99');
  await stepToEnd(page);
  const balance = await text(page, 'balance');
  await page.getByText('What if…').click();
  const at = page.getByLabel('Lock failover at (ms)');
  const come = 'the lock failover must come by t=60 ms, the end of the timeline';
  for (const [typed, why] of [
    ['500', `500 ms is too late; ${come}`],
    ['-1', `-1 is negative; ${come}`],
  ]) {
    await at.fill(typed);
    await at.press('Enter');
    await page.getByRole('alert').waitFor();
    assert.equal(await message(page), `Lock failover at must be between 0 ms and 60 ms (${why}).`, typed);
    assert.equal(await at.inputValue(), '5', 'the field shows the failover in force again');
    assert.equal(await text(page, 'balance'), balance, typed);
  }
  const lag = page.getByLabel('Lock failover replica lag (ms)');
  await lag.fill('-3');
  await lag.press('Enter');
  assert.equal(await message(page), 'Lock failover replica lag must be between 0 ms and 10 minutes (-3 is negative).');
  await context.close();
});

test('a fault typed out of range in What if… → Faults says so in its own words, and the run stays', async () => {
  const { page, context } = await open('#s=storage-failover&fence=strict&step=99999');
  const balance = await text(page, 'balance');
  await page.getByText('What if…').click();
  const row = page.getByRole('group', { name: 'Storage failover' });
  const lag = row.getByRole('spinbutton', { name: 'Storage failover lag (ms)' });
  assert.equal(await lag.inputValue(), '15');
  await lag.fill('-3');
  await lag.press('Enter');
  await page.getByRole('alert').waitFor();
  assert.equal(await message(page), 'Storage failover lag must be between 0 ms and 10 minutes (-3 is negative).');
  assert.equal(await lag.inputValue(), '15', 'the field shows the lag in force again');
  const at = row.getByRole('spinbutton', { name: 'Storage failover at (ms)' });
  await at.fill('150');
  await at.press('Enter');
  assert.equal(
    await message(page),
    'Storage failover at must be between 0 ms and 100 ms (150 ms is too late; the storage failover must come by t=100 ms, the end of the timeline).',
  );
  assert.equal(await at.inputValue(), '45');
  assert.equal(await text(page, 'balance'), balance);
  const hash = await page.evaluate(() => location.hash);
  assert.ok(!hash.includes('faults='), `the link keeps the entry's own fault: ${hash}`);
  await context.close();
});

test('a broken link\'s message covers neither the pickers nor the presenter\'s toolbar', async () => {
  for (const viewport of [{ width: 1280, height: 720 }, { width: 1024, height: 768 }]) {
    const { page, context } = await open('#s=nope&fence=banana&step=-4', { viewport });
    await page.getByRole('alert').waitFor();
    /** Which of `controls` the message overlaps or hides (each read at its middle). */
    const covered = (controls) => Promise.all(controls.map(async (control) => {
      const hidden = await control.evaluate((el) => {
        const b = el.getBoundingClientRect();
        const alert = document.querySelector('[role=alert]').getBoundingClientRect();
        const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
        const overlaps = b.left < alert.right && alert.left < b.right && b.top < alert.bottom && alert.top < b.bottom;
        return overlaps || !el.contains(hit);
      });
      return hidden ? await control.evaluate((el) => el.getAttribute('aria-label') ?? el.id ?? el.textContent) : null;
    }));
    const pickers = [page.getByLabel('Scenario'), page.getByLabel('Fencing')];
    assert.deepEqual((await covered(pickers)).filter(Boolean), [], `${viewport.width}: pickers under the message`);
    await page.keyboard.press('p');
    await page.waitForFunction(() => document.querySelector('main.app').classList.contains('presenting'));
    const toolbar = await page.getByRole('navigation', { name: 'Presenter tools' }).getByRole('button').all();
    assert.equal(toolbar.length, 4);
    assert.deepEqual((await covered([...pickers, ...toolbar])).filter(Boolean), [], `${viewport.width}: presenting, controls under the message`);
    assert.equal(await page.getByRole('alert').count(), 1, 'the message is still shown');
    if (viewport.width === 1024) await screenshot(page, 'message-presenting-1024.png');
    await context.close();
  }
});
