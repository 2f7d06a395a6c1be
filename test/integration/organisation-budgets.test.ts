import { afterEach, describe, expect, it } from 'vitest';
import type { Limits } from '../../src/app/deps.ts';
import { ORGANISATION_COUNTER } from '../../src/app/rate-limiter.ts';
import type { HttpOptions } from '../../src/http/build-app.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { connectSse, connectStreamableHttp } from '../helpers/mcp-servers.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The organisation-wide budgets (design 9.1): requests per minute counted across all of an
 * organisation's keys, by REST, MCP tool calls and SSE stream opens alike, and legacy SSE streams held
 * at once. One organisation with many keys is refused past its budget while another organisation's
 * key is served.
 */
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

// 09:00:30: mid-window, so the reset is 30 seconds away.
const NOW = '2026-11-23T09:00:30Z';
const windowEnd = String(Date.parse('2026-11-23T09:01:00Z') / 1000);

async function start(limits: Partial<Limits>, now = NOW, http?: HttpOptions): Promise<TestApp> {
  t = await startTestApp({
    catalogues: [smallCatalogue(), smallCatalogue({ slug: 'other-salon', prefix: 'OT' })],
    limits,
    now,
    ...(http && { http }),
  });
  return t;
}

const locations = (app: TestApp, key: string) => app.request({ method: 'GET', url: '/v1/locations', key });

describe('the organisation’s requests per minute, across its keys (REST)', () => {
  it('refuses the organisation past its budget while each key is under its own, and serves another organisation', async () => {
    const app = await start({ requestsPerMinute: 5, organisationRequestsPerMinute: 10 });
    const keys = [];
    for (let i = 0; i < 4; i++) keys.push(await app.keyFor('acme-hair', 'read'));
    const other = await app.keyFor('other-salon', 'read');

    const answers = [];
    for (let round = 0; round < 3; round++) {
      for (const key of keys) answers.push(await locations(app, key));
    }
    // 12 requests, 3 per key (each key under its 5): the organisation's first 10 are served.
    expect(answers.map((r) => r.statusCode)).toEqual([...Array(10).fill(200), 429, 429]);
    // Served, a request reports its key's window, as the contract says.
    expect(answers[9]!.headers['x-ratelimit-limit']).toBe('5');
    expect(answers[9]!.headers['x-ratelimit-remaining']).toBe('2');
    // Refused by the organisation's budget: its window, and a message that says whose budget is spent.
    const refused = answers[11]!;
    expect(refused.json()).toEqual({
      error: {
        code: 'rate_limited',
        message:
          'More than 10 requests in a minute for this organisation, across all its keys; wait and retry.',
      },
    });
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.headers['x-ratelimit-limit']).toBe('10');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-reset']).toBe(windowEnd);
    // A new key of the organisation is refused as well: the budget is the organisation's.
    expect((await locations(app, await app.keyFor('acme-hair', 'read'))).statusCode).toBe(429);

    // The other organisation is served meanwhile, on its own key's window.
    const served = await locations(app, other);
    expect(served.statusCode).toBe(200);
    expect(served.headers['x-ratelimit-remaining']).toBe('4');

    if (onPostgres) {
      // Counted in the shared table, in the organisation's own row, beside its keys' rows.
      const rows = await app.database.db
        .selectFrom('rate_limit_counters')
        .innerJoin('organisations', 'organisations.id', 'rate_limit_counters.organisation_id')
        .select(['organisations.slug', 'rate_limit_counters.count'])
        .where('rate_limit_counters.key', '=', ORGANISATION_COUNTER)
        .orderBy('organisations.slug')
        .execute();
      expect(rows).toEqual([
        { slug: 'acme-hair', count: 13 },
        { slug: 'other-salon', count: 1 },
      ]);
    }

    // The next window starts afresh for every key of the organisation.
    app.clock.set('2026-11-23T09:01:00Z');
    const next = await locations(app, keys[0]!);
    expect(next.statusCode).toBe(200);
    expect(next.headers['x-ratelimit-remaining']).toBe('4');
    expect(next.headers['x-ratelimit-reset']).toBe(String(Number(windowEnd) + 60));
  });

  it('does not count what a key’s own limit refused, so a runaway key spends only its own window', async () => {
    const app = await start({ requestsPerMinute: 3, organisationRequestsPerMinute: 5 });
    const runaway = await app.keyFor('acme-hair', 'read');
    const desk = await app.keyFor('acme-hair', 'read');
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await locations(app, runaway)).statusCode);
    expect(statuses).toEqual([200, 200, 200, ...Array(7).fill(429)]);
    const keyRefusal = await locations(app, runaway);
    expect(keyRefusal.json().error.message).toBe(
      'More than 3 requests in a minute for this key; wait and retry.',
    );
    expect(keyRefusal.headers['x-ratelimit-limit']).toBe('3');

    // The organisation has spent 3 of its 5: the desk's key gets the other 2.
    const desk1 = await locations(app, desk);
    const desk2 = await locations(app, desk);
    const desk3 = await locations(app, desk);
    expect([desk1.statusCode, desk2.statusCode, desk3.statusCode]).toEqual([200, 200, 429]);
    expect(desk3.json().error.message).toMatch(/for this organisation, across all its keys/);
    expect(desk3.headers['x-ratelimit-limit']).toBe('5');
  });

  it('holds no key below a higher limit of its own, and the organisation’s other keys to the budget', async () => {
    const app = await start({ requestsPerMinute: 3, organisationRequestsPerMinute: 5 });
    const arranged = await app.keyFor('acme-hair', 'read', 8);
    const statuses = [];
    for (let i = 0; i < 9; i++) statuses.push((await locations(app, arranged)).statusCode);
    expect(statuses).toEqual([...Array(8).fill(200), 429]);
    // The organisation has made 8 requests, past its budget of 5: a key on the default limit is refused.
    const plain = await locations(app, await app.keyFor('acme-hair', 'read'));
    expect(plain.statusCode).toBe(429);
    expect(plain.headers['x-ratelimit-limit']).toBe('5');
  });
});

/** The app on a real port, for the MCP SDK's clients. */
async function listen(app: TestApp): Promise<string> {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on a port');
  return `http://127.0.0.1:${address.port}`;
}

describe('MCP shares the organisation’s budget', () => {
  it('refuses tool calls over Streamable HTTP and SSE once REST and MCP together have spent it', async () => {
    t = await startTestApp({
      catalogues: [demoCatalogue(), smallCatalogue()],
      limits: { requestsPerMinute: 5, organisationRequestsPerMinute: 6 },
      now: NOW,
    });
    const app = t;
    const origin = await listen(app);
    const rest = await app.keyFor('northside-hair', 'read');
    const agentKey = await app.keyFor('northside-hair', 'read');
    for (let i = 0; i < 3; i++) expect((await locations(app, rest)).statusCode).toBe(200);

    const agent = await connectStreamableHttp(origin, agentKey);
    const legacy = await connectSse(origin, agentKey); // the stream's opening: the organisation's 4th
    try {
      expect((await agent.call('list_locations')).ok).toBe(true); // 5th
      expect((await legacy.call('list_locations')).ok).toBe(true); // 6th
      const limited = await agent.call('list_locations');
      expect(limited).toMatchObject({ ok: false, code: 'rate_limited' });
      expect(limited.hint).toBe(
        'The booking system is busy; ask the caller to hold, wait 30 seconds, then try again.',
      );
      expect(await legacy.call('list_locations')).toMatchObject({ ok: false, code: 'rate_limited' });
      // REST with the other key, and a new stream with a new key, are refused by the same budget,
      // each key under its own limit of 5.
      const refused = await locations(app, rest);
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error.message).toMatch(/for this organisation/);
      const fresh = await app.keyFor('northside-hair', 'read');
      const stream = await fetch(`${origin}/sse`, { headers: { authorization: `Bearer ${fresh}` } });
      expect(stream.status).toBe(429);
      expect(stream.headers.get('retry-after')).toBe('30');
      expect(await stream.json()).toMatchObject({
        jsonrpc: '2.0',
        error: {
          code: -32000,
          data: {
            code: 'rate_limited',
            detail:
              'More than 6 requests in a minute for this organisation, across all its keys; wait and retry.',
          },
        },
      });
      // Another organisation's agent is served meanwhile.
      const stranger = await connectStreamableHttp(origin, await app.keyFor('acme-hair', 'read'));
      try {
        expect((await stranger.call('list_locations')).ok).toBe(true);
      } finally {
        await stranger.close();
      }

      app.clock.set('2026-11-23T09:01:00Z');
      expect((await agent.call('list_locations')).ok).toBe(true);
    } finally {
      await agent.close();
      await legacy.close();
    }
  });
});

describe('legacy SSE streams held by an organisation, across its keys', () => {
  /** A raw SSE stream: its answer, whether it has ended, and how to end it. */
  async function openStream(origin: string, key: string) {
    const controller = new AbortController();
    const response = await fetch(`${origin}/sse`, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    const stream = { status: response.status, response, ended: false, abort: () => controller.abort() };
    if (response.status !== 200) return stream;
    void (async () => {
      try {
        for await (const _ of response.body as AsyncIterable<Uint8Array>);
      } catch {
        // aborted by the test
      }
      stream.ended = true;
    })();
    return stream;
  }

  async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
    for (let waited = 0; !(await condition()); waited += 20) {
      if (waited > 5000) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('refuses a stream past the organisation’s cap without closing another key’s, and serves another organisation', async () => {
    // 2 streams per key, 3 per organisation.
    const app = await start({ organisationSseStreams: 3 }, new Date().toISOString(), {
      mcpSse: { maxStreamsPerKey: 2 },
    });
    const origin = await listen(app);
    const [one, two, three] = [
      await app.keyFor('acme-hair', 'read'),
      await app.keyFor('acme-hair', 'read'),
      await app.keyFor('acme-hair', 'read'),
    ];
    const streams = [
      await openStream(origin, one),
      await openStream(origin, one),
      await openStream(origin, two),
    ];
    try {
      expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);

      const refused = await openStream(origin, three);
      expect(refused.status).toBe(429);
      expect(refused.response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await refused.response.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          data: {
            code: 'rate_limited',
            detail:
              'This organisation already holds 3 SSE streams, across all its keys; close one or retry later.',
          },
        },
      });
      // A key under its own cap is refused too: the organisation's are all taken.
      expect((await openStream(origin, two)).status).toBe(429);
      // Nobody's stream was closed for them.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(streams.map((s) => s.ended)).toEqual([false, false, false]);

      // A key at its own cap replaces its oldest, as before: the organisation's count stays.
      const replacing = await openStream(origin, one);
      streams.push(replacing);
      expect(replacing.status).toBe(200);
      await until(() => streams[0]!.ended, 'key one’s oldest stream to close');
      expect(streams.slice(1).map((s) => s.ended)).toEqual([false, false, false]);

      // Another organisation's key opens its stream.
      const stranger = await openStream(origin, await app.keyFor('other-salon', 'read'));
      streams.push(stranger);
      expect(stranger.status).toBe(200);

      // Once one of the organisation's streams ends, its place is free again.
      streams[2]!.abort();
      let freed: Awaited<ReturnType<typeof openStream>> | undefined;
      await until(async () => {
        const attempt = await openStream(origin, three);
        if (attempt.status === 200) freed = attempt;
        return freed !== undefined;
      }, 'a place to free');
      streams.push(freed!);
    } finally {
      for (const stream of streams) stream.abort();
    }
  });
});
