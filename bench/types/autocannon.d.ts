/**
 * The slice of autocannon 8 that the benchmarks use. The package ships no typings and @types/autocannon
 * is not a dependency, so this describes only what bench/lib/load.ts calls.
 */
declare module 'autocannon' {
  export interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    /** Request timeout, seconds. */
    timeout?: number;
    /** Return the raw per-run result so several runs can be merged with aggregateResult(). */
    skipAggregateResult?: boolean;
    /** Requests each connection sends in turn; fields left out come from the options above. */
    requests?: RequestSpec[];
  }

  /** One entry of Options.requests. */
  export interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** Called before every send of this request: returns the request to send (a fresh body, say). */
    setupRequest?: (request: RequestSpec, context: Record<string, unknown>) => RequestSpec | null;
    /** Called with every response to this request. */
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
  }

  /** A run started with skipAggregateResult: histograms still encoded, counters as counted. */
  export interface RawResult {
    totalCompletedRequests: number;
    totalBytes: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    /** Seconds, to the hundredth. */
    duration: number;
  }

  /** Percentiles in milliseconds; autocannon records whole milliseconds. */
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
    totalCount: number;
  }

  export interface Result {
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
  }

  export interface Instance extends PromiseLike<RawResult> {
    stop(): void;
  }

  export interface Autocannon {
    (options: Options): Instance;
    aggregateResult(results: RawResult[], options: Options): Result;
  }

  const autocannon: Autocannon;
  export default autocannon;
}
