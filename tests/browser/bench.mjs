// Browser figures for scripts/bench.sh (not a test: nothing here asserts a time).
//   node bench.mjs            → drag latency, explorer throughput and first paint in headless Chromium
//   node bench.mjs drag       → the drag figures alone (dist/ only; no test-hooks build needed)
// Prints one `key value` line per figure.
import { serveDist, launch, openApp, HOOKS_DIST } from './harness.js';

const dragOnly = process.argv[2] === 'drag';
const server = await serveDist();
// The explorer figure needs a bench hook, which only the test-hooks build exports.
const hooks = dragOnly ? null : await serveDist('', HOOKS_DIST);
const browser = await launch();
try {
  // 1. A scripted 5-second drag of A's pause, as a presenter would: at the end of the
  //    headline with fencing on, sweep the pause from far left to far right and back
  //    twice, one pointermove per animation frame. Each move is timed:
  //    - recompute + re-render: from dispatching the pointermove until every microtask it
  //      caused has run (core rerun, markup, diff, Leptos effects, DOM edits) and the style
  //      and layout those edits need are done (forced, so they count in this move);
  //    - to the next frame: that, plus the paint and commit of the frame that shows it.
  //    The first drag after the page loads is reported on its own ("cold": the wasm is
  //    still being tiered up); three more are pooled ("warm"). The floor is the same two
  //    timings around one attribute change of the pause block with nothing recomputed:
  //    what any visible change costs in this browser.
  const { page: dragPage, context: dragContext } = await openApp(
    browser,
    server.origin,
    '#s=gc-pause&fence=strict&step=99',
  );
  await dragPage.evaluate(() => {
    const port = new MessageChannel();
    let wake = () => {};
    port.port1.onmessage = () => wake();
    // A task: after every microtask already queued, and after any rendering that is due.
    window.benchTask = () => new Promise((res) => { wake = res; port.port2.postMessage(0); });
    window.benchFrame = () => new Promise((res) => requestAnimationFrame(() => res()));
    // Times one change to the page: until every microtask it caused has run and the style
    // and layout it needs are done, and until the next frame is painted.
    window.benchTime = async (change) => {
      const t0 = performance.now();
      change();
      const t1 = performance.now();
      await window.benchTask();
      document.querySelector('svg.timeline').getBoundingClientRect();
      void document.body.offsetHeight;
      const t2 = performance.now();
      await window.benchFrame();
      const t3 = performance.now();
      await window.benchTask();
      const t4 = performance.now();
      return { handler: t1 - t0, rerender: t2 - t0, toFrame: t2 - t0 + t4 - t3 };
    };
  });
  const sweep = () => dragPage.evaluate(async () => {
    const { benchTask: task, benchFrame: frame, benchTime: time } = window;
    const svg = document.querySelector('svg.timeline');
    const block = document.querySelector('[data-testid=pause-A] rect.pause-body');
    // The block's words are drawn beside its group, outside the reveal's clip (ui/timeline/rows.rs).
    const label = block.closest('.pause-at').parentElement.nextElementSibling;
    const box = svg.getBoundingClientRect();
    const r0 = block.getBoundingClientRect();
    const y = r0.y + r0.height / 2;
    const x0 = r0.x + r0.width / 2;
    // Far enough either way to pin the pause at 0 and at the horizon.
    const left = x0 - (r0.x - box.x) - 20;
    const right = x0 + (box.right - r0.right) + 20;
    const at = (k) => {
      const u = (2 * k) % 1;
      return u < 0.5 ? left + (right - left) * 2 * u : right - (right - left) * (2 * u - 1);
    };
    const fire = (type, x) => block.dispatchEvent(new PointerEvent(type, {
      bubbles: true, clientX: x, clientY: y, pointerId: 1, pointerType: 'mouse', buttons: 1,
    }));
    const longTasks = [];
    const obs = new PerformanceObserver((l) => longTasks.push(...l.getEntries().map((e) => e.duration)));
    obs.observe({ type: 'longtask' });
    const out = { every: [], everyFrame: [], changed: [], changedFrame: [], handler: [], views: [] };
    await frame(); await task();
    fire('pointerdown', x0);
    // Start where the pause is: the sweep's first quarter heads right from x0.
    const phase = (x0 - left) / (right - left) / 4;
    const start = performance.now();
    // What the page shows of the pause: where it starts (the slider's value) and its label.
    const slider = document.querySelector('[data-testid=pause-A]');
    const shown = () => slider.getAttribute('aria-valuenow') + label.textContent;
    let last = shown();
    while (performance.now() - start < 5000) {
      const x = at(phase + (performance.now() - start) / 5000);
      const m = await time(() => fire('pointermove', x));
      const view = shown();
      out.views.push(view);
      out.every.push(m.rerender);
      out.everyFrame.push(m.toFrame);
      out.handler.push(m.handler);
      if (view !== last) {
        out.changed.push(m.rerender);
        out.changedFrame.push(m.toFrame);
      }
      last = view;
    }
    fire('pointerup', 0);
    await frame(); await task();
    obs.disconnect();
    out.longTasks = longTasks;
    out.balance = document.querySelector('[data-testid=balance]').textContent;
    return out;
  });
  const floor = () => dragPage.evaluate(async () => {
    const { benchTask: task, benchFrame: frame, benchTime: time } = window;
    const block = document.querySelector('[data-testid=pause-A] rect.pause-body');
    const out = { every: [], everyFrame: [] };
    const x = block.getAttribute('x');
    for (let i = 0; i < 300; i++) {
      await frame(); await task();
      const m = await time(() => block.setAttribute('x', String(100 + (i % 40))));
      out.every.push(m.rerender);
      out.everyFrame.push(m.toFrame);
    }
    block.setAttribute('x', x);
    return out;
  });
  const pick = (xs, q) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  };
  // p10 too: on a loaded machine (this one's p95s move by 2× from run to run) the fastest
  // tenth is the figure the load moves least, for comparing two builds.
  const figures = (name, xs) =>
    console.log(`${name} p10_ms=${pick(xs, 0.1).toFixed(2)} p50_ms=${pick(xs, 0.5).toFixed(2)} p95_ms=${pick(xs, 0.95).toFixed(2)} max_ms=${pick(xs, 1).toFixed(2)} n=${xs.length}`);
  const cold = await sweep();
  const warm = [await sweep(), await sweep(), await sweep()];
  const base = await floor();
  // Where the drag's tail comes from. The same pause, moved one millisecond at a time with
  // the slider's arrow keys (the same SetPause as a drag), back and forth 60 times: once
  // across a start where the run gains or loses an event (a marker and a log row come and
  // go), once where only attributes change. Timed like a move above.
  const steps = await dragPage.evaluate(async () => {
    const { benchTask: task, benchFrame: frame, benchTime: time } = window;
    const slider = document.querySelector('[data-testid=pause-A]');
    const key = (k) => slider.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
    const start = () => Number(slider.getAttribute('aria-valuenow'));
    const goTo = async (s) => {
      for (let guard = 0; start() !== s && guard < 1000; guard++) { key(start() < s ? 'ArrowRight' : 'ArrowLeft'); await task(); }
    };
    let nodes = 0;
    const seen = new MutationObserver((rs) => { for (const r of rs) nodes += r.addedNodes.length + r.removedNodes.length; });
    seen.observe(document.querySelector('main'), { subtree: true, childList: true });
    // The first start (from 1 ms) whose step to the next adds or removes nodes, and the
    // first one after it that changes attributes only.
    const kind = async (s) => { await goTo(s); nodes = 0; key('ArrowRight'); await task(); return nodes > 0; };
    let across = null;
    let within = null;
    for (let s = 1; s < 60 && within === null; s++) {
      const structural = await kind(s);
      if (structural && across === null) across = s;
      else if (!structural && across !== null && s > across + 2) within = s;
    }
    seen.disconnect();
    if (across === null || within === null) return { across, within, acrossMs: [], withinMs: [] };
    const alternate = async (s) => {
      await goTo(s);
      const xs = [];
      for (let i = 0; i < 60; i++) {
        await frame(); await task();
        xs.push((await time(() => key(i % 2 ? 'ArrowLeft' : 'ArrowRight'))).rerender);
      }
      return xs;
    };
    return { across, within, acrossMs: await alternate(across), withinMs: await alternate(within) };
  });
  const pool = (key) => warm.flatMap((w) => w[key]);
  console.log(`drag.moves_per_5s_drag ${cold.every.length}`);
  console.log(`drag.distinct_views ${new Set([cold, ...warm].flatMap((w) => w.views)).size}`);
  figures('drag.cold.recompute_rerender.every_move', cold.every);
  figures('drag.cold.recompute_rerender.changed_moves', cold.changed);
  figures('drag.cold.to_next_frame.changed_moves', cold.changedFrame);
  figures('drag.warm.recompute_rerender.every_move', pool('every'));
  figures('drag.warm.recompute_rerender.changed_moves', pool('changed'));
  figures('drag.warm.to_next_frame.every_move', pool('everyFrame'));
  figures('drag.warm.to_next_frame.changed_moves', pool('changedFrame'));
  figures('drag.warm.handler_alone', pool('handler'));
  figures('drag.floor.one_attribute.style_layout', base.every);
  figures('drag.floor.one_attribute.to_next_frame', base.everyFrame);
  const ratio = (a, b, q) => (pick(a, q) / pick(b, q)).toFixed(2);
  console.log(`drag.warm.to_next_frame.changed_p95_over_floor_p95 ${ratio(pool('changedFrame'), base.everyFrame, 0.95)}`);
  console.log(`drag.warm.to_next_frame.changed_p50_over_floor_p50 ${ratio(pool('changedFrame'), base.everyFrame, 0.5)}`);
  const longTasks = [cold, ...warm].flatMap((w) => w.longTasks);
  console.log(`drag.long_tasks_over_50ms ${longTasks.length}`);
  console.log(`drag.longest_task_ms ${(longTasks.length ? Math.max(...longTasks) : 0).toFixed(1)}`);
  console.log(`drag.final_balance ${warm[2].balance}`);
  if (steps.across === null || steps.within === null) {
    console.log(`drag.keys not measured: no start with nodes coming and going (${steps.across}) and a stretch after it (${steps.within}) in 1..59 ms`);
  } else {
    figures(`drag.keys.across_a_threshold.start_${steps.across}_${steps.across + 1}`, steps.acrossMs);
    figures(`drag.keys.within_a_stretch.start_${steps.within}_${steps.within + 1}`, steps.withinMs);
  }
  await dragContext.close();
  // The explorer and first paint: not with `drag`.
  if (!dragOnly) {
    const { page, context } = await openApp(browser, hooks.origin);

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
      return { schedules: result[0], late_off: result[1], late_strict: result[2], median: runs[2] };
    });
    console.log(`explore.wasm.schedules ${explore.schedules}`);
    console.log(`explore.wasm.late_off ${explore.late_off}`);
    console.log(`explore.wasm.late_strict ${explore.late_strict}`);
    console.log(`explore.wasm.median_ms ${explore.median.toFixed(1)}`);
    await context.close();

    // 3. First paint: from navigation start until the first frame that shows the timeline
    //    with its markers. Cold: a fresh browser context (empty HTTP and code caches) each
    //    time; warm: reloads in one context. Median of 7 each.
    const firstPaint = async (ctx) => {
      const p = await ctx.newPage();
      await p.addInitScript(() => {
        const look = () => {
          const svg = document.querySelector('svg.timeline.main');
          if (svg && svg.querySelector('g.ev') && svg.getBoundingClientRect().height > 0) {
            window.benchFirstPaint = performance.now();
          } else {
            requestAnimationFrame(look);
          }
        };
        requestAnimationFrame(look);
      });
      return p;
    };
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const url = `${server.origin}/#s=gc-pause&fence=strict&step=99`;
    const coldPaint = [];
    for (let i = 0; i < 7; i++) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 720 } });
      const p = await firstPaint(ctx);
      await p.goto(url);
      await p.waitForFunction(() => window.benchFirstPaint !== undefined);
      coldPaint.push(await p.evaluate(() => window.benchFirstPaint));
      await ctx.close();
    }
    const warmCtx = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const wp = await firstPaint(warmCtx);
    await wp.goto(url);
    await wp.waitForFunction(() => window.benchFirstPaint !== undefined);
    const warmPaint = [];
    for (let i = 0; i < 7; i++) {
      await wp.reload();
      await wp.waitForFunction(() => window.benchFirstPaint !== undefined);
      warmPaint.push(await wp.evaluate(() => window.benchFirstPaint));
    }
    await warmCtx.close();
    console.log(`first_paint.cold.median_ms ${median(coldPaint).toFixed(1)}`);
    console.log(`first_paint.cold.max_ms ${Math.max(...coldPaint).toFixed(1)}`);
    console.log(`first_paint.warm.median_ms ${median(warmPaint).toFixed(1)}`);
    console.log(`first_paint.warm.max_ms ${Math.max(...warmPaint).toFixed(1)}`);
    console.log(`first_paint.cold_over_warm ${(median(coldPaint) / median(warmPaint)).toFixed(2)}`);
  }
} finally {
  await browser.close();
  await server.close();
  await hooks?.close();
}
