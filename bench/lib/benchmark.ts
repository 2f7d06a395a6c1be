import type { Comparison } from './compare.ts';

/** What the runner hands every benchmark. */
export interface BenchContext {
  /** Seconds of measurement per side (warm-up not included). */
  durationS: number;
  /** One line of progress for the person watching (stderr). */
  progress(message: string): void;
  /** When set, the full-stack server writes a CPU profile here; the figures are then not reported. */
  cpuProfileDir: string | undefined;
}

export interface Target {
  /** e.g. "Throughput full / baseline ≥ 0.6". */
  description: string;
  /** e.g. "0.72". */
  measured: string;
  pass: boolean;
}

export interface BenchmarkResult {
  /** The request measured, e.g. "GET /v1/locations/camden/services". */
  request: string;
  /** Markdown paragraphs: what the full stack does and what the data looks like. */
  method: string[];
  comparison: Comparison;
  targets: Target[];
}

/** One entry of bench/registry.ts. */
export interface Benchmark {
  /** Stable id: the --only value and the anchor of its section in docs/benchmarks.md. */
  id: string;
  run(context: BenchContext): Promise<BenchmarkResult>;
}
