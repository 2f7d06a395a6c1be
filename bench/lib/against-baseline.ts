import type { BaselineInfo, BaselineInit } from '../baseline-server.ts';
import type { BenchContext } from './benchmark.ts';
import { type Comparison, compareSideBySide } from './compare.ts';
import { startServerProcess } from './server-process.ts';

const BASELINE_SERVER = new URL('../baseline-server.ts', import.meta.url);

export interface AgainstBaseline {
  /** Origin of the full-stack server, already listening. */
  origin: string;
  /** The route pattern, which the baseline registers too so both routers do the same work. */
  route: string;
  /** The concrete path requested. */
  path: string;
  /** Sent to both sides (the baseline ignores them), so both parse the same request. */
  headers: Record<string, string>;
  /** Throws unless the full stack's body is the realistic response the benchmark is meant to measure. */
  check(body: unknown): void;
  /** Requests/s of the latency phase, for endpoints slower than LATENCY_RATE (bench/lib/compare.ts) allows. */
  latencyRate?: number;
  /** Runs after the side-by-side rounds, while the baseline still listens (full and baseline URLs). */
  afterwards?(urls: { full: string; baseline: string }): Promise<void>;
}

/**
 * Fetches the response once from the full stack, starts a bare baseline that sends the same bytes,
 * checks that both do, and measures them side by side.
 */
export async function measureAgainstBaseline(
  spec: AgainstBaseline,
  context: BenchContext,
): Promise<Comparison> {
  const full = `${spec.origin}${spec.path}`;
  const body = await fetchJsonText(full, spec.headers);
  spec.check(JSON.parse(body));

  const baseline = await startServerProcess<BaselineInfo>(BASELINE_SERVER, {
    route: spec.route,
    body,
  } satisfies BaselineInit);
  try {
    const baselineUrl = `${baseline.info.origin}${spec.path}`;
    if ((await fetchJsonText(baselineUrl, spec.headers)) !== body) {
      throw new Error('The baseline does not return the same bytes as the full stack.');
    }
    const comparison = await compareSideBySide(
      { full: { url: full, headers: spec.headers }, baseline: { url: baselineUrl, headers: spec.headers } },
      context.durationS,
      context.progress,
      spec.latencyRate,
    );
    await spec.afterwards?.({ full, baseline: baselineUrl });
    return comparison;
  } finally {
    await baseline.stop();
  }
}

async function fetchJsonText(url: string, headers: Record<string, string>): Promise<string> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`GET ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return text;
}
