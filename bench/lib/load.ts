import autocannon, { type RawResult, type RequestSpec } from 'autocannon';

/** One HTTP endpoint to put under load. */
export interface LoadTarget {
  url: string;
  headers?: Record<string, string>;
  /** GET unless given. */
  method?: 'GET' | 'POST';
  /**
   * A fresh body for every request, called once per request built (for writes that must never repeat,
   * such as bookings of distinct slots). A request built but not sent when a run ends wastes its body.
   */
  body?: () => string;
  /** Headers of their own for every request (an Idempotency-Key each), built with its body. */
  requestHeaders?: () => Record<string, string>;
  /** Sees the status code of every response, e.g. to count anything but the one status expected. */
  onStatus?: (status: number) => void;
  /**
   * The one status that is a success when it is not 2xx (a form post answered 303), for the paced
   * load's latencies. autocannon times every answer whatever its status, and counts this one non-2xx.
   */
  expectedStatus?: number;
}

export interface LoadSettings {
  connections: number;
  /** Seconds. */
  durationS: number;
}

/** What one side of a benchmark measured, over every round it ran. */
export interface LoadStats {
  requests: number;
  /** Seconds actually spent under load. */
  seconds: number;
  requestsPerSecond: number;
  bytesPerRequest: number;
  /** Latency percentiles over every completed 2xx request of every round, in milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Responses that were not 2xx; the bench is meant to measure work, so any of these is a failure. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
}

/**
 * One autocannon run, pipelining 1, with the raw result kept so that several rounds of the same side
 * can later be merged exactly (latency histograms added, not percentiles averaged).
 */
export function runLoad(target: LoadTarget, settings: LoadSettings): Promise<RawResult> {
  const { body, onStatus, requestHeaders } = target;
  return Promise.resolve(
    autocannon({
      url: target.url,
      method: target.method ?? 'GET',
      headers: target.headers ?? {},
      connections: settings.connections,
      pipelining: 1,
      duration: settings.durationS,
      timeout: 10,
      skipAggregateResult: true,
      // autocannon calls setupRequest for every request it sends (and onResponse for every answer).
      ...((body || onStatus || requestHeaders) && {
        requests: [
          {
            ...((body || requestHeaders) && {
              setupRequest: (request: RequestSpec) => ({
                ...request,
                ...(body && { body: body() }),
                ...(requestHeaders && { headers: { ...request.headers, ...requestHeaders() } }),
              }),
            }),
            ...(onStatus && { onResponse: (status: number) => onStatus(status) }),
          },
        ],
      }),
    }),
  );
}

/** Merges the rounds of one side into its figures. */
export function summarise(target: LoadTarget, rounds: RawResult[]): LoadStats {
  const merged = autocannon.aggregateResult(rounds, { url: target.url });
  const requests = sum(rounds, (r) => r.totalCompletedRequests);
  const seconds = sum(rounds, (r) => r.duration);
  return {
    requests,
    seconds,
    requestsPerSecond: requests / seconds,
    bytesPerRequest: requests === 0 ? 0 : sum(rounds, (r) => r.totalBytes) / requests,
    p50: merged.latency.p50,
    p90: merged.latency.p90,
    p99: merged.latency.p99,
    max: merged.latency.max,
    non2xx: merged.non2xx,
    errors: merged.errors + merged.timeouts,
  };
}

function sum<T>(items: T[], of: (item: T) => number): number {
  return items.reduce((total, item) => total + of(item), 0);
}
