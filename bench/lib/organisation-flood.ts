import http from 'node:http';
import { type EndpointKind, mixedRequests, TRAFFIC_MIX } from './mixed-traffic.ts';

/**
 * A bounded flood by one organisation, as issue 38's attacker sent it: `rate` requests a second of the
 * mixed load's kinds (availability searches, bookings, client look-ups and registrations:
 * mixed-traffic.ts), open loop (evenly spaced, whatever the answers; paced-load.ts), each with the
 * next of the organisation's keys in turn, over at most `connections` keep-alive connections. It runs
 * until stopped and counts the answers: by status, and which of them the server refused with 429,
 * with the messages those refusals gave.
 */
export interface FloodOptions {
  origin: string;
  keys: readonly string[];
  /** Requests a second. */
  rate: number;
  connections: number;
  seed: number;
  clientIds: string[];
  serviceIds: string[];
  staffIds: string[];
}

export interface FloodFigures {
  sent: number;
  seconds: number;
  /** Answers by status; 0 counts socket errors. */
  statuses: Record<number, number>;
  /** Answers other than 429, by kind of request: the work the server did for the flood. */
  served: Record<EndpointKind, number>;
  /** The 429 answers by their error message (whose limit refused them). */
  refusals: Record<string, number>;
  /** Milliseconds from sending to the whole answer: median of the 429s, and of the others. */
  refusedP50: number;
  servedP50: number;
}

export interface Flood {
  /** Stops sending, waits for the answers still due, and reports. */
  stop(): Promise<FloodFigures>;
}

export function startFlood(options: FloodOptions): Flood {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const requests = mixedRequests({ ...options, agent });
  const statuses: Record<number, number> = {};
  const served = Object.fromEntries(TRAFFIC_MIX.map(({ kind }) => [kind, 0])) as Record<EndpointKind, number>;
  const refusals: Record<string, number> = {};
  const refusedTimes: number[] = [];
  const servedTimes: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let sent = 0;

  const send = (key: string) => {
    const kind = requests.chooseKind();
    const started = performance.now();
    const done = requests.send(kind, key).then(
      ({ status, text }) => {
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 429) {
          refusedTimes.push(performance.now() - started);
          const { message } = (JSON.parse(text) as { error: { message: string } }).error;
          refusals[message] = (refusals[message] ?? 0) + 1;
        } else {
          servedTimes.push(performance.now() - started);
          served[kind] += 1;
        }
      },
      () => {
        statuses[0] = (statuses[0] ?? 0) + 1;
      },
    );
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };

  const start = performance.now();
  // Request k is due at k / rate seconds: each tick sends those that have come due since the last.
  const tick = setInterval(() => {
    const due = Math.floor(((performance.now() - start) / 1000) * options.rate) + 1;
    for (; sent < due; sent += 1) send(options.keys[sent % options.keys.length]!);
  }, 1);

  return {
    async stop() {
      clearInterval(tick);
      const seconds = (performance.now() - start) / 1000;
      await Promise.all(inFlight);
      agent.destroy();
      return {
        sent,
        seconds,
        statuses,
        served,
        refusals,
        refusedP50: median(refusedTimes),
        servedP50: median(servedTimes),
      };
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
