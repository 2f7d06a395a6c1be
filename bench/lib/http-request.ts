import http from 'node:http';
import { Readable } from 'node:stream';

export interface HttpAnswer {
  status: number;
  text: string;
}

/**
 * One HTTP request with an optional JSON body over the given keep-alive agent, answered when the whole
 * body has arrived: the request primitive of the load generators that drive real servers.
 */
export function sendJson(options: {
  url: string;
  method: string;
  agent: http.Agent;
  headers?: Record<string, string>;
  body?: unknown;
  /** Fail the request if no answer has arrived by then. */
  timeoutMs?: number;
}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const request = http.request(options.url, {
      method: options.method,
      agent: options.agent,
      headers: {
        ...options.headers,
        ...(payload !== undefined && {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        }),
      },
    });
    if (options.timeoutMs !== undefined) {
      const timeoutMs = options.timeoutMs;
      request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    }
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(payload);
  });
}

/**
 * A `fetch` over node:http with the given keep-alive agent, for the clients that take one (the MCP
 * SDK's StreamableHTTPClientTransport): the load generator's side of a round trip made as light as
 * sendJson's. With Node's own fetch (undici) the MCP benchmark's runner spent more CPU per call than
 * the server it timed, and on Node 20 each request's objects (web streams, abort listeners tied to
 * the transport's long-lived signal by the SDK's AbortSignal.any) outlived young collections: its
 * scavenges promoted 2 to 3 MB each and paused the runner 5 to 11 ms, every twenty calls or so, inside
 * the round trips it timed: a large part of the p99 measured. A body streamed as server-sent events is passed on as
 * a stream; any other is read whole first. The request's abort signal is not followed: nothing in the
 * benchmarks aborts a request.
 */
export function nodeHttpFetch(agent: http.Agent): typeof fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      if (init.body != null && typeof init.body !== 'string') {
        reject(new TypeError('nodeHttpFetch sends string bodies only'));
        return;
      }
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => {
        headers[name] = value;
      });
      const url = input instanceof Request ? input.url : String(input);
      const request = http.request(url, { method: init.method ?? 'GET', agent, headers });
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        const answerHeaders = new Headers();
        const raw = response.rawHeaders;
        for (let i = 0; i < raw.length; i += 2) answerHeaders.append(raw[i]!, raw[i + 1]!);
        const answer = (body: ConstructorParameters<typeof Response>[0]) =>
          resolve(new Response(body, { status, headers: answerHeaders }));
        if (status === 204 || status === 304) {
          response.resume();
          answer(null);
        } else if (response.headers['content-type']?.includes('text/event-stream')) {
          answer(Readable.toWeb(response) as ReadableStream<Uint8Array>);
        } else {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => answer(Buffer.concat(chunks)));
          response.on('error', reject);
        }
      });
      request.on('error', reject);
      request.end(init.body ?? undefined);
    });
}
