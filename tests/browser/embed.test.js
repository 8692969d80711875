// Beyond the room: the run embedded in someone's page (`&embed`, the code from Export… → Copy
// embed code, from a sub-path and from the single file), and the run exported as an animated
// GIF, decoded here frame by frame.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { DIST, screenshot } from './harness.js';
import { session, text } from './session.js';

const open = session();
const subPath = session({ prefix: '/tools/fencing-lab' });
const fromDisk = session({ file: join(DIST, 'fencing-lab.html') });

const CLIPBOARD = { permissions: ['clipboard-read', 'clipboard-write'] };

/** Opens the Export… menu (a click on an open one would close it). */
async function openExport(page) {
  const menu = page.locator('details.export-menu');
  if (!(await menu.evaluate((d) => d.open))) await page.getByText('Export…').click();
}

/**
 * Someone else's page (a fresh tab: none of our policy) with `html` in it, beside the app's.
 * Its errors, and those of the frame in it, are collected in `errors`.
 */
async function hostPage(context, html) {
  const host = await context.newPage();
  const errors = [];
  host.on('pageerror', (e) => errors.push(String(e)));
  host.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await host.setContent(html);
  return { host, errors };
}

/** Export… → Copy embed code: the code on the clipboard, the box's copy of it and what the page says. */
async function copyEmbed(page) {
  await openExport(page);
  await page.getByRole('button', { name: 'Copy embed code' }).click();
  const box = page.getByLabel('Embed code');
  await box.waitFor();
  return {
    code: await box.inputValue(),
    said: await page.getByTestId('tool-status').innerText(),
    clipboard: await page.evaluate(() => navigator.clipboard.readText().catch((e) => `(unread: ${e})`)),
  };
}

/** The iframe's src, as a browser reads the snippet (the code escapes only `&` and `"` in it). */
const src = (code) => code.match(/^<iframe src="([^"]*)"/)[1].replaceAll('&quot;', '"').replaceAll('&amp;', '&');

/** Whether the frame's page scrolls either way. */
const scrolls = (frame) => frame.evaluate(() => {
  const s = document.scrollingElement;
  return { down: s.scrollHeight > s.clientHeight, across: s.scrollWidth > s.clientWidth };
});

/** The frame's step and number of steps, read off its clock. */
async function framePosition(frame) {
  const [, at, len] = (await frame.getByTestId('clock').innerText()).match(/step (\d+) \/ (\d+)/);
  return [Number(at), Number(len)];
}

test('embed: the copied code shows the run in a 640x400 frame with no chrome; it steps by click, key and touch, and nothing scrolls', async () => {
  const { page, context } = await open('#s=gc-pause&fence=off&step=3', { ...CLIPBOARD, hasTouch: true });
  const { code, said, clipboard } = await copyEmbed(page);
  assert.equal(clipboard, code, 'the clipboard holds the code the page shows');
  assert.match(said, /Embed code copied/);
  assert.match(code, /^<iframe src="[^"]+#s=gc-pause&amp;fence=off&amp;[^"]*step=3&amp;embed" title="fencing-lab: GC pause" width="640" height="400"/);
  const url = src(code);

  // Someone's page with the code in it.
  const { host, errors } = await hostPage(context, `<body style="margin:0"><p>A post about fencing tokens.</p>${code}</body>`);
  const frame = host.frameLocator('iframe');
  await frame.getByTestId('balance').waitFor();
  const inside = host.frames().find((f) => f.url() === url);
  assert.ok(inside, `the frame loaded ${url}`);
  const box = await host.locator('iframe').boundingBox();
  assert.deepEqual([box.width, box.height], [640, 400]);

  // The run, its steps, the ledger and the off/on cards; none of the page's chrome.
  assert.deepEqual(await framePosition(frame), [3, 12]);
  for (const id of ['ledger', 'summary-off', 'summary-on', 'balance']) assert.equal(await frame.getByTestId(id).count(), 1, id);
  assert.equal(await frame.getByRole('group', { name: 'Timeline' }).count(), 1);
  assert.equal(await frame.getByLabel('Scenario').count(), 0, 'no scenario picker');
  assert.equal(await frame.getByText('What if…').count(), 0, 'no What if…');
  for (const tool of ['Fork', 'Explore', 'Notes', 'Present']) {
    assert.equal(await frame.getByRole('button', { name: tool, exact: true }).count(), 0, `no ${tool}`);
  }
  assert.equal(await frame.getByText('Export…').count(), 0, 'no tools row');
  assert.deepEqual(await scrolls(inside), { down: false, across: false }, 'nothing scrolls at 640x400');
  await screenshot(host, 'embed-640x400.png');

  // Click, key and touch step it; the frame's own address follows, still embedded.
  await frame.getByRole('button', { name: 'Step forward' }).click();
  assert.deepEqual(await framePosition(frame), [4, 12]);
  await host.keyboard.press('ArrowRight');
  assert.deepEqual(await framePosition(frame), [5, 12], 'the frame has the keys once clicked');
  await host.keyboard.press('f');
  await frame.getByRole('button', { name: 'Step back' }).tap();
  assert.deepEqual(await framePosition(frame), [4, 12], 'a finger steps it too');
  await inside.waitForFunction(() => location.hash.endsWith('&step=4&embed'));
  assert.match(await inside.evaluate(() => location.hash), /fence=strict/);
  // Open in fencing-lab: the same view, on the full page.
  const full = await frame.getByRole('link', { name: /Open in fencing-lab/ }).getAttribute('href');
  assert.match(full, /^#s=gc-pause&fence=strict&.*step=4$/);

  // At its end the ledger and the cards are at their longest: still nothing scrolls, here and
  // in scenarios with three clients or long words.
  for (const hash of ['#s=gc-pause&fence=off&step=99999&embed', '#s=unsafe-release&fence=strict&step=99999&embed', '#s=claim-row&fence=off&step=99999&embed', '#s=uuid-token&fence=strict&step=99999&embed']) {
    await inside.evaluate((h) => { location.hash = h; }, hash);
    await inside.waitForFunction(() => /step (\d+) \/ \1\b/.test(document.querySelector('[data-testid=clock]').textContent));
    assert.deepEqual(await scrolls(inside), { down: false, across: false }, `${hash}: nothing scrolls`);
  }
  await screenshot(host, 'embed-640x400-uuid-token.png');

  // A larger frame: the layout follows it.
  const narrow = await frame.getByRole('group', { name: 'Timeline' }).boundingBox();
  await host.locator('iframe').evaluate((f) => { f.width = '960'; f.height = '540'; });
  await host.waitForFunction(() => document.querySelector('iframe').getBoundingClientRect().width === 960);
  await inside.waitForFunction((w) => document.querySelector('svg.timeline.main').getBoundingClientRect().width > w + 200, narrow.width);
  assert.deepEqual(await scrolls(inside), { down: false, across: false }, 'nothing scrolls at 960x540');
  assert.deepEqual(errors, [], 'no errors in the host page or its frame');
  await context.close();
});

test('embed: a link to a missing scenario still shows the frame layout and says why', async () => {
  const { page, context } = await open('#s=nope&embed');
  assert.match(await text(page, 'error'), /no scenario called “nope”/);
  assert.equal(await page.getByLabel('Scenario').count(), 0, 'still embedded');
  await context.close();
});

test('embed code from a sub-path keeps the path', async () => {
  const { page, context } = await subPath('#s=delayed-packet&fence=strict&step=5', CLIPBOARD);
  const { code } = await copyEmbed(page);
  const url = src(code);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/tools\/fencing-lab\/#s=delayed-packet&fence=strict&.*step=5&embed$/);
  const { host, errors } = await hostPage(context, code);
  const frame = host.frameLocator('iframe');
  await frame.getByTestId('balance').waitFor();
  assert.deepEqual(await framePosition(frame), [5, await framePosition(frame).then(([, n]) => n)]);
  assert.equal(await frame.getByLabel('Scenario').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('embed code from the single file says the page must be hosted first', async () => {
  const { page, context } = await fromDisk('#s=gc-pause&step=2', CLIPBOARD);
  const { code, said } = await copyEmbed(page);
  assert.match(said, /opened from a file.*host fencing-lab\.html/s);
  assert.match(code, /^<iframe src="file:\/\/[^"]*fencing-lab\.html#s=gc-pause&amp;.*step=2&amp;embed"/);
  await screenshot(page, 'embed-from-file.png');
  await context.close();
});

/** The blocks of a GIF: its size, whether it loops, and each frame's descriptor and delay. */
function parseGif(bytes) {
  assert.equal(bytes.subarray(0, 6).toString('latin1'), 'GIF89a');
  const width = bytes.readUInt16LE(6);
  const height = bytes.readUInt16LE(8);
  let at = 13;
  if (bytes[10] & 0x80) at += 3 * 2 ** ((bytes[10] & 7) + 1);
  const frames = [];
  let loops = false;
  let delay = 0;
  const skipSubBlocks = () => {
    while (bytes[at] !== 0) at += bytes[at] + 1;
    at += 1;
  };
  for (;;) {
    const block = bytes[at++];
    if (block === 0x3b) break;
    if (block === 0x21) {
      const label = bytes[at++];
      if (label === 0xf9) delay = bytes.readUInt16LE(at + 2);
      if (label === 0xff && bytes.subarray(at + 1, at + 12).toString('latin1') === 'NETSCAPE2.0') loops = true;
      skipSubBlocks();
    } else if (block === 0x2c) {
      const [left, top, w, h] = [0, 2, 4, 6].map((o) => bytes.readUInt16LE(at + o));
      const flags = bytes[at + 8];
      at += 9;
      if (flags & 0x80) at += 3 * 2 ** ((flags & 7) + 1);
      at += 1; // LZW minimum code size
      skipSubBlocks();
      frames.push({ left, top, w, h, delay });
    } else {
      throw new Error(`not a GIF block: 0x${block.toString(16)} at ${at - 1}`);
    }
  }
  return { width, height, loops, frames };
}

test('animation: the headline exports as a looping GIF, a frame per step, under 3 MB, at both sizes', async () => {
  const { page, context } = await open('#s=gc-pause&fence=off&step=3');
  const steps = 12;
  for (const [size, w, h] of [['1280×720', 1280, 720], ['960×540', 960, 540]]) {
    await openExport(page);
    await page.getByLabel('Animation size').selectOption({ label: size });
    const download = page.waitForEvent('download', { timeout: 120_000 });
    await page.getByRole('button', { name: 'Animation' }).click();
    if (w === 1280) {
      // It encodes a frame a task: the page still steps while the bar fills.
      await page.getByRole('progressbar', { name: 'Encoding the animation' }).waitFor();
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction(() => document.querySelector('[data-testid=clock]').textContent.startsWith('step 4 /'));
    }
    const file = await download;
    assert.equal(file.suggestedFilename(), `fencing-lab-gc-pause-${w}x${h}.gif`);
    const bytes = await readFile(await file.path());
    const gif = parseGif(bytes);
    assert.deepEqual([gif.width, gif.height], [w, h]);
    assert.ok(gif.loops, 'it loops');
    assert.equal(gif.frames.length, steps + 1, 'a frame for the start and one per step');
    assert.deepEqual(gif.frames[0], { ...gif.frames[0], left: 0, top: 0, w, h }, 'the first frame is whole');
    assert.ok(gif.frames.every((f) => f.delay >= 150), 'each frame stays long enough to read');
    assert.ok(bytes.length < 3_000_000, `${bytes.length} bytes`);
    const said = await text(page, 'tool-status');
    assert.match(said, new RegExp(`Saved fencing-lab-gc-pause-${w}x${h}\\.gif: 13 frames, \\d+ KB, encoded in [\\d.]+ s`));
    console.log(`animation ${w}x${h}: ${bytes.length} bytes; ${said}`);

    // Chromium's own decoder agrees, and its last frame is the run's end with its caption.
    const b64 = bytes.toString('base64');
    const decoded = await page.evaluate(async (data) => {
      const d = new ImageDecoder({ data: Uint8Array.from(atob(data), (c) => c.charCodeAt(0)), type: 'image/gif' });
      await d.tracks.ready;
      const n = d.tracks.selectedTrack.frameCount;
      const { image } = await d.decode({ frameIndex: n - 1 });
      const view = document.createElement('canvas');
      view.id = 'gif-frame';
      view.width = image.displayWidth;
      view.height = image.displayHeight;
      Object.assign(view.style, { position: 'fixed', inset: '0', zIndex: '99', width: '100vw', height: 'auto' });
      view.getContext('2d').drawImage(image, 0, 0);
      document.body.append(view);
      return { n, w: image.displayWidth, h: image.displayHeight };
    }, b64);
    assert.deepEqual(decoded, { n: steps + 1, w, h });
    await screenshot(page, `animation-last-frame-${w}x${h}.png`);
    await page.evaluate(() => document.getElementById('gif-frame').remove());
  }
  await context.close();
});
