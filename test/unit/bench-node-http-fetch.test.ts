import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeHttpFetch } from '../../bench/lib/http-request.ts';

/** The benchmarks' fetch for the MCP SDK's client: a Response as fetch gives it, for each kind of answer. */
describe('nodeHttpFetch (bench/lib/http-request.ts)', () => {
  let server: http.Server;
  let origin: string;
  const agent = new http.Agent({ keepAlive: true });
  const fetchOverHttp = nodeHttpFetch(agent);

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url === '/events') {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.write('event: message\ndata: {"n":1}\n\n');
          setTimeout(() => response.end('event: message\ndata: {"n":2}\n\n'), 20);
        } else if (request.url === '/empty') {
          response.writeHead(204, { 'x-seen': 'yes' }).end();
        } else {
          const echo = {
            method: request.method,
            authorization: request.headers.authorization,
            body: Buffer.concat(chunks).toString(),
          };
          response.writeHead(201, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
          response.end(JSON.stringify(echo));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    agent.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the method, headers and body, and answers status, headers and the whole body', async () => {
    const response = await fetchOverHttp(new URL('/echo', origin), {
      method: 'POST',
      headers: new Headers({ authorization: 'Bearer k', 'content-type': 'application/json' }),
      body: '{"jsonrpc":"2.0"}',
    });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({
      method: 'POST',
      authorization: 'Bearer k',
      body: '{"jsonrpc":"2.0"}',
    });
  });

  it('passes server-sent events on as a stream, read as they come', async () => {
    const response = await fetchOverHttp(`${origin}/events`, { method: 'GET' });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"n":1');
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      rest += new TextDecoder().decode(chunk.value);
    expect(rest).toContain('"n":2');
  });

  it('answers a 204 without a body, and refuses a body that is not a string', async () => {
    const empty = await fetchOverHttp(`${origin}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.headers.get('x-seen')).toBe('yes');
    expect(empty.body).toBeNull();
    await expect(
      fetchOverHttp(`${origin}/echo`, { method: 'POST', body: new Uint8Array([1]) }),
    ).rejects.toThrow('string bodies only');
  });
});
