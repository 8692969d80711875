// Touch: at 1024x768 and 768x1024 with touch emulation, a finger drags and resizes A's
// pause (targets of at least 24 px), and the page fits without scrolling sideways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session, text, stepToEnd, swipe } from './session.js';

const open = session();

for (const [width, height] of [[1024, 768], [768, 1024]]) {
  test(`touch ${width}x${height}: drag and resize the pause by finger; the page fits`, async () => {
    const { page, context } = await open('#s=gc-pause&fence=strict&step=99999', {
      viewport: { width, height },
      hasTouch: true,
      isMobile: true,
    });
    const size = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]);
    assert.ok(size[0] <= width, `nothing scrolls sideways (${size[0]} > ${width})`);
    assert.ok(size[1] <= height, `the page fits (${size[1]} > ${height})`);
    const block = page.getByTestId('pause-A');
    const grip = page.getByTestId('pause-A-resize');
    const b = await block.boundingBox();
    const g = await grip.boundingBox();
    assert.ok(b.height >= 24 && g.width >= 24 && g.height >= 24, `targets ${b.height} / ${g.width}x${g.height}`);
    const svg = await page.locator('svg.timeline.main').boundingBox();
    const pxPerMs = (svg.width * 0.9) / 100;
    // Resize: pull the right edge left by 35 ms, so the 50 ms pause ends before expiry.
    await swipe(page, g.x + g.width / 2, g.y + g.height / 2, -35 * pxPerMs);
    const length = Number(await page.getByLabel('A pause length (ms)').inputValue());
    assert.ok(length >= 10 && length <= 20, `resized to ${length} ms`);
    // Move: slide the block 20 ms right; its length stays.
    const b2 = await block.boundingBox();
    await swipe(page, b2.x + 10, b2.y + b2.height / 2, 20 * pxPerMs);
    const start = Number(await page.getByLabel('A pause start (ms)').inputValue());
    assert.ok(start >= 20 && start <= 30, `moved to start ${start} ms`);
    assert.equal(Number(await page.getByLabel('A pause length (ms)').inputValue()), length);
    await stepToEnd(page);
    assert.match(await text(page, 'balance'), /^\d+$/);
    await screenshot(page, `touch-${width}x${height}.png`);
    await context.close();
  });
}
