import type { ThroughputRow } from './benchmark.ts';
import type { LoadStats } from './load.ts';
import { summariseTimes } from './timing.ts';

/** A write benchmark's row from the figures of HTTP load (autocannon's or the paced generator's). */
export function loadRow(label: string, s: LoadStats): ThroughputRow {
  return {
    label,
    perSecond: s.requestsPerSecond,
    p50: s.p50,
    p90: s.p90,
    p99: s.p99,
    max: s.max,
    count: s.requests,
    failures: s.non2xx + s.errors,
  };
}

/** A row from writes timed one by one (milliseconds each) over `seconds` of wall time. */
export function timesRow(
  label: string,
  times: readonly number[],
  seconds: number,
  failures = 0,
): ThroughputRow {
  const t = summariseTimes(label, times);
  return {
    label,
    perSecond: times.length / seconds,
    p50: t.p50,
    p90: t.p90,
    p99: t.p99,
    max: t.max,
    count: times.length,
    failures,
  };
}

/** Each percentile's median over rounds (max the maximum); counts and rates over all rounds. */
export function medianRow(label: string, rounds: ThroughputRow[]): ThroughputRow {
  const median = (of: (r: ThroughputRow) => number) => {
    const values = rounds.map(of).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? 0;
  };
  const count = rounds.reduce((n, r) => n + r.count, 0);
  const seconds = rounds.reduce((n, r) => n + r.count / r.perSecond, 0);
  return {
    label,
    perSecond: count / seconds,
    p50: median((r) => r.p50),
    p90: median((r) => r.p90),
    p99: median((r) => r.p99),
    max: Math.max(...rounds.map((r) => r.max)),
    count,
    failures: rounds.reduce((n, r) => n + r.failures, 0),
  };
}
