import http from 'node:http';
import type { Timing } from './benchmark.ts';
import { sendJson } from './http-request.ts';
import { summariseTimes } from './timing.ts';

/**
 * A closed loop over real HTTP: a fixed number of keep-alive connections, each sending its next request
 * as soon as the last is answered, spread evenly over one or more servers (connection j always talks to
 * origins[j % n], as a load balancer with one connection pool per instance would). Every answer is timed
 * in this process, from sending to the last byte of the body.
 */
export interface ClosedLoopOptions {
  origins: readonly string[];
  connections: number;
  durationMs: number;
  headers: Record<string, string>;
  /**
   * The next request to send; called once per request, in the order they are sent. Its headers, if
   * any, are added to `headers` (an Idempotency-Key of its own, say).
   */
  next: () => { method: 'GET' | 'POST'; path: string; body?: unknown; headers?: Record<string, string> };
  /** The only status that counts as success; any other, or a socket error, is a failure. */
  expectedStatus: number;
  /** A request unanswered this long is abandoned and counted as a failure (a stalled server must not stall the run). */
  timeoutMs: number;
}

export interface ClosedLoopReport {
  /** From the first request sent to the last answer received. */
  durationS: number;
  /** Every answer (whatever its status), timed. */
  latency: Timing;
  /** Answers with the expected status. */
  succeeded: number;
  /** Answers with another status, plus socket errors and timeouts. */
  failures: number;
  statuses: Record<number, number>;
  socketErrors: number;
  /** Answers received from each origin, in the order of `origins`. */
  perOrigin: number[];
  /** The first failure seen, for the report: what went wrong matters more than how often. */
  firstFailure: string | null;
}

export async function runClosedLoop(options: ClosedLoopOptions): Promise<ClosedLoopReport> {
  const agents = options.origins.map(() => new http.Agent({ keepAlive: true }));
  const times: number[] = [];
  const statuses: Record<number, number> = {};
  const perOrigin = options.origins.map(() => 0);
  let socketErrors = 0;
  let firstFailure: string | null = null;

  const send = (
    origin: number,
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string> | undefined,
  ) =>
    sendJson({
      url: `${options.origins[origin]}${path}`,
      method,
      agent: agents[origin]!,
      headers: headers ? { ...options.headers, ...headers } : options.headers,
      body,
      timeoutMs: options.timeoutMs,
    });

  const started = performance.now();
  const deadline = started + options.durationMs;
  const worker = async (connection: number) => {
    const origin = connection % options.origins.length;
    while (performance.now() < deadline) {
      const { method, path, body, headers } = options.next();
      const sent = performance.now();
      try {
        const answer = await send(origin, method, path, body, headers);
        times.push(performance.now() - sent);
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        perOrigin[origin]! += 1;
        if (answer.status !== options.expectedStatus && firstFailure === null)
          firstFailure = `${method} ${path.split('?')[0]}: ${answer.status} ${answer.text.slice(0, 300)}`;
      } catch (error) {
        socketErrors += 1;
        if (firstFailure === null)
          firstFailure = `${method} ${path.split('?')[0]}: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.connections }, (_, j) => worker(j)));
  } finally {
    for (const agent of agents) agent.destroy();
  }
  const succeeded = statuses[options.expectedStatus] ?? 0;
  return {
    durationS: (performance.now() - started) / 1000,
    latency: summariseTimes(`${options.connections} connections`, times),
    succeeded,
    failures: times.length - succeeded + socketErrors,
    statuses,
    socketErrors,
    perOrigin,
    firstFailure,
  };
}
