import { describe, expect, it } from 'vitest';
import type { BenchmarkResult } from '../../bench/lib/benchmark.ts';
import {
  type ChartEntry,
  chartEntry,
  logScale,
  mergeChartEntries,
  parseChartJson,
  renderChart,
  renderChartJson,
} from '../../bench/lib/chart.ts';
import type { Machine } from '../../bench/lib/machine.ts';

const measuredAt = '2026-11-23T13:46:59.634Z';
const machine = '2 × AMD EPYC, 23.5 GiB, Node v20.20.2';

const services: ChartEntry = {
  id: 'services-endpoint',
  measuredAt,
  machine,
  figures: {
    kind: 'http',
    request: 'GET /v1/locations/camden/services',
    full: { requestsPerSecond: 9125 },
    baseline: { requestsPerSecond: 11008 },
    latencyRate: 2000,
    fullAtRate: { p50: 1.31, p90: 1.99, p99: 6.61 },
    baselineAtRate: { p50: 1.21, p90: 1.89, p99: 4.36 },
  },
};

const availability: ChartEntry = {
  id: 'availability-endpoint',
  measuredAt: '2026-11-20T10:00:00.000Z',
  machine,
  figures: {
    kind: 'http',
    request: 'GET /v1/locations/shoreditch/availability?service_ids=<3 ids>&date=2027-01-11&days=14',
    full: { requestsPerSecond: 132 },
    baseline: { requestsPerSecond: 9837 },
    latencyRate: 30,
    fullAtRate: { p50: 11.25, p90: 14.11, p99: 22.31 },
    baselineAtRate: { p50: 1.81, p90: 2.41, p99: 4.92 },
  },
};

const bookings: ChartEntry = {
  id: 'bookings-endpoint',
  measuredAt,
  machine,
  figures: {
    kind: 'throughput',
    subject: 'POST /v1/bookings',
    rows: [
      { label: 'Full stack, saturation (16 connections)', perSecond: 1111, p50: 12, p99: 34 },
      { label: 'Raw inserts, saturation (one after another)', perSecond: 1969, p50: 0.417, p99: 3.77 },
      { label: 'Full stack at 560/s', perSecond: 559, p50: 2.62, p99: 15.3 },
      { label: 'Raw inserts at 560/s', perSecond: 560, p50: 0.605, p99: 5.28 },
    ],
  },
};

const mcp: ChartEntry = {
  id: 'mcp-round-trips',
  measuredAt,
  machine,
  figures: {
    kind: 'timing',
    subject: 'tools/call find_slots and book',
    timings: [
      { label: 'find_slots over Streamable HTTP', p50: 3.27, p99: 13.7 },
      { label: 'find_slots in process (tool run, no MCP, no HTTP)', p50: 0.651, p99: 7.65 },
      { label: 'book over Streamable HTTP', p50: 4.58, p99: 12.3 },
      { label: 'book in process (tool run, no MCP, no HTTP)', p50: 1.72, p99: 9.7 },
    ],
  },
};

const scenario: ChartEntry = { id: 'checkout-scenario', measuredAt, machine, figures: { kind: 'scenario' } };

const entries = [services, availability, bookings, mcp];

describe('renderChart', () => {
  const svg = renderChart(entries);
  const root = parseXml(svg);

  it('is a well-formed standalone SVG, 960 px wide', () => {
    expect(root.name).toBe('svg');
    expect(root.attributes.xmlns).toBe('http://www.w3.org/2000/svg');
    expect(root.attributes.width).toBe('960');
    expect(Number(root.attributes.height)).toBeGreaterThan(0);
    expect(root.attributes.viewBox).toBe(`0 0 960 ${root.attributes.height}`);
    expect(svg).not.toContain('NaN');
    expect(svg).not.toContain('Infinity');
  });

  it('has a title, a legend and its axes as text', () => {
    const texts = findAll(root, (e) => e.name === 'text').map(allText);
    expect(allText(findAll(root, (e) => e.name === 'title')[0]!)).toBe(
      'Throughput and latency per benchmark against its baseline',
    );
    expect(texts).toContain('Full stack / code under test');
    expect(texts.some((t) => t.startsWith('Baseline:'))).toBe(true);
    expect(texts).toEqual(expect.arrayContaining(['p50', 'p90', 'p99']));
    expect(texts).toContain('Latency (ms, log scale)');
    expect(texts.some((t) => t.startsWith('Throughput as a share of its baseline'))).toBe(true);
    expect(texts).toContain(
      `Measured on ${machine}. Every figure, and how it is measured: docs/benchmarks.md.`,
    );
  });

  it('prints the throughput of each side and their ratio', () => {
    const texts = findAll(root, (e) => e.name === 'text').map(allText);
    expect(texts).toContain('9,125 req/s0.83 × baseline');
    expect(texts).toContain('11,008 req/s');
    expect(texts).toContain('132 req/s0.01 × baseline');
    expect(texts).toContain('1,111 writes/s0.56 × baseline');
    expect(texts).toContain('1,969 writes/s');
  });

  it('prints the latency percentiles of each side, HTTP at the fixed load, writes at the fixed rate', () => {
    const texts = findAll(root, (e) => e.name === 'text').map(allText);
    expect(texts).toContain('Full stack at 2,000 req/s');
    expect(texts).toContain('p50 1.31 · p90 1.99 · p99 6.61 ms');
    expect(texts).toContain('Baseline at 30 req/s');
    expect(texts).toContain('p50 1.81 · p90 2.41 · p99 4.92 ms');
    expect(texts).toContain('Full stack at 560/s');
    expect(texts).toContain('p50 0.605 · p99 5.28 ms');
    expect(texts).toContain('p50 0.651 · p99 7.65 ms');
  });

  it('names each benchmark with its subject and date, labels escaped', () => {
    expect(svg).toContain('service_ids=&lt;3 ids&gt;&amp;date=2027-01-11');
    const texts = findAll(root, (e) => e.name === 'text').map(allText);
    expect(texts.some((t) => t.includes('service_ids=<3 ids>&date=2027-01-11'))).toBe(true);
    expect(texts).toContain('measured 2026-11-20');
    expect(texts.filter((t) => t.startsWith('mcp-round-trips'))).toHaveLength(1);
  });

  it('shortens a label too long for its column by its aside, the whole label on hover', () => {
    const label = findAll(root, (e) => e.name === 'text' && e.text === 'find_slots in process')[0];
    expect(label).toBeDefined();
    expect(allText(label!.children[0]!)).toBe('find_slots in process (tool run, no MCP, no HTTP)');
  });

  it('skips a kind it does not know', () => {
    expect(renderChart([...entries, scenario])).toBe(svg);
    const alone = renderChart([scenario]);
    expect(parseXml(alone).name).toBe('svg');
    expect(alone).toContain('No benchmark figures to draw.');
    expect(alone).not.toContain('checkout-scenario');
  });

  it('places ticks and values on the latency axis in order of their milliseconds', () => {
    const ticks = findAll(root, (e) => e.attributes.class === 'latency-tick').map((e) => ({
      ms: Number(allText(e).replaceAll(',', '')),
      x: Number(e.attributes.x),
    }));
    expect(ticks.map((t) => t.ms)).toEqual([0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]);
    for (const [i, tick] of ticks.entries()) if (i > 0) expect(tick.x).toBeGreaterThan(ticks[i - 1]!.x);

    const xOfTick = (ms: number) => ticks.find((t) => t.ms === ms)!.x;
    const p50 = findAll(root, (e) => e.name === 'circle' && allText(e) === 'p50 1.31 ms')[0]!;
    expect(Number(p50.attributes.cx)).toBeGreaterThan(xOfTick(1));
    expect(Number(p50.attributes.cx)).toBeLessThan(xOfTick(2));
  });
});

describe('logScale', () => {
  it('is increasing over whole decades around the values, 0 at the left edge', () => {
    const scale = logScale([0.417, 460], 100, 500);
    expect(scale.x(0.1)).toBe(100);
    expect(scale.x(1000)).toBe(500);
    expect(scale.x(0)).toBe(100);
    const values = [0.1, 0.417, 1, 3.3, 10, 99, 100, 460, 1000];
    const xs = values.map(scale.x);
    for (const [i, x] of xs.entries()) if (i > 0) expect(x).toBeGreaterThan(xs[i - 1]!);
    expect(scale.x(10) - scale.x(1)).toBeCloseTo(scale.x(100) - scale.x(10));
  });
});

describe('docs/benchmarks.json', () => {
  it('keeps the carried-over entries, replaces the measured ones, in registry order', () => {
    const previous = [services, { ...availability, measuredAt: '2026-11-01T00:00:00.000Z' }, mcp];
    const measured = [availability, bookings];
    const merged = mergeChartEntries(
      ['services-endpoint', 'availability-endpoint', 'bookings-endpoint', 'checkout-scenario'],
      previous,
      [...measured, scenario],
    );
    expect(merged).toEqual([services, availability, bookings, scenario]);
  });

  it('reads back what it wrote, unknown kinds included, and drops entries without their figures', () => {
    expect(parseChartJson(renderChartJson([...entries, scenario]))).toEqual([...entries, scenario]);
    const broken = { ...services, figures: { kind: 'http', request: 'GET /', full: {} } };
    const file = JSON.parse(renderChartJson([broken as unknown as ChartEntry, mcp]));
    expect(parseChartJson(JSON.stringify(file))).toEqual([mcp]);
    expect(parseChartJson('{}')).toEqual([]);
    expect(() => parseChartJson('{')).toThrow(SyntaxError);
  });

  it('keeps of a result what the chart and the page draw, with its date and machine', () => {
    const result = {
      kind: 'timing',
      subject: 'findSlots(query)',
      method: ['…'],
      timings: [
        {
          label: 'Engine',
          calls: 2000,
          p50: 0.563_218,
          p90: 0.85,
          p99: 1.823_456,
          mean: 0.7,
          min: 0.4,
          max: 25,
        },
        { label: 'Oracle', calls: 5, p50: 336.123_4, p90: 460, p99: 460.2, mean: 355, min: 293, max: 460 },
      ],
      ratios: [{ label: 'Speed-up, oracle p50 / engine p50', value: '×597' }],
      targets: [{ description: 'Engine p50 ≤ 5 ms', measured: '0.563 ms', pass: true }],
    } satisfies BenchmarkResult;
    const ranOn: Machine = {
      cpu: 'AMD EPYC',
      cpuCount: 2,
      memoryGiB: 23.5,
      node: 'v20.20.2',
      os: 'Linux',
      date: measuredAt,
    };
    expect(chartEntry('availability-engine', result, ranOn)).toEqual({
      id: 'availability-engine',
      measuredAt,
      machine,
      figures: {
        kind: 'timing',
        subject: 'findSlots(query)',
        timings: [
          { label: 'Engine', p50: 0.5632, p99: 1.823 },
          { label: 'Oracle', p50: 336.1, p99: 460.2 },
        ],
      },
      summary: {
        title: '`findSlots(query)` in process',
        ratio: { label: 'Speed-up, oracle p50 / engine p50', value: '×597' },
        targets: [{ description: 'Engine p50 ≤ 5 ms', measured: '0.563 ms', pass: true }],
      },
    });
    const future = { kind: 'scenario', steps: [] } as unknown as BenchmarkResult;
    expect(chartEntry('checkout-scenario', future, ranOn).figures).toEqual({ kind: 'scenario' });
  });
});

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text, entities decoded, without its children's. */
  text: string;
}

/**
 * A minimal XML reader for the chart's well-formedness: one root, every tag closed in order, attributes
 * quoted and unique, only the five predefined entities and character references. Throws otherwise.
 */
function parseXml(xml: string): XmlElement {
  const open: XmlElement[] = [];
  let root: XmlElement | undefined;
  let at = 0;
  while (at < xml.length) {
    const lt = xml.indexOf('<', at);
    const content = xml.slice(at, lt === -1 ? xml.length : lt);
    if (content.trim() !== '') {
      const parent = open.at(-1);
      if (!parent) throw new Error(`Text outside the root element: ${content}`);
      parent.text += decodeEntities(content);
    }
    if (lt === -1) break;
    if (xml.startsWith('<!--', lt) || xml.startsWith('<?', lt)) {
      const close = xml.startsWith('<!--', lt) ? '-->' : '?>';
      const end = xml.indexOf(close, lt);
      if (end === -1) throw new Error(`Unclosed ${close} at ${lt}`);
      at = end + close.length;
      continue;
    }
    const gt = xml.indexOf('>', lt);
    if (gt === -1) throw new Error(`Unclosed tag at ${lt}`);
    const tag = xml.slice(lt + 1, gt);
    if (tag.startsWith('/')) {
      const element = open.pop();
      if (element?.name !== tag.slice(1)) throw new Error(`</${tag.slice(1)}> closes <${element?.name}>`);
    } else {
      const selfClosing = tag.endsWith('/');
      const element = parseTag(selfClosing ? tag.slice(0, -1) : tag);
      const parent = open.at(-1);
      if (parent) parent.children.push(element);
      else if (root) throw new Error(`A second root element <${element.name}>`);
      else root = element;
      if (!selfClosing) open.push(element);
    }
    at = gt + 1;
  }
  if (open.length > 0) throw new Error(`Unclosed <${open.map((e) => e.name).join('>, <')}>`);
  if (!root) throw new Error('No root element');
  return root;
}

function parseTag(tag: string): XmlElement {
  let at = 0;
  const readName = () => {
    const from = at;
    while (at < tag.length && isNameChar(tag[at]!)) at += 1;
    if (at === from) throw new Error(`Expected a name at ${at} in <${tag}>`);
    return tag.slice(from, at);
  };
  const skipSpace = () => {
    while (at < tag.length && ' \n\t\r'.includes(tag[at]!)) at += 1;
  };
  const element: XmlElement = { name: readName(), attributes: {}, children: [], text: '' };
  for (skipSpace(); at < tag.length; skipSpace()) {
    if (!' \n\t\r'.includes(tag[at - 1]!)) throw new Error(`No space before an attribute in <${tag}>`);
    const name = readName();
    if (tag[at] !== '=') throw new Error(`Attribute ${name} without a value in <${tag}>`);
    const quote = tag[at + 1];
    if (quote !== '"' && quote !== "'") throw new Error(`Attribute ${name} unquoted in <${tag}>`);
    const end = tag.indexOf(quote, at + 2);
    if (end === -1) throw new Error(`Attribute ${name} unterminated in <${tag}>`);
    if (name in element.attributes) throw new Error(`Attribute ${name} twice in <${tag}>`);
    const value = tag.slice(at + 2, end);
    if (value.includes('<')) throw new Error(`Raw < in attribute ${name}`);
    element.attributes[name] = decodeEntities(value);
    at = end + 1;
  }
  return element;
}

function isNameChar(char: string): boolean {
  return 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:.'.includes(char);
}

function decodeEntities(content: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  let decoded = '';
  let at = 0;
  for (let amp = content.indexOf('&'); amp !== -1; amp = content.indexOf('&', at)) {
    const semicolon = content.indexOf(';', amp);
    if (semicolon === -1) throw new Error(`Raw & in ${content}`);
    const entity = content.slice(amp + 1, semicolon);
    const isNumeric = entity.startsWith('#') && entity.length > 1 && !Number.isNaN(Number(entity.slice(1)));
    const char = isNumeric ? String.fromCodePoint(Number(entity.slice(1))) : named[entity];
    if (char === undefined) throw new Error(`Unknown entity &${entity}; in ${content}`);
    decoded += content.slice(at, amp) + char;
    at = semicolon + 1;
  }
  return decoded + content.slice(at);
}

function findAll(element: XmlElement, matches: (e: XmlElement) => boolean): XmlElement[] {
  return [...(matches(element) ? [element] : []), ...element.children.flatMap((c) => findAll(c, matches))];
}

/** The element's text followed by its children's (tspan, title), as one string. */
function allText(element: XmlElement): string {
  return element.text + element.children.map(allText).join('');
}
