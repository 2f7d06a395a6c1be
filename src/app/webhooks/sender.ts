import http from 'node:http';
import https from 'node:https';
import { DELIVERY_TIMEOUT_MS } from '../../domain/webhooks.ts';
import { checkedLookup, type DestinationPolicy, literalRefusal } from './destinations.ts';
import { describeRequestFailure } from './request-failure.ts';

/** What one attempt came to: the receiver's status code, or why there was none. */
export type AttemptResult = { status: number } | { error: string };

/** One POST of a delivery; the worker (delivery.ts) decides what the result means. */
export interface WebhookSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult>;
  close(): void;
}

/** Connections kept to one receiver at once. */
const MAX_SOCKETS = 32;

/** How a reused connection that was dropped while idle fails, before the receiver read anything. */
const STALE_CONNECTION: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE']);

/** How much of a receiver's answer is read (and dropped): enough to reuse the connection. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Sends over node's http(s) with keep-alive agents (deliveries/s to one receiver are bound by its
 * connections, not by handshakes), no redirects followed (a 3xx is a failure like any non-2xx), the
 * destination checked on each connection (destinations.ts), and each attempt cut 10 s after it has its
 * connection.
 */
export function httpSender(policy: DestinationPolicy, timeoutMs = DELIVERY_TIMEOUT_MS): WebhookSender {
  const lookup = checkedLookup(policy);
  const options = { keepAlive: true, maxSockets: MAX_SOCKETS, lookup } as const;
  const agents = { 'http:': new http.Agent(options), 'https:': new https.Agent(options) };
  return {
    post(raw, headers, body) {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return Promise.resolve({ error: 'the URL is not valid' });
      }
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowInsecure)) {
        return Promise.resolve({ error: 'the URL is not https' });
      }
      const refused = literalRefusal(url, policy);
      if (refused) return Promise.resolve({ error: `the URL's host is ${refused}` });
      const client = url.protocol === 'https:' ? https : http;
      const agent = agents[url.protocol as 'http:' | 'https:'];
      // One deadline for the attempt, however many connections it takes (see below).
      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const send = (staleLeft: number): Promise<AttemptResult> =>
        new Promise<AttemptResult>((resolve) => {
          let answered = false;
          const settle = (result: AttemptResult) => {
            clearTimeout(timer);
            resolve(result);
          };
          const request = client.request(url, {
            method: 'POST',
            agent,
            headers: { ...headers, 'content-length': Buffer.byteLength(body) },
            signal: abort.signal,
          });
          // The 10 s run from when the request has its connection: a burst beyond maxSockets waits in
          // the agent's queue first, and that wait is ours, not the receiver's. A batch (64) is at most
          // two rounds of 32 connections, 20 s, inside the worker's 30 s lease.
          request.once('socket', () => {
            timer ??= setTimeout(() => abort.abort(), timeoutMs);
          });
          request.on('response', (response) => {
            answered = true;
            let read = 0;
            response.on('data', (chunk: Buffer) => {
              read += chunk.length;
              if (read > MAX_ANSWER_BYTES) response.destroy();
            });
            const done = () => settle({ status: response.statusCode ?? 0 });
            response.on('end', done);
            response.on('close', done);
            response.on('error', done);
          });
          request.on('error', (error: NodeJS.ErrnoException) => {
            // A kept-alive connection that the receiver, or a load balancer or NAT before it, dropped
            // while idle fails as soon as it is reused: the attempt goes again at once on another
            // connection, within its same 10 s, with the same event id (on which a receiver that read
            // the first one deduplicates). Each dropped connection is destroyed: this ends within the
            // pool's size.
            if (
              !answered &&
              request.reusedSocket &&
              STALE_CONNECTION.has(error.code ?? '') &&
              staleLeft > 0
            ) {
              // Its 10 s start again on the new connection: the reset came at once, before the
              // receiver read anything, and the retry may wait behind the batch's other requests.
              clearTimeout(timer);
              timer = undefined;
              resolve(send(staleLeft - 1));
              return;
            }
            settle({ error: describeRequestFailure(error, timeoutMs) });
          });
          request.end(body);
        });
      return send(MAX_SOCKETS);
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
