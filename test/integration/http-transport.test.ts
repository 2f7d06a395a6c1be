import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** The HTTPS rule of design.md section 6, over real sockets where the peer address matters. */

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

describe('plain HTTP', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startTestApp();
    base = `http://${await listen(t)}`;
  });
  afterAll(async () => {
    await t.close();
  });
  const get = (url: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${url}`, { headers: { authorization: `Bearer ${t.keys.read}`, ...headers } });

  it('is served to a loopback client', async () => {
    expect((await get('/v1/locations')).status).toBe(200);
  });

  it('is refused to a non-loopback peer with 403 https_required', async () => {
    const response = await t.request({ method: 'GET', url: '/v1/locations', remoteAddress: '203.0.113.7' });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('https_required');
    expect(response.headers['x-request-id']).toBeTruthy();
  });

  it('is refused when an untrusted proxy relays a client, whatever it claims', async () => {
    const relays: Record<string, string>[] = [
      { 'x-forwarded-proto': 'https' },
      { 'x-forwarded-for': '198.51.100.4' },
      { forwarded: 'for=198.51.100.4;proto=https' },
    ];
    for (const headers of relays) {
      const response = await get('/v1/locations', headers);
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('https_required');
    }
  });

  it('does not apply to the health check', async () => {
    const response = await t.request({
      method: 'GET',
      url: '/healthz',
      remoteAddress: '10.0.0.8',
      key: null,
    });
    expect(response.statusCode).toBe(200);
  });
});

describe('behind a trusted proxy', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startTestApp({ http: { trustProxy: '127.0.0.1' } });
    base = `http://${await listen(t)}`;
  });
  afterAll(async () => {
    await t.close();
  });
  const get = (headers: Record<string, string>) =>
    fetch(`${base}/v1/locations`, { headers: { authorization: `Bearer ${t.keys.read}`, ...headers } });

  it('serves a client the proxy reports as https', async () => {
    expect((await get({ 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.4' })).status).toBe(200);
  });

  it('refuses a client the proxy reports as plain http', async () => {
    expect((await get({ 'x-forwarded-proto': 'http', 'x-forwarded-for': '198.51.100.4' })).status).toBe(403);
  });

  it('refuses a proxy it does not trust', async () => {
    const response = await t.request({
      method: 'GET',
      url: '/v1/locations',
      remoteAddress: '192.0.2.50',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(response.statusCode).toBe(403);
  });
});

describe('HTTPS', () => {
  let t: TestApp;
  let dir: string;
  let cert: Buffer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'booking-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(path.join(dir, 'cert.pem'));
    t = await startTestApp({ http: { https: { cert, key: readFileSync(path.join(dir, 'key.pem')) } } });
    await listen(t);
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the API over TLS with a certificate made in the test', async () => {
    const { port } = t.app.server.address() as AddressInfo;
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/v1/locations',
          ca: cert,
          headers: { authorization: `Bearer ${t.keys.read}` },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    expect(JSON.parse(body).data.length).toBe(2);
  });

  it('serves a remote peer over TLS (the rule is about the transport, not the address)', async () => {
    // inject() cannot carry TLS; the protocol a real TLS socket reports is what the guard checks.
    const response = await t.app.inject({ method: 'GET', url: '/healthz', remoteAddress: '203.0.113.7' });
    expect(response.statusCode).toBe(200);
  });
});

/**
 * A raw connection that sends `parts` with pauses between them and collects what the server says,
 * until the server closes it or `giveUpMs` passes.
 */
async function trickle(
  port: number,
  parts: string[],
  options: { pauseMs: number; giveUpMs: number },
): Promise<{ text: string; closedAfterMs: number | null }> {
  const socket = connect({ port, host: '127.0.0.1' });
  const started = performance.now();
  let text = '';
  let closedAfterMs: number | null = null;
  socket.on('data', (chunk) => {
    text += chunk.toString('latin1');
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closedAfterMs = performance.now() - started;
      resolve();
    }),
  );
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  for (const part of parts) {
    if (socket.destroyed) break;
    socket.write(part);
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, options.pauseMs))]);
  }
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, options.giveUpMs))]);
  socket.destroy();
  return { text, closedAfterMs };
}

describe('slow clients', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp({ http: { timeouts: { headersMs: 300, requestMs: 600, checkEveryMs: 50 } } });
    await listen(t);
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t.close();
  });
  const body = JSON.stringify({ first_name: 'Slow', last_name: 'Body', email: 'slow@example.com' });
  const post = (path: string, authorization: string | null) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${authorization ? `Authorization: ${authorization}\r\n` : ''}` +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;

  it('cannot hold a connection by sending its headers a byte at a time', async () => {
    const head = 'GET /v1/locations HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ';
    const { text, closedAfterMs } = await trickle(port, [...head, ...'a'.repeat(200)], {
      pauseMs: 20,
      giveUpMs: 3_000,
    });
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toContain('"code":"request_timeout"');
    expect(text).toMatch(/x-ratelimit-limit: \d+/);
    expect(closedAfterMs).not.toBeNull();
    expect(closedAfterMs!).toBeLessThan(2_000);
  });

  it('cannot hold a connection by sending a body a byte at a time, even with a valid key', async () => {
    const { text, closedAfterMs } = await trickle(
      port,
      [post('/v1/clients', `Bearer ${t.keys.readWrite}`), ...body],
      { pauseMs: 50, giveUpMs: 3_000 },
    );
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs!).toBeLessThan(2_500);
    const stored = await t.database.db
      .selectFrom('clients')
      .select('id')
      .where('email', '=', 'slow@example.com')
      .execute();
    expect(stored).toEqual([]);
  });

  it('refuses a slow body without a key at once, before reading it, and closes the connection', async () => {
    for (const path of ['/v1/clients', '/mcp', '/v1/no-such-endpoint']) {
      const { text, closedAfterMs } = await trickle(port, [post(path, null), ...body.slice(0, 5)], {
        pauseMs: 100,
        giveUpMs: 3_000,
      });
      expect(text, path).toMatch(/^HTTP\/1\.1 (401|404) /);
      expect(text.toLowerCase(), path).toContain('connection: close');
      // Closed as soon as the refusal was written, long before any timeout could have cut it.
      expect(closedAfterMs, path).not.toBeNull();
      expect(closedAfterMs!, path).toBeLessThan(400);
    }
  });
});
