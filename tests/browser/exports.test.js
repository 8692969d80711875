// Exports carry the punchline: the SVG, the PNG and every frame of the Animation hold the
// entry's title and question and the balance at the step around the timeline, and at the
// run's end how it ends with fencing off and on, in the words of the page's off / on cards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { screenshot } from './harness.js';
import { session, text, stepToEnd } from './session.js';

const open = session();

/** Where the exported pictures are kept for the note, when that folder is named. */
async function keep(path, name) {
  if (!process.env.FENCING_SHOTS) return;
  await mkdir(process.env.FENCING_SHOTS, { recursive: true });
  await copyFile(path, `${process.env.FENCING_SHOTS}/${name}`);
}

async function openExport(page) {
  const menu = page.locator('details.export-menu');
  if (!(await menu.evaluate((d) => d.open))) await page.getByText('Export…').click();
}

/** Clicks the export button named `name` and returns the download. */
async function exported(page, name) {
  await openExport(page);
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 120_000 }),
    page.getByRole('button', { name, exact: true }).click(),
  ]);
  return download;
}

/**
 * An exported SVG, read here (parsed in the page, its inline styles would break the page's
 * Content Security Policy): its size, the drawing's viewBox, and the words around the
 * drawing (each `<text>` before it, in order).
 */
function readSvg(markup) {
  const [head, drawing] = markup.split('<g id="timeline"');
  assert.ok(drawing, 'the drawing has its place in the frame');
  const attr = (tag, name) => tag.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
  const root = head.match(/^<svg[^>]*>/)[0];
  const words = head.split('</text>').map((t) => t.replace(/<[^>]*>/g, '')).filter((t) => t.trim());
  return {
    size: [Number(attr(root, 'width')), Number(attr(root, 'height'))],
    drawing: attr(drawing.match(/<svg[^>]*>/)[0], 'viewBox'),
    words: words.join(' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'),
  };
}

/** A PNG's width and height, from its header. */
const pngSize = (bytes) => {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
};

test('the SVG and the PNG say the question and the balance at the step, and at the end how it ends off and on', async () => {
  const { page, context } = await open('#s=gc-pause&fence=off&step=4');
  const question = await text(page, 'question');
  const svgAt = async () => readSvg(await readFile(await (await exported(page, 'SVG')).path(), 'utf8'));
  const early = await svgAt();
  assert.match(early.words, /^fencing-lab GC pause /);
  assert.ok(early.words.includes(question), `${early.words} / ${question}`);
  assert.ok(early.words.includes(`Balance ${await text(page, 'balance')} · fencing off · step 4 / 12`), early.words);
  assert.doesNotMatch(early.words, /fencing off →|fencing on/, 'no outcome before the end');
  assert.match(early.drawing, /^0 0 1000(\.0)? 246(\.0)?$/);

  await stepToEnd(page);
  const end = await svgAt();
  assert.ok(end.words.includes('Balance 80 · fencing off · step 12 / 12'), end.words);
  // The off / on cards' own words.
  const card = async (id) => (await page.getByTestId(id).innerText()).replace(/\s+/g, ' ').trim();
  const off = await card('summary-off');
  const on = await card('summary-on');
  assert.match(off, /^fencing off → 80 /);
  assert.match(on, /^fencing on \(strict\) → 90 /);
  for (const side of [off, on]) {
    const [, key, reason] = side.match(/^(.*? → \d+) (.*)$/);
    assert.ok(end.words.includes(`${key} · ${reason}`), `${key} · ${reason} in ${end.words}`);
  }
  assert.ok(end.size[1] > early.size[1], 'the outcome adds its lines');

  const png = await exported(page, 'PNG');
  assert.equal(png.suggestedFilename(), 'fencing-lab-gc-pause.png');
  const bytes = await readFile(await png.path());
  // Twice the SVG's size: the timeline alone was 2000x492.
  assert.deepEqual(pngSize(bytes), end.size.map((v) => v * 2));
  assert.ok(end.size[1] * 2 > 492 + 200, `${end.size}`);
  await keep(await png.path(), 'export-gc-pause-end.png');
  await context.close();
});

test('every Animation frame is framed the same way; the GIF stays under 3 MB at 1280x720', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict');
  await openExport(page);
  await page.getByLabel('Animation size').selectOption({ label: '1280×720' });
  const gif = await exported(page, 'Animation');
  assert.equal(gif.suggestedFilename(), 'fencing-lab-gc-pause-1280x720.gif');
  const bytes = await readFile(await gif.path());
  assert.ok(bytes.length < 3_000_000, `${bytes.length} bytes`);
  assert.deepEqual([bytes.readUInt16LE(6), bytes.readUInt16LE(8)], [1280, 720]);
  console.log(`animation 1280x720 with its punchline: ${bytes.length} bytes`);
  await keep(await gif.path(), 'export-gc-pause.gif');
  // The first and last frames, decoded by the browser: the drawing sits in the same place in
  // both (the last frame's outcome has its room in every frame), and only the last has words
  // under the figure line, where the outcome goes.
  const frames = await page.evaluate(async (data) => {
    const d = new ImageDecoder({ data: Uint8Array.from(atob(data), (c) => c.charCodeAt(0)), type: 'image/gif' });
    await d.tracks.ready;
    const n = d.tracks.selectedTrack.frameCount;
    const rows = async (i) => {
      const { image } = await d.decode({ frameIndex: i });
      const c = new OffscreenCanvas(image.displayWidth, image.displayHeight);
      const ctx = c.getContext('2d');
      ctx.drawImage(image, 0, 0);
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      const bg = [...px.subarray(0, 3)];
      // Per row: how many pixels differ from the frame's corner.
      return [...Array(c.height).keys()].map((y) => {
        let inked = 0;
        for (let x = 0; x < c.width; x++) {
          const o = (y * c.width + x) * 4;
          if (Math.abs(px[o] - bg[0]) + Math.abs(px[o + 1] - bg[1]) + Math.abs(px[o + 2] - bg[2]) > 60) inked += 1;
        }
        return inked;
      });
    };
    return { n, first: await rows(0), last: await rows(n - 1) };
  }, bytes.toString('base64'));
  assert.equal(frames.n, 13);
  const differ = frames.first.map((v, y) => v !== frames.last[y]);
  const top = differ.indexOf(true);
  assert.ok(top > 100, `the title and question above the drawing are the same in both (first change at row ${top})`);
  // Rows inked in the last frame and blank in the first: the outcome's lines.
  const outcomeRows = frames.last.filter((v, y) => v > 20 && frames.first[y] === 0).length;
  assert.ok(outcomeRows >= 20, `the outcome's lines are only in the last frame (${outcomeRows} rows)`);
  await screenshot(page, 'exports-after-animation.png');
  await context.close();
});
