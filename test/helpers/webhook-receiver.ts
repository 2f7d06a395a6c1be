import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../src/app/webhooks/signature.ts';

/** A delivery as the receiver saw it. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; created_at: string; organisation: string; data: Record<string, unknown> };
  /** Whether Booking-Signature verified with the secret the test gave (`secret`). */
  signed: boolean;
  /** What the receiver answered. */
  answered: number;
}

/**
 * A local HTTP receiver of webhooks, as an integrator would run one: it verifies each signature
 * with the endpoint's secret and answers what the test asks for, one answer per request in turn
 * (`answers`), then what `answerFor` decides from the request (a rule per event or attempt, for
 * deliveries whose order is not known in advance), then `fallback`; `delayMs` holds each answer back
 * (a slow receiver). It listens on 127.0.0.1, or on `host` (::1: a receiver bound to IPv6 alone).
 */
export async function startWebhookReceiver(options: { nowSeconds?: () => number; host?: string } = {}) {
  const received: Received[] = [];
  const state = {
    secret: '',
    answers: [] as number[],
    fallback: 200,
    delayMs: 0,
    answerFor: undefined as ((request: { headers: IncomingHttpHeaders }) => number | undefined) | undefined,
  };
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answered =
        state.answers.shift() ?? state.answerFor?.({ headers: request.headers }) ?? state.fallback;
      const signature = String(request.headers['booking-signature'] ?? '');
      const entry: Received = {
        headers: request.headers,
        body,
        json: JSON.parse(body) as Received['json'],
        signed: verifySignature(state.secret, signature, body, nowSeconds()),
        answered,
      };
      setTimeout(() => {
        received.push(entry);
        response.writeHead(answered, { 'content-type': 'text/plain' }).end('ok');
      }, state.delayMs);
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/hooks`,
    port,
    received,
    state,
    /** The received events of one type, in the order they came. */
    ofType: (type: string) => received.filter((r) => r.json.type === type),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
