import type { BenchmarkResult, ThroughputRow, Timing } from './benchmark.ts';
import type { LoadStats } from './load.ts';
import { type Machine, machineSummary } from './machine.ts';
import { type BenchmarkSummary, summaryOf } from './summary.ts';
import { formatMs } from './timing.ts';

/**
 * docs/benchmarks.svg, drawn from docs/benchmarks.json: per benchmark, the full stack (or the code under
 * test) against its baseline, throughput as a share of the baseline's and latency percentiles on a log
 * axis. The JSON keeps only the figures the chart draws, so that a run of some benchmarks (--only) can
 * draw the others from the previous run, as docs/benchmarks.md carries their sections over.
 */

/** What the chart draws of an HTTP benchmark: throughput at saturation, latency at the fixed load. */
export interface HttpFigures {
  kind: 'http';
  request: string;
  full: Pick<LoadStats, 'requestsPerSecond'>;
  baseline: Pick<LoadStats, 'requestsPerSecond'>;
  latencyRate: number;
  fullAtRate: Pick<LoadStats, 'p50' | 'p90' | 'p99'>;
  baselineAtRate: Pick<LoadStats, 'p50' | 'p90' | 'p99'>;
}

/**
 * A write benchmark: rows labelled "Full stack…" against the others (raw writes), paired in order, one
 * pair per phase, saturation first (bench/bookings-endpoint.ts).
 */
export interface ThroughputFigures {
  kind: 'throughput';
  subject: string;
  rows: Pick<ThroughputRow, 'label' | 'perSecond' | 'p50' | 'p99'>[];
}

/** Calls timed one by one: consecutive pairs, the code under test first, then its baseline. */
export interface TimingFigures {
  kind: 'timing';
  subject: string;
  timings: Pick<Timing, 'label' | 'p50' | 'p99'>[];
}

export type ChartFigures = HttpFigures | ThroughputFigures | TimingFigures;

/** A kind of result this chart does not draw (added to the runner after it): stored, never drawn. */
export interface OtherFigures {
  kind: string;
}

/** One benchmark's entry in docs/benchmarks.json. */
export interface ChartEntry {
  id: string;
  /** ISO date and time of the run that measured it. */
  measuredAt: string;
  /** machineSummary() of the machine that measured it. */
  machine: string;
  figures: ChartFigures | OtherFigures;
  /** Title, baseline ratio and targets, from which docs/benchmarks.md is written. */
  summary?: BenchmarkSummary;
}

const DRAWN_KINDS: readonly string[] = ['http', 'throughput', 'timing'];

/** The figures of one fresh result, rounded to four significant digits to keep the JSON small. */
export function chartEntry(id: string, result: BenchmarkResult, machine: Machine): ChartEntry {
  return {
    id,
    measuredAt: machine.date,
    machine: machineSummary(machine),
    figures: figuresOf(result),
    summary: summaryOf(result),
  };
}

function figuresOf(result: BenchmarkResult): ChartFigures | OtherFigures {
  if (result.kind === 'http') {
    const { full, baseline, latencyRate, fullAtRate, baselineAtRate } = result.comparison;
    const percentiles = (s: LoadStats) => ({ p50: round(s.p50), p90: round(s.p90), p99: round(s.p99) });
    return {
      kind: 'http',
      request: result.request,
      full: { requestsPerSecond: round(full.requestsPerSecond) },
      baseline: { requestsPerSecond: round(baseline.requestsPerSecond) },
      latencyRate,
      fullAtRate: percentiles(fullAtRate),
      baselineAtRate: percentiles(baselineAtRate),
    };
  }
  if (result.kind === 'throughput') {
    return {
      kind: 'throughput',
      subject: result.subject,
      rows: result.rows.map((r) => ({
        label: r.label,
        perSecond: round(r.perSecond),
        p50: round(r.p50),
        p99: round(r.p99),
      })),
    };
  }
  if (result.kind === 'timing') {
    return {
      kind: 'timing',
      subject: result.subject,
      timings: result.timings.map((t) => ({ label: t.label, p50: round(t.p50), p99: round(t.p99) })),
    };
  }
  // Kept, so that it replaces the previous entry of its benchmark, but not drawn.
  return { kind: (result as { kind: string }).kind };
}

function round(value: number): number {
  return Number(value.toPrecision(4));
}

/**
 * The entries to draw, in registry order: this run's, and the previous file's for the benchmarks not
 * run this time. Benchmarks no longer registered are dropped, as their sections are from the report.
 */
export function mergeChartEntries(
  registryIds: readonly string[],
  previous: readonly ChartEntry[],
  fresh: readonly ChartEntry[],
): ChartEntry[] {
  return registryIds.flatMap((id) => {
    const entry = fresh.find((e) => e.id === id) ?? previous.find((e) => e.id === id);
    return entry ? [entry] : [];
  });
}

export function renderChartJson(entries: readonly ChartEntry[]): string {
  const file = {
    about:
      'Figures of each benchmark as last measured, written by npm run bench -- --write (bench/run.ts): one entry per benchmark, carried over from the previous run when not measured. docs/benchmarks.md and docs/benchmarks.svg are drawn from them.',
    benchmarks: entries,
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * The entries of a previous docs/benchmarks.json. Entries whose figures do not have the shape their
 * kind needs are dropped (the next run of their benchmark writes them again); throws on invalid JSON.
 */
export function parseChartJson(text: string): ChartEntry[] {
  const file: unknown = JSON.parse(text);
  const benchmarks = isRecord(file) && Array.isArray(file.benchmarks) ? file.benchmarks : [];
  return benchmarks.filter(
    (e): e is ChartEntry =>
      isRecord(e) &&
      typeof e.id === 'string' &&
      typeof e.measuredAt === 'string' &&
      typeof e.machine === 'string' &&
      isRecord(e.figures) &&
      typeof e.figures.kind === 'string' &&
      (!DRAWN_KINDS.includes(e.figures.kind) || hasItsShape(e.figures)),
  );
}

function hasItsShape(figures: Record<string, unknown>): boolean {
  const percentiles = ['p50', 'p90', 'p99'];
  if (figures.kind === 'http') {
    return (
      typeof figures.request === 'string' &&
      isNumber(figures.latencyRate) &&
      hasNumbers(figures.full, ['requestsPerSecond']) &&
      hasNumbers(figures.baseline, ['requestsPerSecond']) &&
      hasNumbers(figures.fullAtRate, percentiles) &&
      hasNumbers(figures.baselineAtRate, percentiles)
    );
  }
  const list = figures.kind === 'throughput' ? figures.rows : figures.timings;
  const numbers = figures.kind === 'throughput' ? ['perSecond', 'p50', 'p99'] : ['p50', 'p99'];
  return (
    typeof figures.subject === 'string' &&
    Array.isArray(list) &&
    list.every((item) => hasNumbers(item, numbers) && typeof item.label === 'string')
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function hasNumbers(value: unknown, keys: readonly string[]): boolean {
  return isRecord(value) && keys.every((key) => isNumber(value[key]));
}

// ---------------------------------------------------------------------------------------------------
// Drawing

const WIDTH = 960;
const MARGIN = 24;
const LABEL_WIDTH = 270;
const VALUE_WIDTH = 200;
const PLOT_LEFT = MARGIN + LABEL_WIDTH;
const PLOT_RIGHT = WIDTH - MARGIN - VALUE_WIDTH;
const ROW_HEIGHT = 22;
const BAR_HEIGHT = 14;
const HEADER_HEIGHT = 24;
const GROUP_GAP = 14;
const PAIR_GAP = 6;

// Okabe–Ito blue and orange: told apart with every common colour-vision deficiency, and in grey.
const FULL_COLOUR = '#0072B2';
const BASELINE_COLOUR = '#E69F00';
const TEXT_COLOUR = '#1a1a1a';
const MUTED_COLOUR = '#595959';
const GRID_COLOUR = '#e3e3e3';
const AXIS_COLOUR = '#8c8c8c';
const SANS = 'Helvetica, Arial, sans-serif';
const MONO = 'Menlo, Consolas, DejaVu Sans Mono, monospace';
// Average advance of a character, to shorten labels that would run into their neighbours.
const SANS_CHAR_PX = 0.6;
const MONO_CHAR_PX = 0.61;

type Role = 'full' | 'baseline';

interface Header {
  id: string;
  subject: string;
  measuredAt: string;
}

interface ThroughputGroup {
  header: Header;
  unit: string;
  full: { label: string; perSecond: number };
  baseline: { label: string; perSecond: number };
}

interface LatencyRow {
  role: Role;
  label: string;
  p50: number;
  p90?: number;
  p99: number;
}

interface LatencyGroup {
  header: Header;
  /** Each the full stack then its baseline (when it has one). */
  pairs: LatencyRow[][];
}

/** The chart of the entries given, a standalone SVG document 960 px wide. */
export function renderChart(entries: readonly ChartEntry[]): string {
  const drawn = entries.filter((e): e is ChartEntry & { figures: ChartFigures } =>
    DRAWN_KINDS.includes(e.figures.kind),
  );
  const throughputGroups = drawn.flatMap(throughputGroupOf);
  const latencyGroups = drawn.flatMap(latencyGroupOf);
  const latencyOnly = drawn.filter((e) => e.figures.kind === 'timing').map((e) => e.id);

  const parts: string[] = [];
  let y = drawHeading(parts, drawn);
  if (throughputGroups.length > 0) y = drawThroughputPanel(parts, throughputGroups, latencyOnly, y + 16);
  if (latencyGroups.length > 0) y = drawLatencyPanel(parts, latencyGroups, y + 16);
  if (drawn.length === 0) {
    parts.push(text(MARGIN, y + 30, 'No benchmark figures to draw.', { fill: MUTED_COLOUR }));
    y += 40;
  }
  const height = Math.ceil(y + MARGIN);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="chart-title" font-family="${SANS}" font-size="12" fill="${TEXT_COLOUR}">`,
    `<title id="chart-title">${escapeXml(TITLE)}</title>`,
    // GitHub's dark theme shows an SVG on its own background: the text needs a light one under it.
    rect(0, 0, WIDTH, height, { fill: '#ffffff' }),
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

const TITLE = 'Throughput and latency per benchmark against its baseline';

function throughputGroupOf(entry: ChartEntry & { figures: ChartFigures }): ThroughputGroup[] {
  const { figures } = entry;
  if (figures.kind === 'http') {
    return [
      {
        header: headerOf(entry, figures.request),
        unit: 'req/s',
        full: { label: 'Full stack', perSecond: figures.full.requestsPerSecond },
        baseline: { label: 'Baseline (bare route)', perSecond: figures.baseline.requestsPerSecond },
      },
    ];
  }
  if (figures.kind === 'throughput') {
    const [saturation] = throughputPairs(figures);
    if (!saturation) return [];
    const [full, baseline] = saturation;
    return [{ header: headerOf(entry, figures.subject), unit: 'writes/s', full, baseline }];
  }
  // Calls timed one at a time have a latency, not a throughput.
  return [];
}

function latencyGroupOf(entry: ChartEntry & { figures: ChartFigures }): LatencyGroup[] {
  const { figures } = entry;
  if (figures.kind === 'http') {
    const rate = `at ${figures.latencyRate.toLocaleString('en-GB')} req/s`;
    return [
      {
        header: headerOf(entry, figures.request),
        pairs: [
          [
            { role: 'full', label: `Full stack ${rate}`, ...figures.fullAtRate },
            { role: 'baseline', label: `Baseline ${rate}`, ...figures.baselineAtRate },
          ],
        ],
      },
    ];
  }
  if (figures.kind === 'throughput') {
    // The last phase is at a fixed rate below saturation, where latency is not just the queue.
    const last = throughputPairs(figures).at(-1);
    if (!last) return [];
    const [full, baseline] = last;
    return [
      {
        header: headerOf(entry, figures.subject),
        pairs: [
          [
            { role: 'full', ...full },
            { role: 'baseline', ...baseline },
          ],
        ],
      },
    ];
  }
  const pairs: LatencyRow[][] = [];
  for (let i = 0; i < figures.timings.length; i += 2) {
    const [subject, baseline] = figures.timings.slice(i, i + 2);
    if (!subject) continue;
    pairs.push([
      { role: 'full', ...subject },
      ...(baseline ? [{ role: 'baseline' as const, ...baseline }] : []),
    ]);
  }
  return pairs.length > 0 ? [{ header: headerOf(entry, figures.subject), pairs }] : [];
}

type ThroughputSide = ThroughputFigures['rows'][number];

function throughputPairs(figures: ThroughputFigures): [ThroughputSide, ThroughputSide][] {
  const isFull = (row: ThroughputSide) => row.label.startsWith('Full stack');
  const full = figures.rows.filter(isFull);
  const others = figures.rows.filter((row) => !isFull(row));
  return full.flatMap((row, i) => {
    const baseline = others[i];
    return baseline ? [[row, baseline] as [ThroughputSide, ThroughputSide]] : [];
  });
}

function headerOf(entry: ChartEntry, subject: string): Header {
  return { id: entry.id, subject, measuredAt: entry.measuredAt };
}

function drawHeading(parts: string[], entries: readonly ChartEntry[]): number {
  parts.push(text(MARGIN, 36, TITLE, { 'font-size': 20, 'font-weight': 'bold' }));
  const machines = [...new Set(entries.map((e) => e.machine))];
  const where =
    machines.length === 1
      ? `Measured on ${machines[0]}`
      : 'Measured on the machines named in docs/benchmarks.md';
  parts.push(
    text(
      MARGIN,
      58,
      'Each benchmark’s full stack (or code under test) against its baseline, from the latest npm run bench of each.',
      { fill: MUTED_COLOUR },
    ),
  );
  parts.push(
    text(MARGIN, 75, `${where}. Every figure, and how it is measured: docs/benchmarks.md.`, {
      fill: MUTED_COLOUR,
    }),
  );
  const legendY = 102;
  let x = MARGIN;
  for (const [colour, label] of [
    [FULL_COLOUR, 'Full stack / code under test'],
    [BASELINE_COLOUR, 'Baseline: bare route, raw writes, in-process call or reference'],
  ] as const) {
    parts.push(rect(x, legendY - 10, 14, 12, { fill: colour }));
    parts.push(text(x + 20, legendY, label));
    x += 20 + textWidth(label, 12) + 22;
  }
  for (const percentile of ['p50', 'p90', 'p99'] as const) {
    parts.push(marker(percentile, x + 5, legendY - 4, MUTED_COLOUR));
    parts.push(text(x + 14, legendY, percentile));
    x += 14 + textWidth(percentile, 12) + 14;
  }
  return legendY + 6;
}

function drawThroughputPanel(
  parts: string[],
  groups: ThroughputGroup[],
  latencyOnly: string[],
  top: number,
): number {
  let y = top + 18;
  parts.push(
    text(MARGIN, y, 'Throughput at saturation, as a share of the baseline’s (higher is better)', {
      'font-size': 15,
      'font-weight': 'bold',
    }),
  );
  y += 10;
  const ratios = groups.map((g) => g.full.perSecond / g.baseline.perSecond).filter(Number.isFinite);
  const maxRatio = Math.max(1, ...ratios);
  // Quarters of the baseline, at least up to the baseline itself; coarser should a full stack outrun it.
  const step = maxRatio <= 2 ? 0.25 : Math.ceil(maxRatio / 8);
  const domainMax = Math.ceil(maxRatio / step) * step;
  const xOf = (share: number) => PLOT_LEFT + (Math.max(0, share) / domainMax) * (PLOT_RIGHT - PLOT_LEFT);
  const ticks = Array.from({ length: Math.round(domainMax / step) + 1 }, (_, i) => i * step);

  for (const group of groups) {
    y += GROUP_GAP;
    y = drawGroupHeader(parts, group.header, y);
    const bandTop = y;
    const bandBottom = y + 2 * ROW_HEIGHT;
    parts.push(...ticks.map((t) => gridLine(xOf(t), bandTop, bandBottom)));
    const ratio = group.full.perSecond / group.baseline.perSecond;
    const sides = [
      {
        role: 'full' as const,
        ...group.full,
        share: ratio,
        note: Number.isFinite(ratio) ? ratioNote(ratio) : '',
      },
      { role: 'baseline' as const, ...group.baseline, share: 1, note: '' },
    ];
    for (const side of sides) {
      const middle = y + ROW_HEIGHT / 2;
      parts.push(rowLabel(side.label, middle));
      const end = Number.isFinite(side.share) ? xOf(side.share) : PLOT_LEFT;
      parts.push(
        rect(PLOT_LEFT, middle - BAR_HEIGHT / 2, end - PLOT_LEFT, BAR_HEIGHT, { fill: colourOf(side.role) }),
      );
      const value = `${Math.round(side.perSecond).toLocaleString('en-GB')} ${group.unit}`;
      parts.push(
        text(end + 6, middle + 4, value, {}, side.note ? tspan(side.note, 8, { fill: MUTED_COLOUR }) : ''),
      );
      y += ROW_HEIGHT;
    }
  }
  y += 6;
  parts.push(line(PLOT_LEFT, y, PLOT_RIGHT, y, AXIS_COLOUR));
  for (const t of ticks) {
    parts.push(line(xOf(t), y, xOf(t), y + 4, AXIS_COLOUR));
    parts.push(
      text(xOf(t), y + 17, `${Math.round(t * 100)}%`, {
        'text-anchor': 'middle',
        fill: MUTED_COLOUR,
        'font-size': 11,
      }),
    );
  }
  y += 36;
  parts.push(
    text((PLOT_LEFT + PLOT_RIGHT) / 2, y, 'Throughput as a share of its baseline’s (baseline = 100%)', {
      'text-anchor': 'middle',
    }),
  );
  if (latencyOnly.length > 0) {
    y += 22;
    parts.push(
      text(
        MARGIN,
        y,
        `Not in this panel: ${latencyOnly.join(', ')} (calls timed one at a time: latency only, below).`,
        { fill: MUTED_COLOUR, 'font-size': 11 },
      ),
    );
  }
  return y;
}

function ratioNote(ratio: number): string {
  return `${ratio.toFixed(2)} × baseline`;
}

function drawLatencyPanel(parts: string[], groups: LatencyGroup[], top: number): number {
  let y = top + 18;
  parts.push(
    text(MARGIN, y, 'Latency percentiles in ms, log scale (lower is better)', {
      'font-size': 15,
      'font-weight': 'bold',
    }),
  );
  y += 18;
  parts.push(
    text(
      MARGIN,
      y,
      'HTTP: p50, p90 and p99 at the fixed offered load in the row’s label, below capacity; writes: p50 and p99 at a fixed rate; timed calls: p50 and p99, one at a time.',
      { fill: MUTED_COLOUR, 'font-size': 11 },
    ),
  );
  const values = groups.flatMap((g) =>
    g.pairs.flat().flatMap((r) => [r.p50, r.p90, r.p99].filter((v): v is number => isNumber(v) && v > 0)),
  );
  const scale = logScale(values, PLOT_LEFT, PLOT_RIGHT);
  const gridValues = scale.ticks.map((t) => t.value);

  for (const group of groups) {
    y += GROUP_GAP;
    y = drawGroupHeader(parts, group.header, y);
    const rows = group.pairs.reduce((n, pair) => n + pair.length, 0);
    const bandBottom = y + rows * ROW_HEIGHT + (group.pairs.length - 1) * PAIR_GAP;
    parts.push(...gridValues.map((v) => gridLine(scale.x(v), y, bandBottom)));
    for (const [index, pair] of group.pairs.entries()) {
      if (index > 0) y += PAIR_GAP;
      for (const row of pair) {
        drawLatencyRow(parts, row, y + ROW_HEIGHT / 2, scale.x);
        y += ROW_HEIGHT;
      }
    }
  }
  y += 6;
  parts.push(line(PLOT_LEFT, y, PLOT_RIGHT, y, AXIS_COLOUR));
  for (const tick of scale.ticks) {
    const x = scale.x(tick.value);
    parts.push(line(x, y, x, y + (tick.major ? 5 : 3), AXIS_COLOUR));
    if (!tick.labelled) continue;
    parts.push(
      text(x, y + 17, formatTick(tick.value), {
        'text-anchor': 'middle',
        fill: tick.major ? TEXT_COLOUR : MUTED_COLOUR,
        'font-size': tick.major ? 11 : 10,
        class: 'latency-tick',
      }),
    );
  }
  y += 36;
  parts.push(
    text((PLOT_LEFT + PLOT_RIGHT) / 2, y, 'Latency (ms, log scale)', {
      'text-anchor': 'middle',
    }),
  );
  return y;
}

function drawLatencyRow(parts: string[], row: LatencyRow, middle: number, xOf: (ms: number) => number): void {
  const colour = colourOf(row.role);
  parts.push(rowLabel(row.label, middle));
  const drawable = (['p50', 'p90', 'p99'] as const).flatMap((p) => {
    const ms = row[p];
    return ms !== undefined && isNumber(ms) ? [{ p, ms }] : [];
  });
  const first = drawable[0];
  const last = drawable.at(-1);
  if (first && last) {
    parts.push(line(xOf(first.ms), middle, xOf(last.ms), middle, colour, 2));
  }
  for (const { p, ms } of drawable) parts.push(marker(p, xOf(ms), middle, colour, ms));
  const values = drawable.map(({ p, ms }) => `${p} ${formatMs(ms)}`).join(' · ');
  parts.push(text(PLOT_RIGHT + 12, middle + 4, `${values} ms`, { 'font-size': 11 }));
}

function drawGroupHeader(parts: string[], header: Header, y: number): number {
  const date = `measured ${header.measuredAt.slice(0, 10)}`;
  const room = WIDTH - 2 * MARGIN - textWidth(date, 11) - 16 - textWidth(header.id, 13, true) - 8;
  const subject = shorten(header.subject, Math.floor(room / (11 * MONO_CHAR_PX)));
  const baseline = y + HEADER_HEIGHT - 8;
  parts.push(
    text(
      MARGIN,
      baseline,
      header.id,
      { 'font-size': 13, 'font-weight': 'bold' },
      tspan(subject, 10, { 'font-family': MONO, 'font-size': 11, 'font-weight': 'normal' }),
    ),
  );
  parts.push(
    text(WIDTH - MARGIN, baseline, date, { 'text-anchor': 'end', fill: MUTED_COLOUR, 'font-size': 11 }),
  );
  return y + HEADER_HEIGHT;
}

/** Shortened to its column, first by its closing aside in brackets; the whole label shows on hover. */
function rowLabel(label: string, middle: number): string {
  const maxChars = Math.floor((LABEL_WIDTH - 12) / (12 * SANS_CHAR_PX));
  const aside = label.endsWith(')') ? label.lastIndexOf(' (') : -1;
  const shown =
    label.length <= maxChars ? label : shorten(aside > 0 ? label.slice(0, aside) : label, maxChars);
  const hover = shown === label ? '' : `<title>${escapeXml(label)}</title>`;
  return text(PLOT_LEFT - 8, middle + 4, shown, { 'text-anchor': 'end' }, hover);
}

interface LogScale {
  x(ms: number): number;
  ticks: { value: number; major: boolean; labelled: boolean }[];
}

/**
 * Whole decades around the values; a value of 0 or less (autocannon's whole milliseconds can round to
 * 0) sits at the left edge.
 */
export function logScale(values: readonly number[], left: number, right: number): LogScale {
  const positive = values.filter((v) => isNumber(v) && v > 0);
  const low = Math.floor(Math.log10(Math.min(...positive, 1)));
  const high = Math.max(low + 1, Math.ceil(Math.log10(Math.max(...positive, 1))));
  const decadeWidth = (right - left) / (high - low);
  const x = (ms: number) =>
    ms > 0 ? left + (Math.min(Math.max(Math.log10(ms), low), high) - low) * decadeWidth : left;
  // 2 and 5 are labelled when a decade is wide enough for their labels not to touch.
  const labelMinor = decadeWidth >= 90;
  const ticks: LogScale['ticks'] = [];
  for (let decade = low; decade <= high; decade += 1) {
    const power = 10 ** decade;
    ticks.push({ value: Number(power.toPrecision(1)), major: true, labelled: true });
    if (decade === high) break;
    for (const step of [2, 5]) {
      ticks.push({ value: Number((step * power).toPrecision(1)), major: false, labelled: labelMinor });
    }
  }
  return { x, ticks };
}

function formatTick(ms: number): string {
  return ms.toLocaleString('en-GB', { maximumFractionDigits: 6 });
}

function colourOf(role: Role): string {
  return role === 'full' ? FULL_COLOUR : BASELINE_COLOUR;
}

/** p50 a circle, p90 a diamond, p99 a triangle: told apart without colour. */
function marker(
  percentile: 'p50' | 'p90' | 'p99',
  x: number,
  y: number,
  colour: string,
  ms?: number,
): string {
  const common = { fill: colour, stroke: '#ffffff', 'stroke-width': 1 };
  const title = ms === undefined ? '' : `<title>${escapeXml(`${percentile} ${formatMs(ms)} ms`)}</title>`;
  if (percentile === 'p50') return element('circle', { cx: x, cy: y, r: 4.5, ...common }, title);
  const size = 5.5;
  const points =
    percentile === 'p90'
      ? [
          [x, y - size],
          [x + size, y],
          [x, y + size],
          [x - size, y],
        ]
      : [
          [x, y - size],
          [x + size, y + size * 0.8],
          [x - size, y + size * 0.8],
        ];
  return element(
    'polygon',
    { points: points.map((p) => p.map(coordinate).join(',')).join(' '), ...common },
    title,
  );
}

function gridLine(x: number, top: number, bottom: number): string {
  return line(x, top, x, bottom, GRID_COLOUR);
}

function line(x1: number, y1: number, x2: number, y2: number, stroke: string, width = 1): string {
  return element('line', { x1, y1, x2, y2, stroke, 'stroke-width': width });
}

function rect(x: number, y: number, width: number, height: number, attributes: Attributes): string {
  return element('rect', { x, y, width: Math.max(0, width), height, ...attributes });
}

function text(x: number, y: number, content: string, attributes: Attributes = {}, after = ''): string {
  return element('text', { x, y, ...attributes }, escapeXml(content) + after);
}

/** Runs on from the text before it, `gap` px further (SVG collapses leading spaces). */
function tspan(content: string, gap: number, attributes: Attributes = {}): string {
  return element('tspan', { dx: gap, ...attributes }, escapeXml(content));
}

type Attributes = Record<string, string | number>;

function element(name: string, attributes: Attributes, content = ''): string {
  const attributeText = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(typeof value === 'number' ? coordinate(value) : value)}"`)
    .join('');
  return content === '' ? `<${name}${attributeText}/>` : `<${name}${attributeText}>${content}</${name}>`;
}

function coordinate(value: number): string {
  return String(Math.round(value * 10) / 10);
}

function escapeXml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');
}

function textWidth(content: string, fontSize: number, bold = false): number {
  return content.length * fontSize * SANS_CHAR_PX * (bold ? 1.08 : 1);
}

function shorten(content: string, maxChars: number): string {
  return content.length <= maxChars ? content : `${content.slice(0, Math.max(1, maxChars - 1))}…`;
}
