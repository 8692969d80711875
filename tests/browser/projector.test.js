// Projectors: at 1024x768 and 1280x720, normal and presenter mode, every deck scenario at
// its first and last step fits the screen with no scrolling sideways or down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot } from './harness.js';
import { session } from './session.js';

const open = session();

for (const [width, height] of [[1024, 768], [1280, 720]]) {
  test(`projector ${width}x${height}: every scenario fits, normal and presenter mode`, async () => {
    const { page, context } = await open('', { viewport: { width, height } });
    const ids = await page.getByLabel('Scenario').locator('option').evaluateAll((os) => os.map((o) => o.value).filter((v) => v !== 'recording'));
    assert.equal(ids.length, 18);
    const misfits = [];
    await context.close();
    for (const id of ids) {
      for (const step of [0, 99999]) {
        const app = await open(`#s=${id}&step=${step}`, { viewport: { width, height } });
        for (const presenting of [false, true]) {
          if (presenting) await app.page.keyboard.press('p');
          await app.page.waitForFunction((want) => document.querySelector('main.app').classList.contains('presenting') === want, presenting);
          const size = await app.page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]);
          if (size[0] > width || size[1] > height) misfits.push(`${id} step ${step}${presenting ? ' presenting' : ''}: ${size.join('x')}`);
          const svg = await app.page.locator('svg.timeline.main').boundingBox();
          assert.ok(svg.height >= 150, `${id}: the timeline keeps at least 150 px (${svg.height})`);
          if (step > 0 && id === 'unsafe-release') await screenshot(app.page, `projector-${width}-${presenting ? 'present' : 'normal'}.png`);
        }
        await app.context.close();
      }
    }
    assert.deepEqual(misfits, [], 'pages that scroll');
  });
}
