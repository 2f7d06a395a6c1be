import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/app/api-key-service.ts';
import { openDatabase } from '../../src/data/database.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { type RunningServer, runCli, startServer } from '../helpers/cli.ts';
import { freshDatabasePerTest } from '../helpers/temp-database.ts';

/**
 * Two `booking serve` processes on one database race for one slot, as instances behind a load balancer
 * do. On SQLite, its write lock (BEGIN IMMEDIATE with a busy timeout) serialises them across processes;
 * on PostgreSQL, the exclusion constraint on live bookings refuses the second of two concurrent
 * inserts. Either way exactly one booking is written and every other request is answered 409.
 * The servers run on the real clock, so the slot is taken from availability a week or two ahead.
 * They also count one key's requests together: on PostgreSQL in its shared table, on SQLite in the
 * counters file beside the database.
 */
const fresh = freshDatabasePerTest('booking-two-');

function setUp(): string {
  const file = path.join(fresh.dir, 'catalogue.json');
  writeFileSync(file, JSON.stringify(smallCatalogue()));
  const imported = runCli(['import', file], fresh.env);
  expect(imported.status, imported.stderr).toBe(0);
  const args = ['keys', 'create', '--org', 'acme-hair', '--label', 'e2e', '--scope', 'read_write', '--json'];
  const created = runCli(args, fresh.env);
  expect(created.status, created.stderr).toBe(0);
  return JSON.parse(created.stdout).key;
}

interface Service {
  id: string;
  name: string;
  staff: { id: string; name: string }[];
}

/** A Monday 7 to 13 days ahead in London, where Ana works all day. */
function mondayAhead(): string {
  const inAWeek = DateTime.now().setZone('Europe/London').plus({ days: 7 });
  return inAWeek.plus({ days: (8 - inAWeek.weekday) % 7 }).toISODate()!;
}

describe('two server processes on one database', () => {
  it('book one slot exactly once when 50 requests race across both', async () => {
    const key = setUp();
    const servers: RunningServer[] = [];
    try {
      servers.push(await startServer(['--port', '0'], fresh.env));
      servers.push(await startServer(['--port', '0'], fresh.env));
      const call = async <T>(server: RunningServer, method: string, url: string, body?: unknown) => {
        const response = await fetch(`${server.url}/v1${url}`, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        });
        return { status: response.status, json: (await response.json()) as T };
      };
      const get = async <T>(url: string) => (await call<{ data: T }>(servers[0]!, 'GET', url)).json.data;
      const services = await get<Service[]>('/locations/soho/services');
      const cut = services.find((s) => s.name === 'Cut')!;
      const ana = cut.staff.find((s) => s.name === 'Ana')!.id;
      const client = await get<{ id: string }>('/clients?phone=%2B447911123456');
      const query = `service_ids=${cut.id}&date=${mondayAhead()}&staff_id=${ana}`;
      const { slots } = await get<{ slots: { starts_at: string }[] }>(
        `/locations/soho/availability?${query}`,
      );
      expect(slots.length).toBeGreaterThan(0);

      const body = {
        location_slug: 'soho',
        service_ids: [cut.id],
        staff_id: ana,
        client_id: client.id,
        starts_at: slots[0]!.starts_at,
      };
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          call<{ error?: { code: string } }>(servers[i % 2]!, 'POST', '/bookings', body),
        ),
      );
      const statuses = responses.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 201),
        JSON.stringify(statuses),
      ).toHaveLength(1);
      const conflicts = responses.filter((r) => r.status === 409 && r.json.error?.code === 'conflict');
      expect(conflicts, JSON.stringify(responses.filter((r) => r.status !== 201))).toHaveLength(49);
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }

    // The database itself, with both servers gone: one booking, not one per process.
    const database = openDatabase(fresh.env.DATABASE_URL!, { readonly: true });
    try {
      const rows = await database.db.selectFrom('bookings').select('status').execute();
      expect(rows).toEqual([{ status: 'confirmed' }]);
    } finally {
      await database.close();
    }
  }, 90_000);

  it('allow one key its rate limit once between them, not once each', async () => {
    setUp();
    const handle = openDatabase(fresh.env.DATABASE_URL!);
    let key: string;
    try {
      const created = await createApiKey(
        handle.db,
        { organisationSlug: 'acme-hair', label: 'limited', scope: 'read', rateLimitPerMinute: 10 },
        Date.now(),
      );
      key = created.key;
    } finally {
      await handle.close();
    }
    const servers: RunningServer[] = [];
    try {
      servers.push(await startServer(['--port', '0'], fresh.env));
      servers.push(await startServer(['--port', '0'], fresh.env));
      // One window for all of it: not within the last seconds of a minute.
      const intoMinute = Date.now() % 60_000;
      if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
      const statuses: number[] = [];
      for (let i = 0; i < 14; i++) {
        const response = await fetch(`${servers[i % 2]!.url}/v1/locations`, {
          headers: { authorization: `Bearer ${key}` },
        });
        statuses.push(response.status);
        if (i === 13) expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(10);
      expect(statuses.slice(10)).toEqual([429, 429, 429, 429]);
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  }, 90_000);
});
