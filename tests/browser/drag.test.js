// Dragging a pause: what a drag move may and may not touch besides the drawing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { session } from './session.js';

const open = session();
const PHONE = { viewport: { width: 412, height: 915 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2.6 };

test('phone: a drag that gains or loses events moves the last step, and the box does not scroll to it', async () => {
  // At the run's last step the cursor is at its far end; the pause is near the start.
  const { page, context } = await open('#s=gc-pause&fence=strict&step=99', PHONE);
  const out = await page.evaluate(async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    const wrap = document.querySelector('.timeline-wrap');
    const block = document.querySelector('[data-testid=pause-A] rect.pause-body');
    // Bring the pause to the middle of the box, as a reader pans to it.
    const b0 = block.getBoundingClientRect();
    const box = wrap.getBoundingClientRect();
    wrap.scrollLeft += b0.x + b0.width / 2 - (box.x + box.width / 2);
    await frame();
    const before = wrap.scrollLeft;
    const r = block.getBoundingClientRect();
    const y = r.y + r.height / 2;
    const x0 = r.x + r.width / 2;
    const fire = (type, x) => block.dispatchEvent(new PointerEvent(type, {
      bubbles: true, clientX: x, clientY: y, pointerId: 1, pointerType: 'mouse', buttons: 1,
    }));
    // Markers that come and go: the run gained or lost an event, so its last step moved.
    let comings = 0;
    const seen = new MutationObserver((rs) => {
      for (const m of rs) comings += m.addedNodes.length + m.removedNodes.length;
    });
    seen.observe(document.querySelector('svg.timeline.main g.drawing'), { childList: true });
    fire('pointerdown', x0);
    // Right, a few CSS px a frame, until the run has gained or lost an event (or 300 px).
    for (let dx = 3; dx <= 300 && comings === 0; dx += 3) {
      fire('pointermove', x0 + dx);
      await frame();
    }
    fire('pointerup', x0);
    await frame();
    seen.disconnect();
    return { before, after: wrap.scrollLeft, comings, wide: wrap.scrollWidth > wrap.clientWidth };
  });
  assert.ok(out.wide, 'the drawing is wider than its box');
  assert.ok(out.comings > 0, 'the drag gained or lost an event');
  assert.equal(out.after, out.before, 'the box stayed where the reader put it');
  await context.close();
});

for (const [width, height, presenting] of [[1280, 720, false], [1024, 768, true]]) {
  test(`${width}x${height}${presenting ? ' presenting' : ''}: a drag moves the pause with the pointer, the stage holds still, and the address bar has the drag's end as soon as it ends`, async () => {
    const { page, context } = await open('#s=gc-pause&fence=strict&step=99', { viewport: { width, height } });
    if (presenting) {
      await page.keyboard.press('p');
      await page.waitForFunction(() => document.querySelector('main.app').classList.contains('presenting'));
    }
    // The bar has the app's own link for the view (written once it is quiet).
    await page.waitForFunction(() => location.hash.includes('ttl='));
    const out = await page.evaluate(async () => {
      const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      const wrap = document.querySelector('.timeline-wrap');
      const svg = document.querySelector('svg.timeline.main');
      const slider = document.querySelector('[data-testid=pause-A]');
      const block = slider.querySelector('rect.pause-body');
      const box = (el) => { const r = el.getBoundingClientRect(); return [r.x, r.y, r.width, r.height].join(','); };
      const stage = () => `${box(wrap)} ${box(svg)} ${document.scrollingElement.scrollTop}`;
      const r0 = block.getBoundingClientRect();
      const y = r0.y + r0.height / 2;
      const x0 = r0.x + r0.width / 2;
      const start0 = Number(slider.getAttribute('aria-valuenow'));
      // The block is 50 ms long: one millisecond on screen.
      const msPx = r0.width / 50;
      const fire = (type, x) => block.dispatchEvent(new PointerEvent(type, {
        bubbles: true, clientX: x, clientY: y, pointerId: 1, pointerType: 'mouse', buttons: 1,
      }));
      const stage0 = stage();
      const hash0 = location.hash;
      const seen = { stages: new Set(), off: [], hashes: new Set() };
      const look = (dx, during = true) => {
        seen.stages.add(stage());
        if (during) seen.hashes.add(location.hash);
        // Where the block is against where the pointer took it (a move snaps to whole ms).
        const moved = block.getBoundingClientRect().x - r0.x;
        seen.off.push(Math.abs(moved - dx) / msPx);
      };
      fire('pointerdown', x0);
      let dx = 0;
      for (let i = 0; i < 12; i++) { dx += 3; fire('pointermove', x0 + dx); await frame(); look(dx); }
      // The presenter stops on the way, longer than the address bar's quiet wait.
      await sleep(400);
      look(dx);
      for (let i = 0; i < 12; i++) { dx += 3; fire('pointermove', x0 + dx); await frame(); look(dx); }
      fire('pointerup', x0 + dx);
      const atEnd = location.hash;
      const start = Number(slider.getAttribute('aria-valuenow'));
      await frame();
      look(dx, false);
      return {
        stage0, stages: [...seen.stages], off: Math.max(...seen.off), hashes: [...seen.hashes], hash0, atEnd, start, start0,
      };
    });
    assert.deepEqual(out.stages, [out.stage0], 'the timeline box and the page stayed where they were');
    assert.ok(out.start > out.start0 + 3, `the pause moved right (${out.start0} → ${out.start} ms)`);
    assert.ok(out.off <= 1.01, `the block kept within a millisecond of the pointer (${out.off.toFixed(2)} ms off)`);
    assert.deepEqual(out.hashes, [out.hash0], 'the address bar held still during the drag');
    assert.match(out.atEnd, new RegExp(`[#&]pause\\.A=${out.start},50(&|$)`), 'the address bar has the drag\'s end the moment it ends');
    // The address bar's link opens the view the drag left.
    const again = await context.newPage();
    await again.goto(page.url());
    await again.getByTestId('balance').waitFor();
    assert.equal(await again.getByTestId('pause-A').getAttribute('aria-valuenow'), String(out.start));
    await context.close();
  });
}
