import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/app/api-key-crypto.ts';
import { revokeApiKey } from '../../src/app/api-key-service.ts';
import { countClients } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await t.close();
});

function expectAuthError(
  response: { statusCode: number; json(): unknown; headers: Record<string, unknown> },
  status: number,
  code: string,
) {
  expect(response.statusCode).toBe(status);
  expect(response.json()).toEqual({ error: { code, message: expect.any(String), param: 'Authorization' } });
  // RFC 6750: a 401 says how to authenticate.
  const challenge = {
    missing_api_key: 'Bearer realm="booking"',
    invalid_api_key: 'Bearer realm="booking", error="invalid_token"',
  };
  expect(response.headers['www-authenticate']).toBe(challenge[code as keyof typeof challenge]);
}

describe('authentication', () => {
  it('answers missing_api_key without an Authorization header', async () => {
    const response = await t.request({ method: 'GET', url: '/v1/locations', key: null });
    expectAuthError(response, 401, 'missing_api_key');
    expect(response.headers['x-request-id']).toBeTruthy();
  });

  it.each([
    ['an empty header', ''],
    ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['Bearer without a key', 'Bearer'],
    ['two tokens', 'Bearer bk_a bk_b'],
    ['a key of the wrong shape', 'Bearer sk_live_1234567890'],
    ['a key one character short', `Bearer bk_${'a'.repeat(39)}`],
    ['a well-formed unknown key', `Bearer bk_${'A'.repeat(40)}`],
  ])('answers invalid_api_key for %s', async (_, header) => {
    const response = await t.request({
      method: 'GET',
      url: '/v1/locations',
      key: null,
      headers: { authorization: header },
    });
    expectAuthError(response, 401, 'invalid_api_key');
  });

  it.each([
    ['as the whole header', (key: string) => key],
    ['after another scheme', (key: string) => `Token ${key}`],
    ['with spaces around it', (key: string) => `  ${key} `],
  ])(
    'says a valid key sent without "Bearer " is sent wrongly, not unknown or revoked (%s)',
    async (_, header) => {
      const response = await t.request({
        method: 'GET',
        url: '/v1/locations',
        key: null,
        headers: { authorization: header(t.keys.read) },
      });
      // The contract's code and envelope; the message says what to change.
      expectAuthError(response, 401, 'invalid_api_key');
      const { message } = (response.json() as { error: { message: string } }).error;
      expect(message).toBe(
        'The Authorization header holds an API key without "Bearer ": send it as "Authorization: Bearer <API key>".',
      );
      expect(message).not.toMatch(/revoked|unknown/);
    },
  );

  it('accepts the Bearer scheme in any case', async () => {
    const response = await t.request({
      method: 'GET',
      url: '/v1/locations',
      key: null,
      headers: { authorization: `bearer ${t.keys.read}` },
    });
    expect(response.statusCode).toBe(200);
  });

  it('refuses a revoked key at once, while other keys of the organisation keep working', async () => {
    const other = await t.keyFor('acme-hair', 'read');
    expect((await t.request({ method: 'GET', url: '/v1/locations', key: t.keys.read })).statusCode).toBe(200);
    // The row of t.keys.read, found by its hash: `other` is a read key too, and which of the two a
    // query without ORDER BY returns first is up to the database (PostgreSQL moves the row the request
    // above updated, last_used_at, to the end of the table).
    const row = await t.database.db
      .selectFrom('api_keys')
      .select('id')
      .where('key_hash', '=', hashApiKey(t.keys.read))
      .executeTakeFirstOrThrow();
    await revokeApiKey(t.database.db, row.id, t.clock.nowMs());
    expectAuthError(
      await t.request({ method: 'GET', url: '/v1/locations', key: t.keys.read }),
      401,
      'invalid_api_key',
    );
    expect((await t.request({ method: 'GET', url: '/v1/locations', key: other })).statusCode).toBe(200);
  });

  it('records last_used_at at most once a minute per key', async () => {
    const lastUsed = async () =>
      (
        await t.database.db
          .selectFrom('api_keys')
          .select('last_used_at')
          .where('key_last4', '=', t.keys.read.slice(-4))
          .executeTakeFirstOrThrow()
      ).last_used_at;
    expect(await lastUsed()).toBeNull();
    const first = t.clock.nowMs();
    await t.request({ method: 'GET', url: '/v1/locations', key: t.keys.read });
    expect(await lastUsed()).toBe(first);
    t.clock.advance({ seconds: 59 });
    await t.request({ method: 'GET', url: '/v1/locations', key: t.keys.read });
    expect(await lastUsed()).toBe(first);
    t.clock.advance({ seconds: 1 });
    await t.request({ method: 'GET', url: '/v1/locations', key: t.keys.read });
    expect(await lastUsed()).toBe(first + 60_000);
  });

  it('stores only the hash of a key', async () => {
    const rows = await t.database.db.selectFrom('api_keys').selectAll().execute();
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(t.keys.read);
    expect(dump).not.toContain(t.keys.readWrite);
  });
});

describe('scopes', () => {
  it('lets a read key read', async () => {
    expect(
      (await t.request({ method: 'GET', url: '/v1/locations/soho/staff', key: t.keys.read })).statusCode,
    ).toBe(200);
  });

  it('refuses a read key on a write endpoint with insufficient_scope', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      key: t.keys.read,
      payload: { first_name: 'Al', last_name: 'Smith', phone: '+447400123456' },
    });
    expectAuthError(response, 403, 'insufficient_scope');
    expect(await countClients(t.database.db)).toBe(1);
  });

  it('lets a read_write key write', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      key: t.keys.readWrite,
      payload: { first_name: 'Al', last_name: 'Smith', phone: '+447400123456' },
    });
    expect(response.statusCode).toBe(201);
  });
});

describe('failed authentication per client address', () => {
  const INITIALIZE = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  const bad = { authorization: `Bearer bk_${'B'.repeat(40)}` };

  it('throttles failures from an address, but never refuses a valid key of any organisation there', async () => {
    const app = await startTestApp({
      catalogues: [smallCatalogue({ slug: 'org-a' }), smallCatalogue({ slug: 'org-b', prefix: 'BB' })],
      limits: { failedAuthPerMinute: 5 },
      now: '2026-11-23T09:00:30Z',
    });
    try {
      const victim = await app.keyFor('org-b', 'read');
      const from = (remoteAddress: string, headers: Record<string, string>) =>
        app.request({ method: 'GET', url: '/v1/locations', key: null, headers, remoteAddress });
      for (let i = 1; i <= 5; i++) {
        const r = await from('127.0.0.9', bad);
        expect(r.statusCode).toBe(401);
        // The address's window is the one that applies to a caller without a usable key.
        expect(r.headers['x-ratelimit-limit']).toBe('5');
        expect(r.headers['x-ratelimit-remaining']).toBe(String(5 - i));
      }
      const throttled = await from('127.0.0.9', bad);
      expect(throttled.statusCode).toBe(429);
      expect(throttled.json().error.code).toBe('rate_limited');
      expect(throttled.headers['retry-after']).toBe('30');
      expect(throttled.headers['x-ratelimit-remaining']).toBe('0');
      expect((await from('127.0.0.9', {})).statusCode).toBe(429);

      // Another organisation's valid key from the very same address: served, on REST and on /mcp,
      // with its own window.
      const served = await from('127.0.0.9', { authorization: `Bearer ${victim}` });
      expect(served.statusCode).toBe(200);
      expect(served.headers['x-ratelimit-limit']).toBe('120');
      const mcp = await app.app.inject({
        method: 'POST',
        url: '/mcp',
        remoteAddress: '127.0.0.9',
        headers: { authorization: `Bearer ${victim}`, 'content-type': 'application/json' },
        payload: INITIALIZE,
      });
      expect(mcp.statusCode).toBe(200);
      expect(mcp.json().result.serverInfo.name).toBe('booking-engine');
      const mcpBad = await app.app.inject({
        method: 'POST',
        url: '/mcp',
        remoteAddress: '127.0.0.9',
        headers: { ...bad, 'content-type': 'application/json' },
        payload: INITIALIZE,
      });
      expect(mcpBad.statusCode).toBe(429);

      // Another address fails afresh, and the throttle lifts with the window.
      expect((await from('127.0.0.10', bad)).statusCode).toBe(401);
      app.clock.advance({ minutes: 1 });
      expect((await from('127.0.0.9', bad)).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('cannot be turned against a victim address through a trusted proxy’s X-Forwarded-For', async () => {
    const app = await startTestApp({ limits: { failedAuthPerMinute: 3 }, http: { trustProxy: true } });
    try {
      const viaProxy = (forwardedFor: string, authorization: string) =>
        app.request({
          method: 'GET',
          url: '/v1/locations',
          key: null,
          remoteAddress: '10.0.0.2',
          headers: { authorization, 'x-forwarded-for': forwardedFor, 'x-forwarded-proto': 'https' },
        });
      for (let i = 0; i < 5; i++) await viaProxy('198.51.100.7', bad.authorization);
      expect((await viaProxy('198.51.100.7', bad.authorization)).statusCode).toBe(429);
      const victim = await viaProxy('198.51.100.7', `Bearer ${app.keys.read}`);
      expect(victim.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
