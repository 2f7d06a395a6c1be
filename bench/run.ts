/**
 * `npm run bench [-- --only <id>] [-- --duration <s>] [-- --cpu-prof-dir <dir>] [-- --strict]`: runs the benchmarks of
 * bench/registry.ts one after the other, shows progress on stderr, prints the verdicts and rewrites
 * docs/benchmarks.md, then the figures of docs/benchmarks.json and the chart drawn from them,
 * docs/benchmarks.svg. A missed target is a finding, not an error: the exit code is 0 unless a
 * benchmark could not run at all, or, with --strict (`npm run load`), a target was missed. With --cpu-prof-dir the full-stack servers write CPU profiles there,
 * and the (profiler-slowed) figures are printed but written to none of those files.
 *
 * Each benchmark runs in a runner process of its own (this script again, with `--only` it and
 * BENCH_RUNNER_CHILD set), one after the other: the runner is the load generator or the client of
 * most benchmarks and the process of the in-process ones, and one that had run others before carried
 * their heap, compiled code and sockets into the next (MCP find_slots round trips measured 2.1–2.9 ms
 * at p50 alone and 3.3–4.5 ms after the other benchmarks, docs/decisions.md "Benchmarks").
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BenchContext, ThroughputRow, Timing } from './lib/benchmark.ts';
import {
  type ChartEntry,
  chartEntry,
  mergeChartEntries,
  parseChartJson,
  renderChart,
  renderChartJson,
} from './lib/chart.ts';
import { LOAD_CPU, PINNING, pinProcess } from './lib/cpu-pinning.ts';
import type { LoadStats } from './lib/load.ts';
import { describeMachine } from './lib/machine.ts';
import { type Measured, renderReport } from './lib/report.ts';
import { formatMs } from './lib/timing.ts';
import { BENCHMARKS } from './registry.ts';

const REPORT = new URL('../docs/benchmarks.md', import.meta.url);
const CHART_FIGURES = new URL('../docs/benchmarks.json', import.meta.url);
const CHART = new URL('../docs/benchmarks.svg', import.meta.url);
const DEFAULT_DURATION_S = 10;

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    duration: { type: 'string' },
    'cpu-prof-dir': { type: 'string' },
    strict: { type: 'boolean' },
  },
});

const durationS = Number(values.duration ?? DEFAULT_DURATION_S);
if (!Number.isFinite(durationS) || durationS <= 0) usageError('--duration takes a number of seconds.');
const unknown = (values.only ?? []).filter((id) => !BENCHMARKS.some((b) => b.id === id));
if (unknown.length > 0) usageError(`--only: no benchmark ${unknown.join(', ')}.`);
const selected = BENCHMARKS.filter((b) => !values.only || values.only.includes(b.id));
const cpuProfileDir = values['cpu-prof-dir'];

if (selected.length > 1 && !process.env.BENCH_RUNNER_CHILD) {
  process.exitCode = runEachInItsOwnProcess();
  process.exit();
}

if (PINNING) pinProcess(process.pid, LOAD_CPU);
const machine = describeMachine();
const measured: Measured[] = [];
let failedToRun = false;
for (const [index, benchmark] of selected.entries()) {
  const context: BenchContext = {
    durationS,
    cpuProfileDir,
    progress: (message) =>
      process.stderr.write(
        `[${process.env.BENCH_RUNNER_CHILD ?? `${index + 1}/${selected.length}`}] ${benchmark.id}: ${message}\n`,
      ),
  };
  try {
    const result = await benchmark.run(context);
    measured.push({ benchmark, result, durationS });
    if (result.kind === 'http') {
      const { full, baseline, ratio, latencyRate, fullAtRate, baselineAtRate } = result.comparison;
      console.log(`${benchmark.id}: ${result.request}`);
      console.log(`  full stack ${perSide(full)}`);
      console.log(`  baseline   ${perSide(baseline)}`);
      console.log(`  ratio      ${ratio.toFixed(2)}`);
      console.log(
        `  at ${latencyRate} req/s: full stack ${atRate(fullAtRate)}, baseline ${atRate(baselineAtRate)}`,
      );
    } else if (result.kind === 'throughput') {
      console.log(`${benchmark.id}: ${result.subject}`);
      for (const r of result.rows) console.log(`  ${perRow(r)}`);
      for (const r of result.ratios) console.log(`  ${r.label}: ${r.value}`);
    } else if (result.kind === 'scenario') {
      console.log(`${benchmark.id}: ${result.subject}`);
      for (const table of result.tables) {
        for (const row of table.rows) console.log(`  ${row.join('  ')}`);
      }
      for (const fact of result.facts) console.log(`  ${fact.replaceAll('`', '')}`);
    } else {
      console.log(`${benchmark.id}: ${result.subject}`);
      for (const t of result.timings) console.log(`  ${perTiming(t)}`);
      for (const r of result.ratios) console.log(`  ${r.label}: ${r.value}`);
    }
    for (const t of result.targets)
      console.log(`  ${t.pass ? 'PASS' : 'FAIL'}  ${t.description}: ${t.measured}`);
  } catch (error) {
    failedToRun = true;
    console.error(`${benchmark.id}: could not run:`, error);
  }
}

if (cpuProfileDir) {
  console.log(
    `CPU profiles written to ${cpuProfileDir}; docs/benchmarks.md, .json and .svg left as they were.`,
  );
} else if (measured.length > 0) {
  const previous = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : '';
  writeFileSync(REPORT, renderReport(BENCHMARKS, measured, machine, previous));
  console.log(`Report written to docs/benchmarks.md`);
  const fresh = measured.map((m) => chartEntry(m.benchmark.id, m.result, machine));
  const entries = mergeChartEntries(
    BENCHMARKS.map((b) => b.id),
    previousChartEntries(),
    fresh,
  );
  writeFileSync(CHART_FIGURES, renderChartJson(entries));
  writeFileSync(CHART, renderChart(entries));
  console.log('Chart written to docs/benchmarks.svg');
}
const missed = measured.flatMap((m) =>
  m.result.targets.filter((t) => !t.pass).map((t) => `${m.benchmark.id}: ${t.description}`),
);
if (values.strict && missed.length > 0) console.error(`Missed targets (--strict):\n  ${missed.join('\n  ')}`);
process.exitCode = failedToRun || (values.strict && missed.length > 0) ? 1 : 0;

/**
 * Runs each selected benchmark in a runner process of its own, one after the other, each rewriting the
 * report and the chart with its own section as a run of it alone would; the exit code is the first
 * failing one's, after all have run.
 */
function runEachInItsOwnProcess(): number {
  // The arguments but the selection, which each child gets as its one `--only`.
  const passed = process.argv
    .slice(2)
    .filter((arg, i, args) => arg !== '--only' && args[i - 1] !== '--only' && !arg.startsWith('--only='));
  let exitCode = 0;
  for (const [index, benchmark] of selected.entries()) {
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, fileURLToPath(import.meta.url), ...passed, '--only', benchmark.id],
      {
        stdio: 'inherit',
        env: { ...process.env, BENCH_RUNNER_CHILD: `${index + 1}/${selected.length}` },
      },
    );
    if (child.error || child.signal) {
      console.error(
        `${benchmark.id}: the runner process ${child.error ? `did not start: ${child.error.message}` : `was killed by ${child.signal}`}`,
      );
    }
    if (exitCode === 0 && child.status !== 0) exitCode = child.status ?? 1;
  }
  return exitCode;
}

/** The figures of the benchmarks not run this time, which the chart draws as the report carries them over. */
function previousChartEntries(): ChartEntry[] {
  if (!existsSync(CHART_FIGURES)) return [];
  try {
    return parseChartJson(readFileSync(CHART_FIGURES, 'utf8'));
  } catch (error) {
    console.error(`docs/benchmarks.json unreadable, the chart shows only this run's benchmarks:`, error);
    return [];
  }
}

function perSide(s: LoadStats): string {
  return `${Math.round(s.requestsPerSecond)} req/s  p50 ${s.p50} ms  p90 ${s.p90} ms  p99 ${s.p99} ms  (${s.non2xx} non-2xx, ${s.errors} errors)`;
}

function atRate(s: LoadStats): string {
  return `p50 ${s.p50} ms  p90 ${s.p90} ms  p99 ${s.p99} ms`;
}

function perTiming(t: Timing): string {
  return `${t.label}: ${t.calls} calls  p50 ${formatMs(t.p50)} ms  p99 ${formatMs(t.p99)} ms  mean ${formatMs(t.mean)} ms`;
}

function perRow(r: ThroughputRow): string {
  return `${r.label}: ${Math.round(r.perSecond)}/s  p50 ${formatMs(r.p50)} ms  p99 ${formatMs(r.p99)} ms  (${r.count} writes, ${r.failures} failed)`;
}

function usageError(message: string): never {
  console.error(
    `${message}\nUsage: npm run bench [-- --only <id>]… [--duration <seconds>] [--cpu-prof-dir <dir>] [--strict]`,
  );
  console.error(`Benchmarks: ${BENCHMARKS.map((b) => b.id).join(', ')}`);
  process.exit(2);
}
