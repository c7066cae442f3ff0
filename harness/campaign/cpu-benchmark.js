// The campaign's CPU benchmark (summary.json's meta.cpu_benchmark, shown in
// the report's Environment), as browsertime records one: a fixed piece of
// JavaScript timed a few times as the campaign starts, whose median says
// how fast this machine ran JavaScript then, so that campaigns on
// different machines, or one machine under other load, can be told apart.
// Timed in Node.js rather than in the browser: V8 is Chromium's JavaScript
// engine too, and no browser has to start for it; it measures the
// machine, not the page (--cpu-slowdown does not apply to it).
import { median } from '../core/stats.js';

// A few hundred ms in all on a 2-core VM of 2026 (60 ms a round there).
export const ROUNDS = 5;
export const ITERATIONS = 4_000_000;

// The workload: a linear congruential generator, whose result is returned
// so that the engine cannot leave the loop out.
export function workload(iterations = ITERATIONS) {
  let x = 1;
  for (let i = 0; i < iterations; i++) x = (x * 1103515245 + 12345 + i) % 2147483647;
  return x;
}

/**
 * Times ROUNDS rounds of the workload (`now`: the clock, in ms). Returns
 * {score_ms (the median round, lower is faster), rounds_ms, iterations,
 * runtime}.
 */
export function cpuBenchmark({ rounds = ROUNDS, iterations = ITERATIONS, now = () => performance.now() } = {}) {
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = now();
    workload(iterations);
    times.push(Math.round((now() - t0) * 10) / 10);
  }
  return { score_ms: median(times), rounds_ms: times, iterations, runtime: `Node.js ${process.version}` };
}
