import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
