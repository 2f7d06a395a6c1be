import type { RawResult } from 'autocannon';
import { type LoadStats, type LoadTarget, runLoad, summarise } from './load.ts';
import { runPacedLoad } from './paced-load.ts';

export const WARM_UP_S = 2;
export const CONNECTIONS = 50;
/** Each side runs this many interleaved rounds of duration / ROUNDS seconds. */
export const ROUNDS = 2;
/**
 * The offered load of the latency phase unless a benchmark gives its own: well below either side's
 * capacity on the 2-core machines this runs on, so the percentiles measure the time a request takes,
 * not the length of a queue. An endpoint that cannot serve this many gives a lower rate.
 */
export const LATENCY_RATE = 2000;
/**
 * The shared machine stalls now and then for tens of milliseconds, whatever runs on it; one stall in
 * a 5-second sample is the whole p99. So the latency phase runs in alternating rounds and reports
 * each percentile as its median over the rounds.
 */
export const LATENCY_ROUNDS = 3;

export interface Comparison {
  /** At saturation: as many requests as the server answers. */
  full: LoadStats;
  baseline: LoadStats;
  /** full requests/s over baseline requests/s. */
  ratio: number;
  /** Requests/s offered in the latency phase (LATENCY_RATE unless the benchmark gave its own). */
  latencyRate: number;
  /** At latencyRate requests/s over the same connections. */
  fullAtRate: LoadStats;
  baselineAtRate: LoadStats;
}

/**
 * Measures the full stack against a baseline on the same machine, in the same run. Each side is warmed
 * up first (JIT, SQLite page cache); then the sides alternate, baseline first, so
 * that noise from other work on the machine lands on both sides rather than on one.
 */
export async function compareSideBySide(
  sides: { full: LoadTarget; baseline: LoadTarget },
  durationS: number,
  progress: (message: string) => void,
  latencyRate: number = LATENCY_RATE,
): Promise<Comparison> {
  const settings = (seconds: number) => ({ connections: CONNECTIONS, durationS: seconds });
  const paced = (seconds: number) => ({ ...settings(seconds), rate: latencyRate });
  progress(`warming up baseline and full stack (${WARM_UP_S} s each)…`);
  await runPacedLoad(sides.baseline, paced(WARM_UP_S));
  await runPacedLoad(sides.full, paced(WARM_UP_S));

  // At saturation every connection waits its turn, so latency there is connections / throughput,
  // whatever the server does; a fixed offered load shows what one request costs under load. It runs
  // before any autocannon run, whose garbage in this process would otherwise pause the timing client.
  const atRate: { full: LoadStats[]; baseline: LoadStats[] } = { full: [], baseline: [] };
  for (let round = 1; round <= LATENCY_ROUNDS; round += 1) {
    for (const side of ['baseline', 'full'] as const) {
      const name = side === 'full' ? 'full stack' : 'baseline';
      progress(
        `latency at ${latencyRate} req/s, round ${round}/${LATENCY_ROUNDS}: measuring ${name} ${formatSeconds(durationS / ROUNDS)} s…`,
      );
      atRate[side].push(await runPacedLoad(sides[side], paced(durationS / ROUNDS)));
    }
  }
  const fullAtRate = medianOfRounds(atRate.full);
  const baselineAtRate = medianOfRounds(atRate.baseline);

  progress(`warming up baseline and full stack under saturation (${WARM_UP_S} s each)…`);
  await runLoad(sides.baseline, settings(WARM_UP_S));
  await runLoad(sides.full, settings(WARM_UP_S));

  const roundS = durationS / ROUNDS;
  const rounds: { full: RawResult[]; baseline: RawResult[] } = { full: [], baseline: [] };
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const side of ['baseline', 'full'] as const) {
      const name = side === 'full' ? 'full stack' : 'baseline';
      progress(`round ${round}/${ROUNDS}: measuring ${name} ${formatSeconds(roundS)} s…`);
      rounds[side].push(await runLoad(sides[side], settings(roundS)));
    }
  }
  const full = summarise(sides.full, rounds.full);
  const baseline = summarise(sides.baseline, rounds.baseline);

  return {
    full,
    baseline,
    ratio: full.requestsPerSecond / baseline.requestsPerSecond,
    latencyRate,
    fullAtRate,
    baselineAtRate,
  };
}

function formatSeconds(seconds: number): string {
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);
}

/** Each percentile's median over rounds (max is the maximum); counts are totals. */
function medianOfRounds(rounds: LoadStats[]): LoadStats {
  const median = (of: (s: LoadStats) => number) => {
    const values = rounds.map(of).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? 0;
  };
  const requests = rounds.reduce((n, r) => n + r.requests, 0);
  const seconds = rounds.reduce((n, r) => n + r.seconds, 0);
  return {
    requests,
    seconds,
    requestsPerSecond: requests / seconds,
    bytesPerRequest: median((r) => r.bytesPerRequest),
    p50: median((r) => r.p50),
    p90: median((r) => r.p90),
    p99: median((r) => r.p99),
    max: Math.max(...rounds.map((r) => r.max)),
    non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
  };
}
