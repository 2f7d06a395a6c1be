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

/**
 * What a benchmark measured: an HTTP endpoint against its baseline, calls timed in process, or a write
 * path's sustained rate against raw writes of the same rows.
 */
export type BenchmarkResult =
  | HttpBenchmarkResult
  | TimingBenchmarkResult
  | ThroughputBenchmarkResult
  | ScenarioBenchmarkResult;

export interface HttpBenchmarkResult {
  kind: 'http';
  /** The request measured, e.g. "GET /v1/locations/camden/services". */
  request: string;
  /** Markdown paragraphs: what the full stack does and what the data looks like. */
  method: string[];
  comparison: Comparison;
  targets: Target[];
}

/** Calls timed one by one in the runner process, e.g. a pure function against a slower reference. */
export interface TimingBenchmarkResult {
  kind: 'timing';
  /** What is timed, e.g. "findSlots(query)". */
  subject: string;
  /**
   * Where the calls run, when not all in the runner process: `heading` replaces "in process" after the
   * subject in the section's title, `detail` replaces "in the runner process" after its date.
   */
  setting?: { heading: string; detail: string };
  /** Markdown paragraphs: what is timed, on what data, against which baseline. */
  method: string[];
  /** One row per thing timed, the subject first. */
  timings: Timing[];
  /** Lines under the table, e.g. "Speed-up (oracle p50 / engine p50): ×1,200". */
  ratios: { label: string; value: string }[];
  targets: Target[];
}

/**
 * Sustained writes: an endpoint through the whole stack against the same rows written straight to the
 * database, each side in its own process, in the same run.
 */
export interface ThroughputBenchmarkResult {
  kind: 'throughput';
  /** What is written, e.g. "POST /v1/bookings". */
  subject: string;
  /** Markdown paragraphs: what each side does, on what data, how it is driven. */
  method: string[];
  /** One row per side and phase, the full stack first. */
  rows: ThroughputRow[];
  /** Lines under the table, e.g. "POST / raw (saturation): 0.62". */
  ratios: { label: string; value: string }[];
  targets: Target[];
}

/**
 * A scenario run against the real service to prove it holds (mixed load, crash, abuse): its figures as
 * tables and facts, and its targets, which are pass/fail properties more than speeds.
 */
export interface ScenarioBenchmarkResult {
  kind: 'scenario';
  /** What was run, e.g. "Mixed load against `booking serve`". */
  subject: string;
  /** Markdown paragraphs: what the scenario does and how its outcome is checked. */
  method: string[];
  tables: ScenarioTable[];
  /** Markdown list items under the tables: counts, durations, what was checked afterwards. */
  facts: string[];
  targets: Target[];
}

export interface ScenarioTable {
  header: string[];
  rows: string[][];
  /** Which columns hold numbers (right-aligned). */
  numeric: boolean[];
}

export interface ThroughputRow {
  label: string;
  /** Writes completed per second of measuring time. */
  perSecond: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Writes completed. */
  count: number;
  /** Writes that failed (any other status than the one expected, socket errors). */
  failures: number;
}

/** The per-call times of one thing timed, in milliseconds. */
export interface Timing {
  label: string;
  calls: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** One entry of bench/registry.ts. */
export interface Benchmark {
  /** Stable id: the --only value and the anchor of its section in docs/benchmarks.md. */
  id: string;
  run(context: BenchContext): Promise<BenchmarkResult>;
}
