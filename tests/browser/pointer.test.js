// The laser pointer: in presenter mode `l` turns it on; moving the mouse (or a finger) leaves a
// short red trail that fades and goes; the marker under it shows its words in the page; `l`
// again, or leaving presenter mode, puts it away. Outside presenter mode `l` does nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session } from './session.js';

const open = session();

/** The trail's dots still on the page, and how many of them can still be seen. */
const trail = (page) => page.evaluate(() => {
  const dots = [...document.querySelectorAll('.laser-dot')];
  return { dots: dots.length, visible: dots.filter((d) => Number(getComputedStyle(d).opacity) > 0.05).length };
});

test('laser pointer: l in presenter mode draws a fading trail and shows the marker under it', async () => {
  const { page, context } = await open('#s=gc-pause&fence=strict&step=99999');
  await page.keyboard.press('l');
  await page.mouse.move(300, 300);
  await page.mouse.move(340, 320, { steps: 5 });
  assert.equal((await trail(page)).dots, 0, 'no pointer outside presenter mode');

  await page.keyboard.press('p');
  await page.waitForFunction(() => document.querySelector('main.app').classList.contains('presenting'));
  await page.keyboard.press('l');
  const box = await page.locator('svg.timeline.main').boundingBox();
  // Each dot lives 600 ms; on a busy machine the 12 moves can take longer than that, so count
  // the dots the trail ever drew, and then that the newest ones are still on screen.
  await page.evaluate(() => {
    window.laserDotsDrawn = 0;
    new MutationObserver((records) => {
      for (const r of records) window.laserDotsDrawn += [...r.addedNodes].filter((n) => n.classList?.contains('laser-dot')).length;
    }).observe(document.body, { childList: true, subtree: true });
  });
  await page.mouse.move(box.x + 10, box.y + box.height / 2);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 12 });
  const drawn = { ...(await trail(page)), drawn: await page.evaluate(() => window.laserDotsDrawn) };
  assert.ok(drawn.drawn >= 5 && drawn.visible >= 1, `a trail follows the mouse (${JSON.stringify(drawn)})`);
  const events = await page.evaluate(() => getComputedStyle(document.querySelector('.laser')).pointerEvents);
  assert.equal(events, 'none', 'the layer lets the page have its pointer events');

  // Over a marker (B's accepted debit, token 34), the words of the marker on top there show
  // in the page.
  const marker = page.locator('svg.timeline.main g.ev[data-result=ok]').filter({ hasText: /debit/ }).filter({ hasText: /34/ }).first();
  // Its dot: the group's box also spans its link to the writer's lane.
  const m = await marker.locator('circle.dot').boundingBox();
  const [x, y] = [m.x + m.width / 2, m.y + m.height / 2];
  await page.mouse.move(x, y, { steps: 4 });
  const tip = page.getByTestId('laser-tip');
  await tip.waitFor();
  const words = await page.evaluate(([x, y]) => document.elementFromPoint(x, y).closest('g.ev').querySelector(':scope > title').textContent, [x, y]);
  assert.equal(await tip.innerText(), words);
  assert.match(words, /34/);
  await screenshot(page, 'laser-pointer.png');

  // Left alone, the trail fades and goes.
  // (Each dot goes 600 ms after it came; a busy machine may run that timer late.)
  await page.waitForFunction(() => document.querySelectorAll('.laser-dot').length === 0, null, { timeout: 5000 });
  assert.deepEqual(await trail(page), { dots: 0, visible: 0 }, 'the trail has faded away');

  // `l` again puts it away; so does leaving presenter mode.
  await page.keyboard.press('l');
  await page.mouse.move(box.x + 40, box.y + 40, { steps: 5 });
  assert.equal((await trail(page)).dots, 0, 'l again turns the pointer off');
  assert.equal(await tip.count(), 0, 'and takes the words away');
  await page.keyboard.press('l');
  await page.keyboard.press('p');
  await page.mouse.move(box.x + 80, box.y + 60, { steps: 5 });
  assert.equal((await trail(page)).dots, 0, 'leaving presenter mode puts the pointer away');
  await context.close();
});

test('laser pointer follows a finger too', async () => {
  const { page, context } = await open('#s=gc-pause&step=3', { hasTouch: true, isMobile: true, viewport: { width: 1024, height: 768 } });
  await page.keyboard.press('p');
  await page.keyboard.press('l');
  const box = await page.locator('svg.timeline.main').boundingBox();
  const cdp = await context.newCDPSession(page);
  const at = (x) => [{ x, y: box.y + box.height / 2, id: 1, radiusX: 4, radiusY: 4, force: 1 }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(box.x + 20) });
  for (let i = 1; i <= 8; i++) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: at(box.x + 20 + i * 30) });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
  assert.ok((await trail(page)).dots >= 3, 'a finger leaves a trail as the mouse does');
  await context.close();
});
