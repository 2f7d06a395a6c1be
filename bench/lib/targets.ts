import type { Target } from './benchmark.ts';
import type { Comparison } from './compare.ts';

export interface HttpTargets {
  /** Full-stack requests/s over baseline requests/s must be at least this. */
  minRatio: number;
  /** Full-stack p99 latency in the latency phase (at the comparison's rate) must be under this, in ms. */
  maxP99Ms: number;
}

/**
 * The verdicts of an HTTP benchmark against its baseline. A run with any non-2xx response or socket
 * error fails outright: it would have measured refusals or failures instead of work.
 */
export function judgeHttp(comparison: Comparison, targets: HttpTargets): Target[] {
  const { ratio, fullAtRate, baselineAtRate, latencyRate } = comparison;
  return [
    {
      description: `Throughput full / baseline ≥ ${targets.minRatio}`,
      measured: ratio.toFixed(2),
      pass: ratio >= targets.minRatio,
    },
    {
      description: `Full-stack p99 < ${targets.maxP99Ms} ms at 50 connections offering ${latencyRate} req/s`,
      measured: `${fullAtRate.p99} ms (baseline ${baselineAtRate.p99} ms)`,
      pass: fullAtRate.p99 < targets.maxP99Ms,
    },
    everyResponse2xx(comparison),
  ];
}

/** Fails on any non-2xx response or socket error, on either side, in either phase. */
export function everyResponse2xx(comparison: Comparison): Target {
  const { full, baseline, fullAtRate, baselineAtRate } = comparison;
  const sides = [full, baseline, fullAtRate, baselineAtRate];
  return {
    description: 'Every response 2xx, no socket errors (both sides, both phases)',
    measured: `${sides.reduce((n, s) => n + s.non2xx, 0)} non-2xx, ${sides.reduce((n, s) => n + s.errors, 0)} errors`,
    pass: sides.every((side) => side.non2xx + side.errors === 0),
  };
}
