import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../src/app/webhooks/signature.ts';

/** One POST as the sink got it, when its whole body had arrived (performance.now() of this process). */
export interface SinkArrival {
  path: string;
  at: number;
  eventId: string;
  signature: string;
  body: string;
}

/**
 * The webhook benchmarks' receiver: node:http on 127.0.0.1, answering 200 as soon as a request's body
 * has arrived, keeping each request for the checks made after the run (signatures are verified then,
 * off the measured path). It is the integrator's side at its fastest: what is measured is the sender.
 */
export async function startWebhookSink() {
  const arrivals: SinkArrival[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      arrivals.push({
        path: request.url ?? '',
        at: performance.now(),
        eventId: String(request.headers['booking-event-id'] ?? ''),
        signature: String(request.headers['booking-signature'] ?? ''),
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 }).end('ok');
    });
  });
  // Keep-alive connections kept open longer than any pause between a worker's batches.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * What a set of arrivals comes to against the events expected: each expected id received exactly once
 * with a signature that verifies with `secret` at `nowSeconds` (within the 5 minutes a receiver
 * allows), and nothing else.
 */
export function checkArrivals(
  arrivals: readonly SinkArrival[],
  expectedIds: ReadonlySet<string>,
  secret: string,
  nowSeconds: (arrival: SinkArrival) => number,
): { received: number; distinct: number; unexpected: number; unsigned: number; missing: number } {
  const seen = new Map<string, number>();
  let unexpected = 0;
  let unsigned = 0;
  for (const arrival of arrivals) {
    if (!expectedIds.has(arrival.eventId)) unexpected += 1;
    seen.set(arrival.eventId, (seen.get(arrival.eventId) ?? 0) + 1);
    if (!verifySignature(secret, arrival.signature, arrival.body, nowSeconds(arrival))) unsigned += 1;
  }
  const missing = [...expectedIds].filter((id) => !seen.has(id)).length;
  return { received: arrivals.length, distinct: seen.size, unexpected, unsigned, missing };
}
