import type { RawResult } from 'autocannon';
import { type LoadStats, type LoadTarget, runLoad, summarise } from './load.ts';

export const WARM_UP_S = 2;
export const CONNECTIONS = 50;
/** Each side runs this many interleaved rounds of duration / ROUNDS seconds. */
export const ROUNDS = 2;

export interface Comparison {
  full: LoadStats;
  baseline: LoadStats;
  /** full requests/s over baseline requests/s. */
  ratio: number;
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
): Promise<Comparison> {
  const settings = (seconds: number) => ({ connections: CONNECTIONS, durationS: seconds });
  progress(`warming up baseline and full stack (${WARM_UP_S} s each)…`);
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
  return { full, baseline, ratio: full.requestsPerSecond / baseline.requestsPerSecond };
}

function formatSeconds(seconds: number): string {
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);
}
