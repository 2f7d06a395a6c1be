import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/data/database.ts';
import { checkIntegrity } from '../../src/data/integrity-check.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { type RunningServer, runCli, startServer } from '../helpers/cli.ts';
import type { Json } from '../helpers/mcp-harness.ts';
import { freshDatabaseUrl, onPostgres } from '../helpers/temp-database.ts';

/**
 * Several stateless instances over one PostgreSQL database, as docs/scaling-out.md deploys
 * them: two `booking serve` processes on different ports share nothing but the database, yet parallel
 * bookers on both, all racing for the same few slots, get exactly one booking per slot and staff
 * member; retries of one Idempotency-Key on both get one booking; and a key's rate limit counts its
 * requests to both instances in one window. (SQLite has a
 * single-process story: test/e2e/two-processes.test.ts.)
 */
describe.skipIf(!onPostgres)('two instances over one PostgreSQL database', () => {
  let dir: string;
  let env: Record<string, string>;
  let drop: () => Promise<void>;
  let servers: RunningServer[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'booking-instances-'));
    const database = await freshDatabaseUrl(dir);
    drop = database.drop;
    env = { DATABASE_URL: database.url };
    const catalogue = path.join(dir, 'catalogue.json');
    writeFileSync(catalogue, JSON.stringify(smallCatalogue()));
    const imported = runCli(['import', catalogue], env);
    expect(imported.status, imported.stderr).toBe(0);
    servers = [await startServer(['--port', '0'], env), await startServer(['--port', '0'], env)];
    expect(servers[0]!.url).not.toBe(servers[1]!.url);
  }, 90_000);

  afterAll(async () => {
    for (const server of servers) expect(await server.stop()).toBe(0);
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  function keyWith(rateLimit: number): string {
    const args = ['keys', 'create', '--org', 'acme-hair', '--label', 'instances', '--scope', 'read_write'];
    const created = runCli([...args, '--rate-limit', String(rateLimit), '--json'], env);
    expect(created.status, created.stderr).toBe(0);
    return JSON.parse(created.stdout).key;
  }

  async function call(server: RunningServer, key: string, method: string, url: string, body?: unknown) {
    const response = await fetch(`${server.url}/v1${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, headers: response.headers, json: (await response.json()) as Json };
  }

  it('books each of 6 slots exactly once when 120 requests race for them across both instances', async () => {
    const key = keyWith(100_000);
    const [first] = servers;
    const services = (await call(first!, key, 'GET', '/locations/soho/services')).json.data;
    const cut = services.find((s: { name: string }) => s.name === 'Cut');
    const ana = cut.staff.find((s: { name: string }) => s.name === 'Ana').id;
    const client = (await call(first!, key, 'GET', '/clients?phone=%2B447911123456')).json.data;
    // A Monday one to two weeks ahead in London (the servers run on the real clock), where Ana works.
    const inAWeek = DateTime.now().setZone('Europe/London').plus({ days: 7 });
    const monday = inAWeek.plus({ days: (8 - inAWeek.weekday) % 7 }).toISODate();
    const { slots } = (
      await call(
        first!,
        key,
        'GET',
        `/locations/soho/availability?service_ids=${cut.id}&date=${monday}&staff_id=${ana}`,
      )
    ).json.data;
    // Slots an hour apart do not overlap (45 minutes and a 15-minute buffer): each can be booked.
    const wanted = slots.filter((_: unknown, i: number) => i % 4 === 0).slice(0, 6);
    expect(wanted).toHaveLength(6);

    const attempts = Array.from({ length: 120 }, (_, i) => ({
      server: servers[i % 2]!,
      slot: wanted[i % wanted.length],
    }));
    const answers = await Promise.all(
      attempts.map(({ server, slot }) =>
        call(server, key, 'POST', '/bookings', {
          location_slug: 'soho',
          service_ids: [cut.id],
          staff_id: ana,
          client_id: client.id,
          starts_at: slot.starts_at,
        }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s === 201),
      JSON.stringify(statuses),
    ).toHaveLength(6);
    expect(statuses.filter((s) => s === 409)).toHaveLength(114);
    for (const answer of answers.filter((a) => a.status === 409)) {
      expect(answer.json.error).toMatchObject({ code: 'conflict', reason: 'slot_unavailable' });
    }
    // Each slot went to exactly one booker, whichever instance answered.
    const booked = answers.filter((a) => a.status === 201).map((a) => a.json.data.starts_at);
    expect(new Set(booked).size).toBe(6);
    const winnersByServer = attempts.filter((_, i) => answers[i]!.status === 201).map((a) => a.server.url);
    expect(winnersByServer.length).toBe(6);

    const database = openDatabase(env.DATABASE_URL!, { readonly: true });
    try {
      const report = await checkIntegrity(database.db, Date.now());
      expect(report.findings.filter((f) => f.violations > 0)).toEqual([]);
      expect(report.liveBookings).toBe(6);
    } finally {
      await database.close();
    }
  }, 60_000);

  it('answers 20 retries of one Idempotency-Key across both instances with one booking', async () => {
    const key = keyWith(100_000);
    const [first] = servers;
    const services = (await call(first!, key, 'GET', '/locations/soho/services')).json.data;
    const cut = services.find((s: { name: string }) => s.name === 'Cut');
    const client = (await call(first!, key, 'GET', '/clients?phone=%2B447911123456')).json.data;
    // A Tuesday two to three weeks ahead: any staff member who works then (Ana does).
    const inTwoWeeks = DateTime.now().setZone('Europe/London').plus({ days: 14 });
    const tuesday = inTwoWeeks.plus({ days: (9 - inTwoWeeks.weekday) % 7 }).toISODate();
    const { slots } = (
      await call(first!, key, 'GET', `/locations/soho/availability?service_ids=${cut.id}&date=${tuesday}`)
    ).json.data;
    const body = {
      location_slug: 'soho',
      service_ids: [cut.id],
      client_id: client.id,
      starts_at: slots[0].starts_at,
    };
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const response = await fetch(`${servers[i % 2]!.url}/v1/bookings`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'idempotency-key': 'across-instances-1',
          },
          body: JSON.stringify(body),
        });
        return { status: response.status, text: await response.text() };
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    const database = openDatabase(env.DATABASE_URL!, { readonly: true });
    try {
      const stored = await database.db
        .selectFrom('bookings')
        .select('reference')
        .where('starts_at', '=', Date.parse(slots[0].starts_at))
        .execute();
      expect(stored).toEqual([{ reference: JSON.parse(answers[0]!.text).data.reference }]);
    } finally {
      await database.close();
    }
  }, 60_000);

  it('counts a key’s requests to both instances in one rate-limit window', async () => {
    const key = keyWith(30);
    // Spread over both instances; 40 requests fit in one minute's window unless the minute turns
    // over meanwhile, which the test waits out rather than flake on.
    const secondsIntoMinute = new Date().getUTCSeconds();
    if (secondsIntoMinute > 50)
      await new Promise((resolve) => setTimeout(resolve, (61 - secondsIntoMinute) * 1000));
    const answers = [];
    for (let i = 0; i < 40; i += 1) answers.push(await call(servers[i % 2]!, key, 'GET', '/locations'));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.slice(30)).toEqual(Array(10).fill(429));
    // One window, whichever instance answered: the remaining count falls by one per request.
    expect(answers.slice(0, 30).map((a) => Number(a.headers.get('x-ratelimit-remaining')))).toEqual(
      Array.from({ length: 30 }, (_, i) => 29 - i),
    );
    expect(answers[35]!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(answers[35]!.json.error.code).toBe('rate_limited');
  }, 120_000);
});
