import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueMessages } from '../../src/app/outbox-service.ts';
import type { DatabaseHandle } from '../../src/data/database.ts';
import { claimDueMessages } from '../../src/data/outbox-repository.ts';
import { openPostgres } from '../../src/data/postgres.ts';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { POSTGRES_ADMIN_URL } from '../helpers/postgres-test-server.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * PostgreSQL runs each named statement with one generic plan per connection (src/data/postgres.ts),
 * so a statement's plan must be right for any values. The outbox worker's claim is the statement that
 * showed it: with its LIMIT bound, the generic plan read the whole outbox (a sequential scan and a
 * hash join) instead of the first due rows of the partial index outbox_due.
 */
let t: TestApp;
let ids: CatalogueIds;
let single: DatabaseHandle;
const MESSAGES = 40_000;

describe.runIf(onPostgres)('generic plans on PostgreSQL', () => {
  beforeAll(async () => {
    t = await startTestApp();
    ids = await catalogueIds(t.database.db);
    // One connection, so the statement the claim prepared can be looked at on the connection that has it.
    const poolSize = process.env.PG_POOL_SIZE;
    process.env.PG_POOL_SIZE = '1';
    try {
      single = t.database.reopen();
    } finally {
      if (poolSize === undefined) delete process.env.PG_POOL_SIZE;
      else process.env.PG_POOL_SIZE = poolSize;
    }
  });
  afterAll(async () => {
    await single?.close();
    await t.close();
  });

  it('claims due messages through the due index, never a scan of the outbox', async () => {
    const { db } = t.database;
    const now = Date.parse('2026-11-24T00:00:00Z');
    const booking = bookingRow({
      organisationId: ids.organisation,
      locationId: ids.locations.soho!,
      staffId: ids.staff.ana!,
      clientId: ids.jo,
      startsAt: Date.parse('2026-11-30T09:00:00Z'),
      endsAt: Date.parse('2026-11-30T09:30:00Z'),
    });
    await db.insertInto('bookings').values(booking).execute();
    await queueMessages(
      db,
      {
        organisationId: ids.organisation,
        bookingId: booking.id,
        reference: booking.reference,
        client: { phone: '+447700900123', email: null },
      },
      { kind: 'confirmed' },
      now,
    );
    // A busy outbox: the booking's confirmation pending and due, many messages delivered already, and
    // as many reminders pending for later.
    await sql`
      INSERT INTO outbox (id, organisation_id, booking_id, reference, channel, recipient, kind, status,
                          attempts, due_at, created_at, sent_at, body)
      SELECT 'old-' || i, ${booking.organisation_id}, ${booking.id}, ${booking.reference}, 'sms',
             '+447700900123', CASE WHEN i % 2 = 0 THEN 'confirmed' ELSE 'reminder' END,
             CASE WHEN i % 2 = 0 THEN 'logged' ELSE 'pending' END, i % 2,
             CASE WHEN i % 2 = 0 THEN ${now}::bigint - 86400000 + i ELSE ${now}::bigint + 86400000 + i END,
             ${now}::bigint - 86400000 + i,
             CASE WHEN i % 2 = 0 THEN ${now}::bigint - 86400000 + i END,
             CASE WHEN i % 2 = 0 THEN '{}' END
      FROM generate_series(1, ${MESSAGES}) AS i`.execute(db);
    await sql`ANALYZE outbox`.execute(db);

    const claimed = await claimDueMessages(single.db, 'worker-1', now, now + 60_000, 16);
    expect(claimed.map((row) => row.booking_id)).toContain(booking.id);
    expect(claimed.every((row) => row.status === 'pending')).toBe(true);

    const prepared = await sql<{
      name: string;
      statement: string;
      generic_plans: number;
      custom_plans: number;
    }>`
      SELECT name, statement, generic_plans, custom_plans FROM pg_prepared_statements
      WHERE statement LIKE 'update "outbox" set "claimed_by"%'`.execute(single.db);
    expect(prepared.rows).toHaveLength(1);
    const [claim] = prepared.rows;
    expect(Number(claim!.generic_plans)).toBe(1);
    expect(Number(claim!.custom_plans)).toBe(0);
    // A generic plan is the same whatever the values: NULL for each parameter shows it.
    const parameters = Math.max(...[...claim!.statement.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    const explained = await sql<{ 'QUERY PLAN': unknown }>`
      EXPLAIN (FORMAT JSON) EXECUTE ${sql.raw(claim!.name)}(${sql.raw(Array(parameters).fill('NULL').join(', '))})`.execute(
      single.db,
    );
    const nodes = planNodes(explained.rows[0]!['QUERY PLAN']);
    expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name'])).toEqual([]);
    expect(nodes.some((n) => n['Node Type'] === 'Index Scan' && n['Index Name'] === 'outbox_due')).toBe(true);
  });
});

describe.runIf(onPostgres)('connection settings on PostgreSQL', () => {
  it('asks for generic plans after the settings of the URL and PGOPTIONS, which it keeps', async () => {
    const url = new URL(POSTGRES_ADMIN_URL);
    url.searchParams.set('options', '-c statement_timeout=12345 -c plan_cache_mode=force_custom_plan');
    const previous = process.env.PGOPTIONS;
    process.env.PGOPTIONS = '-c lock_timeout=4321';
    let handle: DatabaseHandle | undefined;
    try {
      handle = openPostgres(url.toString(), {});
      const settings = await sql<Record<string, string>>`
        SELECT current_setting('statement_timeout') AS statement_timeout,
               current_setting('lock_timeout') AS lock_timeout,
               current_setting('plan_cache_mode') AS plan_cache_mode`.execute(handle.db);
      expect(settings.rows[0]).toEqual({
        statement_timeout: '12345ms',
        lock_timeout: '4321ms',
        plan_cache_mode: 'force_generic_plan',
      });
    } finally {
      if (previous === undefined) delete process.env.PGOPTIONS;
      else process.env.PGOPTIONS = previous;
      await handle?.close();
    }
  });
});

type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(explained: unknown): PlanNode[] {
  const [top] = explained as [{ Plan: PlanNode }];
  const nodes: PlanNode[] = [];
  const visit = (node: PlanNode) => {
    nodes.push(node);
    for (const child of node.Plans ?? []) visit(child);
  };
  visit(top.Plan);
  return nodes;
}
