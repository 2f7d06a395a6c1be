import type { Target } from './benchmark.ts';
import type { Comparison } from './compare.ts';

export interface HttpTargets {
  /** Full-stack requests/s over baseline requests/s must be at least this. */
  minRatio: number;
  /** Full-stack p99 latency must be under this, in milliseconds. */
  maxP99Ms: number;
}

/**
 * The verdicts of an HTTP benchmark against its baseline. A run with any non-2xx response or socket
 * error fails outright: it would have measured refusals or failures instead of work.
 */
export function judgeHttp(comparison: Comparison, targets: HttpTargets): Target[] {
  const { full, baseline, ratio } = comparison;
  const failures = (side: typeof full) => side.non2xx + side.errors;
  return [
    {
      description: `Throughput full / baseline ≥ ${targets.minRatio}`,
      measured: ratio.toFixed(2),
      pass: ratio >= targets.minRatio,
    },
    {
      description: `Full-stack p99 < ${targets.maxP99Ms} ms`,
      measured: `${full.p99} ms`,
      pass: full.p99 < targets.maxP99Ms,
    },
    {
      description: 'Every response 2xx, no socket errors (both sides)',
      measured: `full ${full.non2xx} non-2xx / ${full.errors} errors; baseline ${baseline.non2xx} / ${baseline.errors}`,
      pass: failures(full) === 0 && failures(baseline) === 0,
    },
  ];
}
