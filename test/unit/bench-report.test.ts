import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseChartJson } from '../../bench/lib/chart.ts';
import { renderReport } from '../../bench/lib/report.ts';
import { BENCHMARKS } from '../../bench/registry.ts';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const entries = parseChartJson(read('docs/benchmarks.json'));

describe('docs/benchmarks.md', () => {
  it('is what docs/benchmarks.json gives (npm run bench -- --render writes it again)', () => {
    expect(read('docs/benchmarks.md')).toBe(renderReport(entries));
  });

  it('stays short enough to read: at most 15 KB, the chart included', () => {
    const page = renderReport(entries);
    expect(Buffer.byteLength(page)).toBeLessThanOrEqual(15 * 1024);
    expect(page).toContain('![Throughput and latency per benchmark against its baseline](benchmarks.svg)');
  });

  it('gives every registered benchmark its figure, command, baseline ratio and targets', () => {
    const page = renderReport(entries);
    expect(entries.map((e) => e.id)).toEqual(BENCHMARKS.map((b) => b.id));
    for (const { id, summary } of entries) {
      expect(summary?.targets.length, id).toBeGreaterThan(0);
      expect(page).toContain(`## ${id}\n`);
      expect(page).toContain(`\`npm run bench -- --only ${id}\``);
      expect(page).toMatch(
        new RegExp(`^\\| \\[${id}\\]\\(#${id}\\) \\| [^|]+ \\| [^|]+ \\| \\d+ of \\d+ \\|$`, 'm'),
      );
    }
  });

  it('names every missed target, and the first target of each benchmark', () => {
    const page = renderReport(entries);
    for (const { summary } of entries) {
      const [first, ...rest] = summary?.targets ?? [];
      expect(page).toContain(first?.description);
      for (const target of rest.filter((t) => !t.pass))
        expect(page).toContain(`**Missed**: ${target.description}`);
    }
  });
});
