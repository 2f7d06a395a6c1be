import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppDeps, rateLimitStoreFor } from '../../src/app/deps.ts';
import { createUser, IDLE_TIMEOUT_MS, SIGN_IN_LIMITS } from '../../src/app/staff-account-service.ts';
import { type DatabaseHandle, openDatabase } from '../../src/data/database.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Three faults a fuzzing session found in the staff console, through HTTP on both databases:
 * parallel wrong passwords each verified past the sign-in throttle; a session cookie never renewed,
 * so the browser dropped an active session 30 minutes after sign-in; and a client's phone number not
 * found when typed as the desk types it (national, or international in groups).
 */
const ORIGIN = 'http://localhost:80';
const PASSWORD = 'correct horse battery';
let t: TestApp;
/** A second instance on the same database and counters, as another `booking serve` would be. */
let other: { app: FastifyInstance; handle: DatabaseHandle; close(): Promise<void> };

beforeAll(async () => {
  t = await startTestApp({ catalogues: [smallCatalogue()], limits: { requestsPerMinute: 100_000 } });
  for (const [email, role] of [
    ['owner@acme.test', 'owner'],
    ['desk@acme.test', 'staff'],
    ['front@acme.test', 'staff'],
    ['late@acme.test', 'staff'],
  ] as const) {
    await createUser(
      t.database.db,
      { organisationSlug: 'acme-hair', email, role, password: PASSWORD },
      t.clock.nowMs(),
    );
  }
  const handle = openDatabase(t.database.url);
  const deps = createAppDeps({
    db: handle.db,
    clock: t.clock,
    secret: 'test-secret',
    rateLimitStore: rateLimitStoreFor(handle.db, onPostgres ? null : t.database.file),
  });
  const app = await buildApp(deps);
  other = {
    app,
    handle,
    async close() {
      await app.close();
      deps.rateLimitStore.close?.();
      await handle.close();
    },
  };
});
afterAll(async () => {
  await other.close();
  await t.close();
});

function signInPost(
  form: { email: string; password: string },
  address: string,
  app: FastifyInstance = t.app,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: '/console/sign-in',
    remoteAddress: address,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    payload: new URLSearchParams({ organisation: 'acme-hair', ...form }).toString(),
  });
}

async function signIn(email: string, address = '127.0.0.1'): Promise<string> {
  const response = await signInPost({ email, password: PASSWORD }, address);
  expect(response.statusCode, response.body).toBe(303);
  return String(response.headers['set-cookie']).split(';')[0]!;
}

function statusCounts(responses: readonly LightMyRequestResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.statusCode] = (counts[r.statusCode] ?? 0) + 1;
  return counts;
}

describe('sign-in throttling under parallel guesses', () => {
  it('verifies at most 5 of 20 parallel wrong passwords for one account from one address', async () => {
    const guesses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        signInPost({ email: 'desk@acme.test', password: `guess number ${i}` }, '127.10.0.1'),
      ),
    );
    // 401 is a password verified and found wrong; 429 a try refused before any verification.
    expect(statusCounts(guesses)).toEqual({ 401: SIGN_IN_LIMITS.accountFromAddress, 429: 15 });
    for (const refused of guesses.filter((r) => r.statusCode === 429)) {
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.body).toContain('Too many failed sign-ins');
    }
    // The window is spent: even the right password waits, as after 5 tries one by one.
    expect((await signInPost({ email: 'desk@acme.test', password: PASSWORD }, '127.10.0.1')).statusCode).toBe(
      429,
    );
  });

  it('holds across two instances of one database', async () => {
    const guesses = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        signInPost(
          { email: 'front@acme.test', password: `guess number ${i}` },
          '127.10.0.2',
          i % 2 === 0 ? t.app : other.app,
        ),
      ),
    );
    expect(statusCounts(guesses)).toEqual({ 401: SIGN_IN_LIMITS.accountFromAddress, 429: 19 });
  });

  it("does not lock the account's owner out while a guesser elsewhere hammers it in parallel", async () => {
    const [owner, ...guesses] = await Promise.all([
      signInPost({ email: 'owner@acme.test', password: PASSWORD }, '127.10.0.4'),
      ...Array.from({ length: 30 }, (_, i) =>
        signInPost({ email: 'owner@acme.test', password: `guess number ${i}` }, '127.10.0.3'),
      ),
    ]);
    expect(owner!.statusCode).toBe(303);
    expect(statusCounts(guesses)).toEqual({ 401: SIGN_IN_LIMITS.accountFromAddress, 429: 25 });
    // The guesser's refused tries were not counted against the account: its owner signs in again.
    expect(
      (await signInPost({ email: 'owner@acme.test', password: PASSWORD }, '127.10.0.4')).statusCode,
    ).toBe(303);
  });

  it('counts failures only: a right password after some still works, and is not counted', async () => {
    const at = '127.10.0.5';
    const wrong = () => signInPost({ email: 'late@acme.test', password: 'not the password' }, at);
    const right = () => signInPost({ email: 'late@acme.test', password: PASSWORD }, at);
    for (let i = 0; i < SIGN_IN_LIMITS.accountFromAddress - 1; i++)
      expect((await wrong()).statusCode).toBe(401);
    expect((await right()).statusCode).toBe(303);
    // Had the right one been counted, this fifth failure would already be refused.
    expect((await wrong()).statusCode).toBe(401);
    expect((await right()).statusCode).toBe(429);
  });
});

describe('the session cookie', () => {
  const FETCH = { 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' };
  const NAVIGATE = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
  const get = (cookie: string, url: string, headers: Record<string, string> = NAVIGATE) =>
    t.app.inject({ method: 'GET', url, headers: { cookie, ...headers } });
  const sessionCookieOf = (response: LightMyRequestResponse) =>
    [response.headers['set-cookie'] ?? []].flat().filter((c) => c.startsWith('console_session='));

  it('is renewed by every page and form, ending when the server-side session does', async () => {
    t.clock.set('2026-11-23T09:00:00Z');
    const cookie = await signIn('owner@acme.test');
    const minutes = (n: number) => t.clock.advance({ milliseconds: n * 60_000 });

    minutes(20);
    const page = await get(cookie, '/console/messages');
    expect(page.statusCode).toBe(200);
    expect(sessionCookieOf(page)).toEqual([
      `${cookie}; Path=/console; HttpOnly; Secure; SameSite=Lax; Max-Age=${IDLE_TIMEOUT_MS / 1000}`,
    ]);
    // Within a minute of the last use the server does not write it down again; the cookie is given
    // what remains, so both still end at the same instant.
    t.clock.advance({ milliseconds: 30_000 });
    expect(sessionCookieOf(await get(cookie, '/console/messages'))[0]).toMatch(/; Max-Age=1770$/);

    // 40 minutes after signing in, 20 after the last use: alive, and the browser still has the cookie.
    minutes(19.5);
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await get(cookie, '/console/keys')).body)![1]!;
    minutes(10);
    const form = await t.app.inject({
      method: 'POST',
      url: '/console/keys',
      headers: { cookie, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...NAVIGATE },
      payload: new URLSearchParams({ _csrf: csrf, label: 'till', scope: 'read' }).toString(),
    });
    expect(form.statusCode).toBe(201);
    expect(sessionCookieOf(form)).toEqual([expect.stringMatching(/; Max-Age=1800$/)]);

    // Signing out answers with the cleared cookie only, not a renewal before it.
    minutes(1);
    const out = await t.app.inject({
      method: 'POST',
      url: '/console/sign-out',
      headers: { cookie, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...NAVIGATE },
      payload: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(out.statusCode).toBe(303);
    expect(sessionCookieOf(out)).toEqual([
      'console_session=; Path=/console; HttpOnly; Secure; SameSite=Lax; Max-Age=0',
    ]);
  });

  it("is not kept alive by the diary's own polling: an unattended diary signs out after 30 minutes", async () => {
    t.clock.set('2026-11-23T09:00:00Z');
    const cookie = await signIn('desk@acme.test', '127.0.0.2');
    const diary = '/console/diary?location=soho&date=2026-11-23';
    expect((await get(cookie, diary)).statusCode).toBe(200);
    // The page's script polls the stamp every 4 s and fetches the page again once a minute.
    for (let minute = 1; minute < 30; minute++) {
      t.clock.advance({ milliseconds: 60_000 });
      const stamp = await get(cookie, '/console/diary/stamp?location=soho', FETCH);
      expect(stamp.statusCode).toBe(200);
      expect(sessionCookieOf(stamp)).toEqual([]);
      const refetch = await get(cookie, diary, FETCH);
      expect(refetch.statusCode).toBe(200);
      expect(sessionCookieOf(refetch)).toEqual([]);
    }
    t.clock.advance({ milliseconds: 60_000 });
    // 30 minutes after the last page someone opened: the poll is told, and the page then reloads
    // into the sign-in page saying the session ended.
    expect((await get(cookie, '/console/diary/stamp?location=soho', FETCH)).statusCode).toBe(401);
    expect((await get(cookie, diary)).headers.location).toMatch(/^\/console\/sign-in\?expired=1/);
  });

  it('is kept alive by someone using the diary', async () => {
    t.clock.set('2026-11-23T09:00:00Z');
    const cookie = await signIn('desk@acme.test', '127.0.0.3');
    for (let i = 0; i < 4; i++) {
      t.clock.advance({ milliseconds: 20 * 60_000 });
      const page = await get(cookie, '/console/diary?location=soho&date=2026-11-23');
      expect(page.statusCode).toBe(200);
      expect(sessionCookieOf(page)).toEqual([expect.stringMatching(/; Max-Age=1800$/)]);
    }
  });
});

/** Adds clients through POST /v1/clients (each a payload of its fields). */
async function addClients(payloads: readonly Record<string, string>[]): Promise<void> {
  for (const payload of payloads) {
    const created = await t.request({ method: 'POST', url: '/v1/clients', payload });
    expect(created.statusCode, created.body).toBe(201);
  }
}

/**
 * The console's client search as the owner signed in from `address` sees it: which of `names` the
 * results page for a query shows.
 */
function consoleSearch(names: readonly string[], address: string): (q: string) => Promise<string[]> {
  let cookie: string | undefined;
  return async (q) => {
    t.clock.set('2026-11-23T09:00:00Z');
    cookie ??= await signIn('owner@acme.test', address);
    const url = `/console/clients?q=${encodeURIComponent(q)}`;
    const page = await t.app.inject({ method: 'GET', url, headers: { cookie } });
    expect(page.statusCode).toBe(200);
    return names.filter((name) => page.body.includes(name));
  };
}

describe('finding a client by phone number', () => {
  beforeAll(() =>
    addClients([
      { first_name: 'Ada', last_name: 'Lovelace', phone: '+447911000111' },
      { first_name: 'Bea', last_name: 'Other', phone: '+447911223399' },
    ]),
  );
  const found = consoleSearch(['Ada Lovelace', 'Bea Other', 'Jo Bloggs'], '127.0.0.4');

  it('finds it typed nationally, in groups, or internationally', async () => {
    for (const q of [
      '07911000111',
      '07911 000111',
      '07911 000 111',
      '(07911) 000-111',
      '+44 7911 000111',
      '+44 (0)7911 000111',
      '0044 7911 000111',
      '+447911000111',
      '7911 000111',
      '447911000111',
      'ada 07911 000111',
      '07911 000111 lovelace',
    ]) {
      expect(await found(q), q).toEqual(['Ada Lovelace']);
    }
    expect(await found('bob 07911 000111')).toEqual([]);
  });

  it('finds it by the beginning of the number typed nationally, once that says something', async () => {
    expect(await found('07911 000')).toEqual(['Ada Lovelace']);
    expect(await found('07911 22')).toEqual(['Bea Other']);
    expect(await found('07911')).toEqual(['Ada Lovelace', 'Bea Other', 'Jo Bloggs']);
    // A short string does not find every number of the country.
    for (const q of ['0', '07', '079', '+44', '+44 7', '0044', '+', '0 7']) {
      expect(await found(q), q).toEqual([]);
    }
  });
});

describe('finding a client by a name written with accents', () => {
  beforeAll(() =>
    addClients([
      { first_name: 'Élodie', last_name: 'Müller', email: 'elodie.muller@example.com' },
      { first_name: 'Zoë', last_name: 'Ångström', email: 'ZOE@Example.com' },
      { first_name: 'Νίκος', last_name: 'ΠΑΠΑΔΟΠΟΥΛΟΣ', phone: '+306912345678' },
    ]),
  );
  const found = consoleSearch(['Élodie Müller', 'Zoë Ångström', 'Νίκος ΠΑΠΑΔΟΠΟΥΛΟΣ'], '127.0.0.5');

  it('finds it in either case, with the accents or without them, on both databases', async () => {
    for (const q of ['élodie', 'ÉLODIE', 'elodie', 'Elodie muller', 'MÜLLER', 'müll', 'élodie müller']) {
      expect(await found(q), q).toEqual(['Élodie Müller']);
    }
    for (const q of ['zoë', 'ZOE', 'angstrom', 'ÅNGSTRÖM', 'zoe@example']) {
      expect(await found(q), q).toEqual(['Zoë Ångström']);
    }
    expect(await found('elodie angstrom')).toEqual([]);
    // Greek's final sigma is a sigma: the surname typed in lower case, or its capitals begun, finds it.
    for (const q of ['Παπαδόπουλος', 'παπαδοπουλος', 'ΝΙΚΟΣ', 'νικ']) {
      expect(await found(q), q).toEqual(['Νίκος ΠΑΠΑΔΟΠΟΥΛΟΣ']);
    }
    // Accents alone are no word: they would have matched every client.
    expect(await found('\u0301')).toEqual([]);
    expect(await found('\u0301 elodie')).toEqual(['Élodie Müller']);
  });
});

describe('finding a client by a name with letters no accent comes off', () => {
  beforeAll(() =>
    addClients([
      { first_name: 'Łukasz', last_name: 'Strauß', email: 'lukasz@example.com' },
      { first_name: 'Søren', last_name: 'Ærøe', email: 'soren@example.com' },
    ]),
  );
  const found = consoleSearch(['Łukasz Strauß', 'Søren Ærøe'], '127.0.0.6');

  it('finds it typed as a desk types it without those keys, or with them, on both databases', async () => {
    for (const q of ['lukasz', 'ŁUKASZ', 'łukasz', 'strauss', 'STRAUß', 'lukasz strauss']) {
      expect(await found(q), q).toEqual(['Łukasz Strauß']);
    }
    for (const q of ['soren', 'SØREN', 'aeroe', 'ærøe', 'soren aeroe']) {
      expect(await found(q), q).toEqual(['Søren Ærøe']);
    }
  });
});
