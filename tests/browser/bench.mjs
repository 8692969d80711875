// Browser figures for scripts/bench.sh (not a test: nothing here asserts a time).
//   node bench.mjs            → drag latency and explorer throughput in headless Chromium
// Prints one `key value` line per figure.
import { serveDist, launch, openApp } from './harness.js';

const server = await serveDist();
const browser = await launch();
try {
  const { page, context } = await openApp(browser, server.origin);

  // 1. Scripted 5-second drag of A's pause: one pointermove per animation frame, each timed
  //    from dispatch until every microtask it caused (recompute + re-render) has run.
  const drag = await page.evaluate(async () => {
    const body = document.querySelector('[data-testid=pause-A] rect.pause-body');
    const r = body.getBoundingClientRect();
    const y = r.y + r.height / 2;
    const x0 = r.x + r.width / 2;
    const longTasks = [];
    const obs = new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => e.duration)));
    obs.observe({ type: 'longtask' });
    const fire = (type, x) =>
      body.dispatchEvent(new PointerEvent(type, { bubbles: true, clientX: x, clientY: y, pointerId: 1, pointerType: 'mouse', buttons: 1 }));
    const settle = () => new Promise((res) => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => res();
      ch.port2.postMessage(0);
    });
    const frame = () => new Promise((res) => requestAnimationFrame(() => res()));
    fire('pointerdown', x0);
    const times = [];
    const sync = [];
    const views = new Set();
    const label = document.querySelector('[data-testid=pause-A] .pause-label');
    const start = performance.now();
    let x = x0;
    for (let i = 0; performance.now() - start < 5000; i++) {
      x = x0 + 260 * Math.sin(i / 25);
      const t0 = performance.now();
      fire('pointermove', x);
      sync.push(performance.now() - t0);
      await settle();
      times.push(performance.now() - t0);
      views.add(body.getAttribute('x') + label.textContent);
      await frame();
    }
    fire('pointerup', x);
    await frame();
    obs.disconnect();
    times.sort((a, b) => a - b);
    sync.sort((a, b) => a - b);
    const pick = (q, xs = times) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];
    return {
      moves: times.length,
      distinct_views: views.size,
      sync_p95: pick(0.95, sync),
      p50: pick(0.5),
      p95: pick(0.95),
      max: times[times.length - 1],
      long_tasks: longTasks.length,
      longest_task: longTasks.length ? Math.max(...longTasks) : 0,
    };
  });
  console.log(`drag.moves ${drag.moves}`);
  console.log(`drag.distinct_views ${drag.distinct_views}`);
  console.log(`drag.p50_ms ${drag.p50.toFixed(3)}`);
  console.log(`drag.p95_ms ${drag.p95.toFixed(3)}`);
  console.log(`drag.handler_only_p95_ms ${drag.sync_p95.toFixed(3)}`);
  console.log(`drag.max_ms ${drag.max.toFixed(3)}`);
  console.log(`drag.long_tasks_over_50ms ${drag.long_tasks}`);
  console.log(`drag.longest_task_ms ${drag.longest_task.toFixed(1)}`);

  // 1b. What the browser's own frame costs here: the same timing around a one-character
  //     text change (no recompute, no SVG), so the drag figure can be read against it.
  const baseline = await page.evaluate(async () => {
    const el = document.querySelector('[data-testid=clock]');
    const settle = () => new Promise((res) => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => res();
      ch.port2.postMessage(0);
    });
    const frame = () => new Promise((res) => requestAnimationFrame(() => res()));
    const times = [];
    for (let i = 0; i < 300; i++) {
      await frame();
      const t0 = performance.now();
      el.textContent = `step ${i}`;
      await settle();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return { p50: times[150], p95: times[285] };
  });
  console.log(`frame.text_change_p50_ms ${baseline.p50.toFixed(3)}`);
  console.log(`frame.text_change_p95_ms ${baseline.p95.toFixed(3)}`);

  // 2. The explorer over the headline on a 1 ms grid, synchronously in wasm (median of 5).
  const explore = await page.evaluate(() => {
    const runs = [];
    let result;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      result = window.wasmBindings.bench_explore_headline(1);
      runs.push(performance.now() - t0);
    }
    runs.sort((a, b) => a - b);
    return { schedules: result[0], stale_off: result[1], stale_strict: result[2], median: runs[2] };
  });
  console.log(`explore.wasm.schedules ${explore.schedules}`);
  console.log(`explore.wasm.stale_off ${explore.stale_off}`);
  console.log(`explore.wasm.stale_strict ${explore.stale_strict}`);
  console.log(`explore.wasm.median_ms ${explore.median.toFixed(1)}`);
  await context.close();
} finally {
  await browser.close();
  await server.close();
}
