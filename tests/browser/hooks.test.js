// The test-hooks build (dist-test/, `--features test-hooks`): what only a deliberate hook can
// show, and that the release bundle carries none of the hooks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DIST, HOOKS_DIST } from './harness.js';
import { session } from './session.js';

const open = session({ dist: HOOKS_DIST });

test('a panic shows a visible banner, not a blank page', async () => {
  const { page, context, problems } = await open();
  const thrown = await page.evaluate(() => {
    try {
      window.wasmBindings.panic_for_test();
      return null;
    } catch (e) {
      return String(e);
    }
  });
  assert.ok(thrown, 'the panic surfaces as an exception');
  const banner = page.locator('#fatal');
  await banner.waitFor();
  assert.match(await banner.innerText(), /hit a bug and stopped: .*deliberate test panic/);
  // This page is expected to have logged the panic; keep it out of the no-errors check.
  problems.errors.length = 0;
  await context.close();
});

test('the release bundle exports no test hook; the hooks build does', () => {
  const glue = (dir) => readFileSync(join(dir, readdirSync(dir).find((f) => /^fencing-lab-.*\.js$/.test(f))), 'utf8');
  for (const hook of ['panic_for_test', 'bench_explore_headline']) {
    assert.ok(!glue(DIST).includes(hook), `dist/ must not export ${hook}`);
    assert.ok(glue(HOOKS_DIST).includes(hook), `dist-test/ exports ${hook}`);
  }
});
