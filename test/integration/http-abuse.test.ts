import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { type Dialect, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAppDeps, DEFAULT_LIMITS } from '../../src/app/deps.ts';
import { checkIntegrity } from '../../src/data/integrity-check.ts';
import { SqliteDatabase } from '../../src/data/sqlite-driver.ts';
import type { Database } from '../../src/data/tables.ts';
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/domain/errors.ts';
import { buildApp } from '../../src/http/build-app.ts';
import {
  DEFAULT_ABUSE_SEED,
  type RawResponse,
  runAbuseCampaign,
  sendHttp,
} from '../helpers/abuse-campaign.ts';
import { countClients } from '../helpers/booking-fixtures.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Malformed requests of every kind against a real listening server, key guessing, and what a key
 * lookup costs. ABUSE_SEED and ABUSE_RUNS replay or widen the campaign; its seed is in every failure.
 */

const SEED = Number(process.env.ABUSE_SEED ?? DEFAULT_ABUSE_SEED);
// Most of what the campaign probes is HTTP, the same on both databases; the PostgreSQL run keeps a
// share of it for what does differ (what text the database accepts, as NUL showed).
const RUNS = Number(process.env.ABUSE_RUNS ?? (onPostgres ? 3_000 : 8_000));
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const wellFormedKey = fc
  .string({ unit: fc.constantFrom(...BASE62), minLength: 40, maxLength: 40 })
  .map((body) => `bk_${body}`);

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

/**
 * The MCP endpoints refuse as JSON-RPC (design.md 8.1): an error whose message is the hint and whose
 * data carries the REST code and message; a 401 also says how to authenticate.
 */
function mcpRefusalOf(
  response: RawResponse,
  body: { error: { message: string; data: { code: string; detail: string; param?: string } } },
): { code: string; message: string; param?: string } {
  const { code, detail, param } = body.error.data;
  expect(body.error.message).toBe(ERROR_CATALOGUE[code as ErrorCode].hint);
  if (response.status === 401) expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  return { code, message: detail, ...(param !== undefined && { param }) };
}

function envelopeOf(response: RawResponse): { code: string; message: string; param?: string } {
  expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$|^[A-Za-z0-9._:-]{1,128}$/);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(response.body.toString('utf8'));
  if (body.jsonrpc === '2.0') return mcpRefusalOf(response, body);
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toEqual({
    code: expect.any(String),
    message: expect.any(String),
    ...(body.error.param !== undefined && { param: expect.any(String) }),
  });
  return body.error;
}

/**
 * What `booking check` proves, on either database: storage intact (SQLite's integrity and foreign-key
 * checks; no unvalidated constraint on PostgreSQL), and every invariant of the bookings the campaign
 * wrote.
 */
async function expectDatabaseIntact(t: TestApp): Promise<void> {
  const report = await checkIntegrity(t.database.db, t.clock.nowMs());
  expect(report.findings.filter((finding) => finding.violations > 0)).toEqual([]);
  expect(report.ok).toBe(true);
}

describe('an abuse campaign over real HTTP', () => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await startTestApp();
    baseUrl = await listen(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers every malformed request with a 4xx envelope and a request id, and stays healthy', async () => {
    const key = await t.keyFor('acme-hair', 'read_write', 1_000_000);
    const started = performance.now();
    const figures = await runAbuseCampaign({ baseUrl, key, numRuns: RUNS, seed: SEED });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const report = `abuse campaign, seed ${figures.seed} (replay: ABUSE_SEED=${figures.seed} ABUSE_RUNS=${RUNS}), ${figures.requests} requests in ${seconds} s, statuses ${JSON.stringify(figures.statusCounts)}\n${figures.envelopeViolations.join('\n')}`;
    console.info(report);

    expect(figures.serverErrors, report).toBe(0);
    expect(figures.envelopeViolations, report).toEqual([]);
    expect(figures.healthyAfter, report).toBe(true);
    // The campaign reached every layer: successes, validation, auth, routing, limits and the parser.
    expect(figures.requests, report).toBeGreaterThan(RUNS);
    const statuses = Object.keys(figures.statusCounts).map(Number);
    expect(statuses, report).toEqual(expect.arrayContaining([200, 201, 400, 401, 404, 405, 413, 429, 431]));
    await expectDatabaseIntact(t);
  }, 90_000);
});

describe('requests refused before the app sees them', () => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await startTestApp();
    baseUrl = await listen(t);
  });
  afterAll(async () => {
    await t.close();
  });
  const auth = () => `Authorization: Bearer ${t.keys.readWrite}\r\n`;
  /** A raw request carrying a key, made when the test runs (beforeAll makes the keys after this table). */
  class Keyed {
    readonly request: () => string;
    constructor(request: () => string) {
      this.request = request;
    }
  }
  const keyed = (request: () => string) => new Keyed(request);

  it.each([
    ['a path that is not percent-encoded UTF-8', '/v1/locations/%E0%A4%A/services', '%E0%A4%A'],
    ['a path parameter over 500 characters', `/v1/locations/${'a'.repeat(600)}/services`, 'aaaa'],
  ])('answers %s with a 400 envelope that does not echo the path', async (_, path, echo) => {
    const response = await sendHttp(baseUrl, { path, headers: { authorization: `Bearer ${t.keys.read}` } });
    expect(response.status).toBe(400);
    expect(envelopeOf(response).code).toBe('invalid_request');
    expect(response.body.toString()).not.toContain(echo);
  });

  it.each([
    [
      'broken chunking',
      // With a key, so that the request is not refused (401) before its body is read.
      keyed(
        () =>
          `POST /v1/clients HTTP/1.1\r\nHost: x\r\n${auth()}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      ),
      400,
    ],
    [
      'raw bytes that are not UTF-8 in the path',
      Buffer.concat([
        Buffer.from('GET /v1/locations/'),
        Buffer.from([0xff]),
        Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
      ]),
      400,
    ],
    ['an unknown method', 'FOO /v1/locations HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    [
      'headers over 16 KiB',
      `GET /v1/locations HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(17_000)}\r\n\r\n`,
      431,
    ],
  ])('answers %s with an envelope, a request id and rate-limit headers', async (_, raw, status) => {
    const response = await sendHttp(baseUrl, { raw: raw instanceof Keyed ? raw.request() : raw });
    expect(response.status).toBe(status);
    expect(envelopeOf(response).code).toBe(status === 431 ? 'headers_too_large' : 'invalid_request');
    expect(response.headers.connection).toBe('close');
    // A request with a valid key may be answered by the route, with the key's window, before Node's
    // parser reports the broken body; the others never become requests: their address's window.
    if (raw instanceof Keyed) expect(response.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    else expect(response.headers['x-ratelimit-limit']).toBe(String(DEFAULT_LIMITS.failedAuthPerMinute));
    expect(response.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(response.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
  });

  it('answers a request cut short with an envelope', async () => {
    const raw = `POST /v1/clients HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`;
    const response = await sendHttp(baseUrl, { raw, halfClose: true });
    expect(response.status).toBe(400);
    expect(envelopeOf(response).code).toBe('invalid_request');
  });

  it('answers a request without Host with an envelope naming Host, except the health check', async () => {
    // HTTP/1.0 may omit Host, but links such as payment_url are built from it.
    for (const version of ['1.1', '1.0']) {
      const response = await sendHttp(baseUrl, {
        raw: `GET /v1/locations HTTP/${version}\r\n${auth()}Connection: close\r\n\r\n`,
      });
      expect(response.status, version).toBe(400);
      expect(envelopeOf(response)).toMatchObject({ code: 'invalid_request', param: 'Host' });
    }
    // Health checkers (HAProxy's default httpchk, say) send HTTP/1.0 without Host.
    const health = await sendHttp(baseUrl, { raw: 'GET /healthz HTTP/1.0\r\n\r\n' });
    expect(health.status).toBe(200);
  });

  it('answers an expectation other than 100-continue with a 417 envelope naming Expect', async () => {
    const response = await sendHttp(baseUrl, {
      path: '/v1/locations',
      headers: { authorization: `Bearer ${t.keys.read}`, expect: 'the-impossible', 'x-request-id': 'call-7' },
    });
    expect(response.status).toBe(417);
    expect(envelopeOf(response)).toMatchObject({ code: 'expectation_failed', param: 'Expect' });
    expect(response.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    expect(response.headers['x-request-id']).toBe('call-7');
  });
});

describe('bodies that are not UTF-8 text', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });
  const clientCount = () => countClients(t.database.db);

  it.each([
    [
      'a lone high surrogate',
      '{"first_name":"A\\ud800B","last_name":"Lee","email":"s1@example.com"}',
      'first_name',
    ],
    [
      'a lone low surrogate',
      '{"first_name":"A","last_name":"\\udc00","email":"s2@example.com"}',
      'last_name',
    ],
    [
      'surrogates in the wrong order',
      '{"first_name":"\\udc00\\ud800","last_name":"Lee","email":"s3@example.com"}',
      'first_name',
    ],
  ])('refuses a name with %s instead of storing U+FFFD, naming the field', async (_, payload, field) => {
    const before = await clientCount();
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toEqual({
      code: 'invalid_request',
      message: `${field} holds a lone UTF-16 surrogate escape; send text only.`,
      param: field,
    });
    expect(await clientCount()).toBe(before);
  });

  it('refuses Latin-1 bytes sent as JSON instead of storing U+FFFD', async () => {
    const before = await clientCount();
    const payload = Buffer.concat([
      Buffer.from('{"first_name":"Zo'),
      Buffer.from([0xeb]),
      Buffer.from('","last_name":"Lee","email":"latin1@example.com"}'),
    ]);
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      headers: { 'content-type': 'application/json; charset=latin1' },
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param: 'body' });
    expect(await clientCount()).toBe(before);
  });

  it('still takes escaped surrogate pairs, astral characters and escaped backslashes before u', async () => {
    const payload =
      '{"first_name":"\\ud83d\\ude42 Zoë 🙂","last_name":"C:\\\\ud800","email":"pairs@example.com"}';
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(response.statusCode).toBe(201);
    const stored = await t.request({ method: 'GET', url: '/v1/clients?email=pairs%40example.com' });
    expect(stored.json().data).toMatchObject({ first_name: '🙂 Zoë 🙂', last_name: 'C:\\ud800' });
  });
});

describe('key guessing', () => {
  let t: TestApp;
  let baseUrl: string;
  afterEach(async () => {
    await t.close();
  });
  const locations = (
    authorization: string | undefined,
    localAddress: string,
    extra: Record<string, string> = {},
  ) =>
    sendHttp(baseUrl, {
      path: '/v1/locations',
      headers: { ...(authorization !== undefined && { authorization }), ...extra },
      localAddress,
    });
  const mcpPing = (authorization: string, localAddress: string) =>
    sendHttp(baseUrl, {
      method: 'POST',
      path: '/mcp',
      headers: {
        authorization,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      localAddress,
    });

  it('throttles an address after the failure limit of wrong keys, on both faces, until the window ends, but never the right key', async () => {
    // 09:00:30: mid-window, so the throttle has 30 seconds to run.
    t = await startTestApp({ now: '2026-11-23T09:00:30Z' });
    baseUrl = await listen(t);
    const limit = t.deps.limits.failedAuthPerMinute;
    expect(limit).toBe(DEFAULT_LIMITS.failedAuthPerMinute);
    const guesses = fc.sample(fc.uniqueArray(wellFormedKey, { minLength: limit + 2, maxLength: limit + 2 }), {
      seed: SEED,
      numRuns: 1,
    })[0]!;
    const guesser = '127.0.0.3';

    // Guesses through REST and MCP count alike: the two faces share one count.
    for (const [index, guess] of guesses.slice(0, limit).entries()) {
      const response =
        index % 2 === 0
          ? await locations(`Bearer ${guess}`, guesser)
          : await mcpPing(`Bearer ${guess}`, guesser);
      expect(response.status, `guess ${index}`).toBe(401);
      expect(envelopeOf(response)).toEqual({
        code: 'invalid_api_key',
        message: expect.any(String),
        param: 'Authorization',
      });
    }
    const refused = await locations(`Bearer ${guesses[limit]}`, guesser);
    expect(refused.status).toBe(429);
    expect(envelopeOf(refused).code).toBe('rate_limited');
    expect(refused.headers['retry-after']).toBe('30');
    const mcpRefused = await mcpPing(`Bearer ${guesses[limit + 1]}`, guesser);
    expect(mcpRefused.status).toBe(429);
    expect(envelopeOf(mcpRefused).code).toBe('rate_limited');
    expect((await locations(undefined, guesser)).status).toBe(429);

    // The right key is served from that address all along, on both faces: an address may be shared by
    // many organisations (a NAT, a voice platform), and the key space makes guessing hopeless anyway.
    const valid = `Bearer ${t.keys.read}`;
    const served = await locations(valid, guesser);
    expect(served.status).toBe(200);
    expect(served.headers['x-ratelimit-limit']).toBe(String(DEFAULT_LIMITS.requestsPerMinute));
    expect((await mcpPing(valid, guesser)).status).toBe(200);

    // Another address has its own count.
    const bystander = '127.0.0.4';
    expect((await locations(`Bearer ${guesses[0]}`, bystander)).status).toBe(401);

    t.clock.advance({ seconds: 29 });
    expect((await locations(`Bearer ${guesses[0]}`, guesser)).status).toBe(429);
    t.clock.advance({ seconds: 1 });
    expect((await locations(`Bearer ${guesses[0]}`, guesser)).status).toBe(401);
  });

  it('behind a trusted proxy counts failures per forwarded client, who cannot forge its way out', async () => {
    t = await startTestApp({ http: { trustProxy: '127.0.0.1' }, limits: { failedAuthPerMinute: 5 } });
    baseUrl = await listen(t);
    const guesses = fc.sample(wellFormedKey, { seed: SEED, numRuns: 7 });
    // The proxy appends the address it saw; what the client put in front of it is not believed.
    const viaProxy = (client: string, forged: string) => ({
      'x-forwarded-proto': 'https',
      'x-forwarded-for': `${forged}, ${client}`,
    });
    for (const [index, guess] of guesses.slice(0, 5).entries()) {
      const response = await locations(
        `Bearer ${guess}`,
        '127.0.0.1',
        viaProxy('198.51.100.4', `203.0.113.${index}`),
      );
      expect(response.status).toBe(401);
    }
    const throttled = await locations(
      `Bearer ${guesses[5]}`,
      '127.0.0.1',
      viaProxy('198.51.100.4', '203.0.113.99'),
    );
    expect(throttled.status).toBe(429);
    expect(envelopeOf(throttled).code).toBe('rate_limited');
    expect(
      (await locations(`Bearer ${guesses[6]}`, '127.0.0.1', viaProxy('198.51.100.5', '203.0.113.1'))).status,
    ).toBe(401);
  });
});

describe('key comparison leaks no timing', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  /**
   * A second connection to the test database, whose every query is logged with its parameters (the
   * app's own handle logs no parameters). On PostgreSQL, bigint and numeric are read as numbers, as
   * src/data/postgres.ts reads them.
   */
  function loggingDialect(): Dialect {
    if (!onPostgres) return new SqliteDialect({ database: new SqliteDatabase(t.database.file) });
    const asNumber = (text: string) => Number(text);
    const pool = new pg.Pool({
      connectionString: t.database.url,
      max: 2,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC
            ? asNumber
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    return new PostgresDialect({ pool });
  }

  /**
   * An app on the test database whose every query is logged with its parameters. The failure limit is
   * lifted, so that every request reaches the key lookup.
   */
  async function loggedApp(failedAuthPerMinute = Number.MAX_SAFE_INTEGER) {
    const queries: Array<{ sql: string; parameters: readonly unknown[] }> = [];
    const db = new Kysely<Database>({
      dialect: loggingDialect(),
      log: (event) => {
        if (event.level === 'query')
          queries.push({ sql: event.query.sql, parameters: event.query.parameters });
      },
    });
    const app = await buildApp(
      createAppDeps({
        db,
        clock: t.clock,
        secret: 'test-secret',
        limits: { ...DEFAULT_LIMITS, failedAuthPerMinute },
      }),
    );
    /** The queries one request made, and its answer. */
    const cost = async (authorization: string) => {
      queries.length = 0;
      const response = await app.inject({ method: 'GET', url: '/v1/locations', headers: { authorization } });
      return {
        status: response.statusCode,
        code: response.json().error?.code as string | undefined,
        queries: [...queries],
      };
    };
    return {
      cost,
      async close() {
        await app.close();
        await db.destroy();
      },
    };
  }

  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  type Query = { sql: string; parameters: readonly unknown[] };
  const onApiKeys = (query: Query) => /"api_keys"/.test(query.sql);

  /**
   * The key lookups among a request's queries. Besides them, SQLite makes none (its rate-limit windows
   * live in the process); PostgreSQL counts failed authentications in rate_limit_counters, shared by
   * every instance (src/data/rate-limit-counters.ts), and nothing else.
   */
  function keyLookupsOf(queries: Query[]): Query[] {
    const others = queries.filter((query) => !onApiKeys(query));
    if (onPostgres) {
      expect(others.map((query) => query.sql)).toEqual(
        others.map(() => expect.stringMatching(/^[^;]* "rate_limit_counters" /)),
      );
    } else {
      expect(others).toEqual([]);
    }
    return queries.filter(onApiKeys);
  }

  it('costs one lookup by SHA-256 hash for any well-formed key, a near miss or a random one', async () => {
    t = await startTestApp();
    const logged = await loggedApp();
    try {
      const real = t.keys.read;
      const genuine = await logged.cost(`Bearer ${real}`);
      expect(genuine.status).toBe(200);
      // The first statement on api_keys is the lookup, by the hash alone, whatever each dialect's
      // placeholders look like (? or $1). On PostgreSQL the same statement counts the request of the key
      // it finds and of its organisation (src/data/api-key-repository.ts): its other parameters are the
      // key counter's name prefix, the window's end, the organisation counter's name, the window's end
      // and the default key limit, nothing of the key.
      const lookup = genuine.queries.find(onApiKeys)!;
      const [hash, ...counting] = lookup.parameters;
      expect(hash).toBe(sha256(real));
      expect(counting).toEqual(
        onPostgres
          ? ['key:', expect.any(Number), 'organisation', expect.any(Number), DEFAULT_LIMITS.requestsPerMinute]
          : [],
      );
      expect(lookup.sql).toMatch(/\bfrom "api_keys"/i);
      expect(lookup.sql).toMatch(/"key_hash" = (\?|\$1)(?!\d)/);

      const nearMiss = fc
        .tuple(fc.integer({ min: 3, max: real.length - 1 }), fc.constantFrom(...BASE62))
        .filter(([position, char]) => real[position] !== char)
        .map(([position, char]) => `${real.slice(0, position)}${char}${real.slice(position + 1)}`);
      const lastCharacterOff = fc
        .constantFrom(...BASE62)
        .filter((char) => char !== real.at(-1))
        .map((char) => `${real.slice(0, -1)}${char}`);
      await fc.assert(
        fc.asyncProperty(fc.oneof(lastCharacterOff, nearMiss, wellFormedKey), async (presented) => {
          const { status, code, queries } = await logged.cost(`Bearer ${presented}`);
          expect([status, code]).toEqual([401, 'invalid_api_key']);
          // The same statement as for the real key; its only parameter the hash, never the key.
          expect(keyLookupsOf(queries)).toEqual([
            { sql: lookup.sql, parameters: [sha256(presented), ...counting] },
          ]);
          expect(JSON.stringify(queries)).not.toContain(presented.slice(3, 20));
        }),
        { seed: SEED, numRuns: 60 },
      );
    } finally {
      await logged.close();
    }
  });

  it('looks nothing up for a malformed key, even from a throttled address, where a valid key is served', async () => {
    t = await startTestApp();
    const logged = await loggedApp();
    try {
      const malformed = fc.oneof(
        wellFormedKey.map((key) => key.slice(0, -1)),
        wellFormedKey.map((key) => `${key}A`),
        wellFormedKey.map((key) => `sk_${key.slice(3)}`),
        fc
          .tuple(
            wellFormedKey,
            fc.nat({ max: 39 }),
            fc.constantFrom('-', '_', '/', '+', '=', 'é', '🙂', '\u0000'),
          )
          .map(([key, position, char]) => `${key.slice(0, position + 3)}${char}${key.slice(position + 4)}`),
        fc.string({ unit: 'binary', maxLength: 60 }),
      );
      await fc.assert(
        fc.asyncProperty(malformed, async (presented) => {
          fc.pre(!/^bk_[0-9A-Za-z]{40}$/.test(presented) && !/[\r\n]/.test(presented));
          const { status, code, queries } = await logged.cost(`Bearer ${presented}`);
          expect([status, code]).toEqual([401, 'invalid_api_key']);
          expect(keyLookupsOf(queries)).toEqual([]);
        }),
        { seed: SEED, numRuns: 100 },
      );
    } finally {
      await logged.close();
    }

    // A new window: on PostgreSQL the failures above are counted in the database, which the next app
    // shares (as instances do), and would throttle this address at once.
    t.clock.advance({ minutes: 1 });
    const strict = await loggedApp(3);
    try {
      for (let i = 0; i < 3; i++) expect((await strict.cost(`Bearer bk_${'Q'.repeat(40)}`)).status).toBe(401);
      const throttled = await strict.cost('Bearer bk_short');
      expect([throttled.status, throttled.code, keyLookupsOf(throttled.queries)]).toEqual([
        429,
        'rate_limited',
        [],
      ]);
      expect((await strict.cost(`Bearer ${t.keys.read}`)).status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});
