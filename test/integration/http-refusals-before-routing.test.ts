import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PARAM_LENGTH } from '../../src/http/error-envelope.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * What a request refused before it reaches a route is told: bytes Node cannot take as a request
 * (answered by the client-error handler on the raw socket) and paths the router refuses.
 */

/** Every byte the server sends for `raw`, until it closes the connection. */
function exchange(origin: string, raw: string): Promise<Buffer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect({ host: hostname, port: Number(port) }, () => socket.write(raw));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

/** The status line, headers and whatever follows them. */
function split(answer: Buffer): { status: number; headers: string; rest: string } {
  const text = answer.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  expect(end).toBeGreaterThan(0);
  return {
    status: Number(text.slice(9, 12)),
    headers: text.slice(0, end).toLowerCase(),
    rest: text.slice(end + 4),
  };
}

describe('refusals before routing', () => {
  let t: TestApp;
  let origin: string;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t.app.close();
    await t.database.dispose();
  });

  const oversized = `X-Pad: ${'a'.repeat(17_000)}\r\n`;

  it.each([
    [
      'headers over 16 KiB',
      (method: string) => `${method} /v1/locations HTTP/1.1\r\nHost: x\r\n${oversized}\r\n`,
      431,
    ],
    [
      'a control byte in the path',
      (method: string) => `${method} /v1/loc\x01ations HTTP/1.1\r\nHost: x\r\n\r\n`,
      400,
    ],
  ])('answers a HEAD request with %s without a body, a GET with the envelope', async (_, request, status) => {
    const get = split(await exchange(origin, request('GET')));
    expect(get.status).toBe(status);
    expect(JSON.parse(get.rest).error.code).toBe(status === 431 ? 'headers_too_large' : 'invalid_request');

    const head = split(await exchange(origin, request('HEAD')));
    expect(head.status).toBe(status);
    expect(head.headers).toContain('connection: close');
    expect(head.headers).toContain(`content-length: ${Buffer.byteLength(get.rest)}`);
    expect(head.rest).toBe('');
  });

  it.each([
    ['a host and port', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'],
    ['a path of the API', 'CONNECT /v1/locations HTTP/1.1\r\nHost: x\r\n\r\n'],
  ])('answers CONNECT to %s with 405 in the envelope, then closes', async (_, request) => {
    const answer = split(await exchange(origin, request));
    expect(answer.status).toBe(405);
    expect(answer.headers).toMatch(/\r\nallow: \r\n/);
    expect(answer.headers).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/);
    expect(answer.headers).toContain('connection: close');
    expect(JSON.parse(answer.rest)).toEqual({
      error: {
        code: 'method_not_allowed',
        message:
          'CONNECT is not served here: this is no proxy. Send GET, POST, PATCH or DELETE to a path of the API.',
      },
    });
  });

  it('keeps the connection of a refusal whose request has all arrived: the next request on it is answered', async () => {
    // Refused in the onRequest hook (no route, a wrong method, a NUL, no Host) and without a body:
    // nothing is left to wait for, so the connection stays open for the next request.
    const refused = [
      'GET /nope HTTP/1.1\r\nHost: x\r\n\r\n',
      'DELETE /v1/locations HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v1/locations%00 HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v1/locations HTTP/1.0\r\nConnection: keep-alive\r\n\r\n',
    ];
    for (const request of refused) {
      const answers = (await exchange(origin, `${request}GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n`))
        .toString('latin1')
        .split(/(?=HTTP\/1\.1 \d{3} )/);
      expect(
        answers.map((answer) => answer.slice(9, 12)),
        request,
      ).toEqual([expect.stringMatching(/^4\d\d$/), '200']);
      expect(answers[0]!.toLowerCase(), request).not.toContain('connection: close');
    }
  });

  it('closes the connection of a refusal whose body has not all arrived', async () => {
    const answer = split(
      await exchange(
        origin,
        'POST /nope HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
      ),
    );
    expect(answer.status).toBe(404);
    expect(answer.headers).toContain('connection: close');
  });

  it('says in words what is wrong with a path that is not percent-encoded UTF-8', async () => {
    for (const path of ['/v1/bookings/%ZZ', '/v1/bookings/%C0%AF']) {
      const response = await t.request({ method: 'GET', url: path });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        error: {
          code: 'invalid_request',
          message: 'The URL is not valid: every % must begin the escape of a UTF-8 character, such as %20.',
          param: 'url',
        },
      });
    }
  });

  it('says how long a path segment may be', async () => {
    const response = await t.request({
      method: 'GET',
      url: `/v1/bookings/${'a'.repeat(MAX_PARAM_LENGTH + 1)}`,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: {
        code: 'invalid_request',
        message: `A segment of the URL's path is longer than ${MAX_PARAM_LENGTH} characters.`,
        param: 'url',
      },
    });
  });
});
