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
