import type { Timing } from './benchmark.ts';

/**
 * Times `call` one call at a time with performance.now(), after `warmUp` untimed calls (JIT, caches),
 * and summarises the per-call times. Percentiles are nearest-rank over the sorted times.
 */
export function timeCalls(
  label: string,
  call: () => unknown,
  settings: { warmUp: number; calls: number },
): Timing {
  for (let i = 0; i < settings.warmUp; i += 1) call();
  const times: number[] = [];
  for (let i = 0; i < settings.calls; i += 1) {
    const start = performance.now();
    call();
    times.push(performance.now() - start);
  }
  return summariseTimes(label, times);
}

export function summariseTimes(label: string, times: readonly number[]): Timing {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  return {
    label,
    calls: sorted.length,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    mean: sorted.reduce((n, t) => n + t, 0) / Math.max(1, sorted.length),
    min: sorted[0] ?? 0,
    max: sorted[sorted.length - 1] ?? 0,
  };
}

/** Milliseconds with three significant digits at most, e.g. 0.512, 12.3, 1,234. */
export function formatMs(ms: number): string {
  if (ms >= 100) return Math.round(ms).toLocaleString('en-GB');
  return Number(ms.toPrecision(3)).toString();
}
