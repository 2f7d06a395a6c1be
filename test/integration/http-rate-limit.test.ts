import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/app/api-key-crypto.ts';
import { createAppDeps, rateLimitStoreFor } from '../../src/app/deps.ts';
import { openDatabase } from '../../src/data/database.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeEach(async () => {
  // 09:00:30: mid-window, so the reset is 30 seconds away.
  t = await startTestApp({ now: '2026-11-23T09:00:30Z' });
});
afterEach(async () => {
  await t.close();
});

const windowEnd = Date.parse('2026-11-23T09:01:00Z') / 1000;

describe('per-key rate limit', () => {
  it('allows 120 requests in a window and refuses the 121st with Retry-After', async () => {
    for (let i = 1; i <= 120; i++) {
      const r = await t.request({ method: 'GET', url: '/v1/locations', key: t.keys.read });
      expect(r.statusCode).toBe(200);
      expect(r.headers['x-ratelimit-limit']).toBe('120');
      expect(r.headers['x-ratelimit-remaining']).toBe(String(120 - i));
      expect(r.headers['x-ratelimit-reset']).toBe(String(windowEnd));
    }
    const refused = await t.request({ method: 'GET', url: '/v1/locations', key: t.keys.read });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: { code: 'rate_limited', message: expect.any(String) } });
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-reset']).toBe(String(windowEnd));

    // Another key of the same organisation has its own window.
    expect((await t.request({ method: 'GET', url: '/v1/locations', key: t.keys.readWrite })).statusCode).toBe(
      200,
    );

    t.clock.set('2026-11-23T09:01:00Z');
    const next = await t.request({ method: 'GET', url: '/v1/locations', key: t.keys.read });
    expect(next.statusCode).toBe(200);
    expect(next.headers['x-ratelimit-remaining']).toBe('119');
    expect(next.headers['x-ratelimit-reset']).toBe(String(windowEnd + 60));
  });

  it('puts the headers on error responses too', async () => {
    const notFound = await t.request({ method: 'GET', url: '/v1/locations/nowhere/staff', key: t.keys.read });
    expect(notFound.statusCode).toBe(404);
    expect(notFound.headers['x-ratelimit-limit']).toBe('120');
    expect(notFound.headers['x-ratelimit-remaining']).toBe('119');
    const badRequest = await t.request({ method: 'GET', url: '/v1/locations?limit=500', key: t.keys.read });
    expect(badRequest.statusCode).toBe(400);
    expect(badRequest.headers['x-ratelimit-remaining']).toBe('118');
    const forbidden = await t.request({
      method: 'POST',
      url: '/v1/clients',
      key: t.keys.read,
      payload: { first_name: 'A', last_name: 'B', email: 'a@example.com' },
    });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.headers['x-ratelimit-remaining']).toBe('117');
  });

  it('honours a per-key limit', async () => {
    const key = await t.keyFor('acme-hair', 'read', 3);
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await t.request({ method: 'GET', url: '/v1/locations', key })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe('one key on two instances of one database', () => {
  it('counts into one window, each request counted by the statement that finds its key (PostgreSQL)', async () => {
    // A second instance: its own connection to the database (and, on SQLite, to the counters file
    // beside it), every statement it runs noted.
    const statements: string[] = [];
    const handle = openDatabase(t.database.url, { onQuery: (sql) => statements.push(sql) });
    const other: FastifyInstance = await buildApp(
      createAppDeps({
        db: handle.db,
        clock: t.clock,
        secret: 'test-secret',
        rateLimitStore: rateLimitStoreFor(handle.db, onPostgres ? null : t.database.file),
      }),
    );
    const key = await t.keyFor('acme-hair', 'read', 6);
    try {
      const answers = [];
      for (let i = 0; i < 7; i++) {
        statements.length = 0;
        const response =
          i % 2 === 0
            ? await t.request({ method: 'GET', url: '/v1/locations', key })
            : await other.inject({
                method: 'GET',
                url: '/v1/locations',
                headers: { authorization: `Bearer ${key}` },
              });
        answers.push([response.statusCode, response.headers['x-ratelimit-remaining']]);
        if (i % 2 === 1 && onPostgres) {
          // The key's lookup and its count are one statement; no other adds to the counters (the first
          // request of a window in a process deletes the windows that have passed).
          const lookups = statements.filter((sql) => /"api_keys"/.test(sql));
          expect(lookups).toHaveLength(1);
          expect(lookups[0]).toMatch(/insert into rate_limit_counters/i);
          expect(
            statements.filter((sql) => /rate_limit_counters/.test(sql) && !/^\s*delete\b/i.test(sql)),
          ).toEqual(lookups);
        }
      }
      expect(answers).toEqual([
        [200, '5'],
        [200, '4'],
        [200, '3'],
        [200, '2'],
        [200, '1'],
        [200, '0'],
        [429, '0'],
      ]);
      // Refused on either instance, and the next window starts afresh on both.
      const refused = await other.inject({
        method: 'GET',
        url: '/v1/locations',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('30');
      t.clock.set('2026-11-23T09:01:00Z');
      const next = await other.inject({
        method: 'GET',
        url: '/v1/locations',
        headers: { authorization: `Bearer ${key}` },
      });
      expect([next.statusCode, next.headers['x-ratelimit-remaining']]).toEqual([200, '5']);
      expect(
        (await t.request({ method: 'GET', url: '/v1/locations', key })).headers['x-ratelimit-remaining'],
      ).toBe('4');
    } finally {
      await other.close();
      await handle.close();
    }
  });

  it('a revoked key is refused and counted as a failed authentication, not as a request of the key', async () => {
    const key = await t.keyFor('acme-hair', 'read', 6);
    expect(
      (await t.request({ method: 'GET', url: '/v1/locations', key })).headers['x-ratelimit-remaining'],
    ).toBe('5');
    const { id } = await t.database.db
      .selectFrom('api_keys')
      .select('id')
      .where('key_hash', '=', hashApiKey(key))
      .executeTakeFirstOrThrow();
    await t.database.db
      .updateTable('api_keys')
      .set({ revoked_at: t.clock.nowMs() })
      .where('id', '=', id)
      .execute();
    const refused = await t.request({ method: 'GET', url: '/v1/locations', key });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error.code).toBe('invalid_api_key');
    // The address's failure window (30 by default), not the key's.
    expect(refused.headers['x-ratelimit-limit']).toBe('30');
    expect(refused.headers['x-ratelimit-remaining']).toBe('29');
    if (onPostgres) {
      const counts = await t.database.db
        .selectFrom('rate_limit_counters')
        .select(['key', 'count'])
        .where('key', '=', `key:${id}`)
        .execute();
      expect(counts).toEqual([{ key: `key:${id}`, count: 1 }]);
    }
  });
});
