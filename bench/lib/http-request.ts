import http from 'node:http';

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
