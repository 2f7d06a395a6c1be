/**
 * `npm run bench -- [--only <id>]… [--duration <s>] [--write] [--strict] [--cpu-prof-dir <dir>]` (USAGE
 * below): runs the benchmarks of bench/registry.ts one after the other, shows progress on stderr and
 * prints the figures and verdicts. Only with --write does it rewrite the tracked files: the figures of
 * docs/benchmarks.json, then docs/benchmarks.md and the chart docs/benchmarks.svg drawn from them. A
 * missed target is a finding, not an error: the exit code is 0 unless a benchmark could not run at
 * all, or, with --strict (`npm run load`), a target was missed. With --cpu-prof-dir the full-stack
 * servers write CPU profiles there, and the (profiler-slowed) figures are never written.
 *
 * Each benchmark runs in a runner process of its own (this script again, with `--only` it and
 * BENCH_RUNNER_CHILD set), one after the other: the runner is the load generator or the client of
 * most benchmarks and the process of the in-process ones, and one that had run others before carried
 * their heap, compiled code and sockets into the next (MCP find_slots round trips measured 2.1–2.9 ms
 * at p50 alone and 3.3–4.5 ms after the other benchmarks, docs/decisions/benchmarks-one-process-each.md).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type ParseArgsConfig, parseArgs } from 'node:util';
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

const USAGE = `Usage: npm run bench -- [options]

Runs the benchmarks one after the other (each in a process of its own; all of them take about fifteen
minutes) and prints their figures and verdicts.

Options:
  --only <id>           run only this benchmark (repeatable)
  --duration <seconds>  measuring time per side (default ${DEFAULT_DURATION_S})
  --write               also rewrite docs/benchmarks.json, docs/benchmarks.md and docs/benchmarks.svg
  --render              run nothing: rewrite docs/benchmarks.md and .svg from docs/benchmarks.json
  --strict              exit 1 when a target is missed (npm run load)
  --cpu-prof-dir <dir>  write CPU profiles of the servers there (figures never written)
  -h, --help            print this help

Benchmarks: ${BENCHMARKS.map((b) => b.id).join(', ')}`;

const { values } = parseOptions({
  options: {
    only: { type: 'string', multiple: true },
    duration: { type: 'string' },
    'cpu-prof-dir': { type: 'string' },
    strict: { type: 'boolean' },
    write: { type: 'boolean' },
    render: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});

const LEFT_AS_THEY_WERE = 'Tracked files left as they were: --write rewrites docs/benchmarks.{json,md,svg}.';

if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

if (values.render) {
  const entries = previousChartEntries();
  writeFileSync(REPORT, renderReport(entries));
  writeFileSync(CHART, renderChart(entries));
  console.log(
    `Written from docs/benchmarks.json (${entries.length} benchmarks): docs/benchmarks.md and .svg`,
  );
  process.exit(0);
}

const durationS = Number(values.duration ?? DEFAULT_DURATION_S);
if (!Number.isFinite(durationS) || durationS <= 0) usageError('--duration takes a number of seconds.');
const unknown = (values.only ?? []).filter((id) => !BENCHMARKS.some((b) => b.id === id));
if (unknown.length > 0) usageError(`--only: no benchmark ${unknown.join(', ')}.`);
const selected = BENCHMARKS.filter((b) => !values.only || values.only.includes(b.id));
const cpuProfileDir = values['cpu-prof-dir'];

if (selected.length > 1 && !process.env.BENCH_RUNNER_CHILD) {
  process.exitCode = runEachInItsOwnProcess();
  if (!values.write && !cpuProfileDir) console.log(LEFT_AS_THEY_WERE);
  process.exit();
}

if (PINNING) pinProcess(process.pid, LOAD_CPU);
const machine = describeMachine();
const measured: Measured[] = [];
let failedToRun = false;
for (const [index, { id, load }] of selected.entries()) {
  const context: BenchContext = {
    durationS,
    cpuProfileDir,
    progress: (message) =>
      process.stderr.write(
        `[${process.env.BENCH_RUNNER_CHILD ?? `${index + 1}/${selected.length}`}] ${id}: ${message}\n`,
      ),
  };
  try {
    const benchmark = await load();
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
    console.error(`${id}: could not run:`, error);
  }
}

if (cpuProfileDir) {
  console.log(
    `CPU profiles written to ${cpuProfileDir}; docs/benchmarks.md, .json and .svg left as they were.`,
  );
} else if (measured.length > 0 && values.write) {
  const fresh = measured.map((m) => chartEntry(m.benchmark.id, m.result, machine));
  const entries = mergeChartEntries(
    BENCHMARKS.map((b) => b.id),
    previousChartEntries(),
    fresh,
  );
  writeFileSync(CHART_FIGURES, renderChartJson(entries));
  writeFileSync(REPORT, renderReport(entries));
  writeFileSync(CHART, renderChart(entries));
  console.log('Written: docs/benchmarks.json, docs/benchmarks.md and docs/benchmarks.svg');
} else if (measured.length > 0 && !process.env.BENCH_RUNNER_CHILD) {
  console.log(LEFT_AS_THEY_WERE);
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

/** Node's argument parser, its refusal of an unknown option told with the usage. */
function parseOptions<T extends ParseArgsConfig>(config: T) {
  try {
    return parseArgs(config);
  } catch (error) {
    return usageError((error as Error).message);
  }
}

function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}
