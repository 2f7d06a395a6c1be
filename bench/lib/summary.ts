import type { BenchmarkResult, Target } from './benchmark.ts';

/**
 * What docs/benchmarks.md says of a benchmark besides its figures, kept in docs/benchmarks.json with
 * them so that the page can be written again from the file alone: its title, the ratio to its
 * baseline where the benchmark states one, and every target with its verdict.
 */
export interface BenchmarkSummary {
  title: string;
  /** The benchmark's own ratio to its baseline ("POST / raw inserts, saturation: 0.78"), if it has one. */
  ratio?: { label: string; value: string };
  targets: Target[];
}

export function summaryOf(result: BenchmarkResult): BenchmarkSummary {
  const ratio = result.kind === 'timing' || result.kind === 'throughput' ? result.ratios[0] : undefined;
  return { title: titleOf(result), ...(ratio ? { ratio } : {}), targets: result.targets };
}

function titleOf(result: BenchmarkResult): string {
  if (result.kind === 'http') return `\`${result.request}\``;
  if (result.kind === 'timing') return `\`${result.subject}\` ${result.setting?.heading ?? 'in process'}`;
  if (result.kind === 'throughput') return `\`${result.subject}\``;
  return result.subject;
}
