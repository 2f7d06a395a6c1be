import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppDeps, DEFAULT_LIMITS, rateLimitStoreFor } from '../../src/app/deps.ts';
import { localCheckout, type PaymentProvider } from '../../src/app/payments.ts';
import { type Db, openDatabase } from '../../src/data/database.ts';
import { bookingsAt as turnOfBookingsAt } from '../../src/data/write-locks.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A booking on PostgreSQL when the database fails it at each of its round trips (BEGIN sent with the
 * first statement, COMMIT with the last write: postgres-transaction-edges.ts): the request fails, or
 * is refused, with nothing half-written; the process goes on; the pool's connection is handed back
 * outside any transaction; an Idempotency-Key makes one booking at most and replays what it stored.
 */
let t: TestApp;
let ids: CatalogueIds;
let admin: pg.Client;
const MINUTE = 60_000;

beforeAll(async () => {
  if (!onPostgres) return;
  t = await startTestApp({ limits: { requestsPerMinute: 100_000 } });
  ids = await catalogueIds(t.database.db);
  admin = new pg.Client({ connectionString: t.database.url });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
  await t?.close();
});

interface Instance {
  app: FastifyInstance;
  db: Db;
  close(): Promise<void>;
}

/** Another instance of the app on the test database, its pool one connection (so each request reuses it). */
async function startInstance(
  options: { payments?: PaymentProvider; settings?: string } = {},
): Promise<Instance> {
  const url = new URL(t.database.url);
  if (options.settings) url.searchParams.set('options', options.settings);
  const before = process.env.PG_POOL_SIZE;
  process.env.PG_POOL_SIZE = '1';
  let handle: ReturnType<typeof openDatabase>;
  try {
    handle = openDatabase(url.toString());
  } finally {
    if (before === undefined) delete process.env.PG_POOL_SIZE;
    else process.env.PG_POOL_SIZE = before;
  }
  const app = await buildApp(
    createAppDeps({
      db: handle.db,
      clock: t.clock,
      secret: 'test-secret',
      limits: { ...DEFAULT_LIMITS, requestsPerMinute: 100_000 },
      payments: options.payments ?? localCheckout,
      rateLimitStore: rateLimitStoreFor(handle.db, null),
      webhookDestinations: { allowInsecure: true, allowPrivateNetworks: false },
    }),
  );
  return {
    app,
    db: handle.db,
    async close() {
      await app.close();
      await handle.close();
    },
  };
}

const book = (
  instance: Instance,
  time: string,
  options: { key?: string; service?: 'cut' | 'colour'; notes?: string } = {},
) =>
  instance.app.inject({
    method: 'POST',
    url: '/v1/bookings',
    headers: {
      authorization: `Bearer ${t.keys.readWrite}`,
      ...(options.key !== undefined && { 'idempotency-key': options.key }),
    },
    payload: {
      location_slug: 'soho',
      service_ids: [ids.services[options.service ?? 'cut']],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: time,
      ...(options.notes !== undefined && { notes: options.notes }),
    },
  });

/** Whether the instance's connection is outside any transaction (now() is the statement's own time). */
async function outsideTransaction(instance: Instance): Promise<boolean> {
  const { rows } = await sql<{ fresh: boolean }>`SELECT now() = statement_timestamp() AS fresh`.execute(
    instance.db,
  );
  return rows[0]!.fresh;
}

const bookingsStartingAt = async (time: string) =>
  (
    await admin.query('SELECT id, status FROM bookings WHERE starts_at = $1 ORDER BY created_at', [
      Date.parse(time),
    ])
  ).rows as { id: string; status: string }[];

const recordOf = async (key: string) =>
  (await admin.query('SELECT status_code FROM idempotency_records WHERE idempotency_key = $1', [key]))
    .rows as { status_code: number }[];

/** The pid of the first backend of the test database whose activity matches, once there is one. */
async function backendWhere(condition: string): Promise<number> {
  for (let tries = 0; tries < 500; tries += 1) {
    const { rows } = await admin.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${condition}`,
    );
    if (rows.length > 0) return rows[0].pid as number;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`No backend where ${condition}`);
}

describe.runIf(onPostgres)('a booking on PostgreSQL that the database fails', () => {
  it('fails the request, not the process, when its backend is terminated between round trips (a deposit’s checkout)', async () => {
    const time = '2026-11-30T09:00:00Z';
    let terminated = false;
    const instance = await startInstance({
      payments: {
        ...localCheckout,
        openCheckout: async (session, base) => {
          if (!terminated) {
            terminated = true;
            // The booking's transaction is open, idle, while the provider is asked: its backend goes.
            const pid = await backendWhere(`state = 'idle in transaction'`);
            await admin.query('SELECT pg_terminate_backend($1)', [pid]);
            await new Promise((resolve) => setTimeout(resolve, 300));
          }
          return localCheckout.openCheckout(session, base);
        },
      },
    });
    try {
      const failed = await book(instance, time, { key: 'terminated-idle', service: 'colour' });
      expect(failed.statusCode).toBe(500);
      expect(await bookingsStartingAt(time)).toEqual([]);
      expect(await recordOf('terminated-idle')).toEqual([]);
      // The pool goes on, on a new connection; the key was not spent.
      const retried = await book(instance, time, { key: 'terminated-idle', service: 'colour' });
      expect(retried.statusCode, retried.body).toBe(201);
      expect(await outsideTransaction(instance)).toBe(true);
    } finally {
      await instance.close();
    }
  });

  it('fails the request, not the process, when its backend is terminated while it waits for the location’s turn', async () => {
    const time = '2026-11-30T11:00:00Z';
    const instance = await startInstance();
    const holder = new pg.Client({ connectionString: t.database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        turnOfBookingsAt(ids.locations.soho!),
      ]);
      const answer = book(instance, time, { key: 'terminated-waiting' });
      const pid = await backendWhere(`wait_event_type = 'Lock' AND query LIKE '%live_bookings_after_turn%'`);
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      const failed = await answer;
      await holder.query('COMMIT');
      expect(failed.statusCode).toBe(500);
      expect(await bookingsStartingAt(time)).toEqual([]);
      expect(await recordOf('terminated-waiting')).toEqual([]);
      const retried = await book(instance, time, { key: 'terminated-waiting' });
      expect(retried.statusCode, retried.body).toBe(201);
      expect(await outsideTransaction(instance)).toBe(true);
    } finally {
      await holder.end();
      await instance.close();
    }
  });

  /** A booking of Ana's at `time`, written by another writer that takes no turn, not yet committed. */
  async function uncommittedClash(writer: pg.Client, time: string) {
    const startsAt = Date.parse(time);
    const row = bookingRow({
      organisationId: ids.organisation,
      locationId: ids.locations.soho!,
      staffId: ids.staff.ana!,
      clientId: ids.jo,
      startsAt,
      endsAt: startsAt + 45 * MINUTE,
    });
    await writer.query('BEGIN');
    await writer.query('INSERT INTO bookings SELECT * FROM json_populate_record(NULL::bookings, $1)', [
      JSON.stringify(row),
    ]);
  }

  it('refuses with 409 when the exclusion constraint refuses the write that carries the COMMIT, and stores that refusal', async () => {
    const time = '2026-11-30T12:00:00Z';
    const instance = await startInstance();
    const writer = new pg.Client({ connectionString: t.database.url });
    await writer.connect();
    try {
      await uncommittedClash(writer, time);
      const answer = book(instance, time, { key: 'excluded' });
      // The booking's write waits for the other transaction, whose row its slot check could not see.
      await backendWhere(`wait_event_type = 'Lock' AND query LIKE '%WITH booking AS%'`);
      await writer.query('COMMIT');
      const refused = await answer;
      expect(refused.statusCode, refused.body).toBe(409);
      expect(await outsideTransaction(instance)).toBe(true);
      expect((await bookingsStartingAt(time)).length).toBe(1);
      expect(await recordOf('excluded')).toEqual([{ status_code: 409 }]);
      const replay = await book(instance, time, { key: 'excluded' });
      expect(replay.statusCode).toBe(409);
      expect(replay.json()).toEqual(refused.json());
    } finally {
      await writer.end();
      await instance.close();
    }
  });

  it('fails with nothing written, and the connection out of the transaction, when the carrying write times out', async () => {
    const time = '2026-11-30T13:00:00Z';
    const instance = await startInstance({ settings: '-c statement_timeout=1000' });
    const writer = new pg.Client({ connectionString: t.database.url });
    await writer.connect();
    try {
      await uncommittedClash(writer, time);
      const failed = await book(instance, time, { key: 'timed-out' });
      expect(failed.statusCode).toBe(500);
      expect(await outsideTransaction(instance)).toBe(true);
      await writer.query('ROLLBACK');
      expect(await bookingsStartingAt(time)).toEqual([]);
      expect(await recordOf('timed-out')).toEqual([]);
      const retried = await book(instance, time, { key: 'timed-out' });
      expect(retried.statusCode, retried.body).toBe(201);
    } finally {
      await writer.end();
      await instance.close();
    }
  });

  for (const [statement, table, time] of [
    ['the write that carries the COMMIT', 'booking_pages', '2026-12-07T09:00:00Z'],
    ['the first statement, which carries the BEGIN', 'clients', '2026-12-07T11:00:00Z'],
  ] as const) {
    it(`fails with nothing written when the Parse of ${statement} fails, and parses it again after`, async () => {
      const instance = await startInstance({ settings: '-c lock_timeout=300' });
      const locker = new pg.Client({ connectionString: t.database.url });
      await locker.connect();
      try {
        // Warm: the catalogue cached, so the slot check is the transaction's first statement.
        expect((await book(instance, '2026-12-03T09:00:00Z')).statusCode).toBe(409);
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        const failed = await book(instance, time, { key: `parse-${table}` });
        await locker.query('COMMIT');
        expect(failed.statusCode).toBe(500);
        expect(await outsideTransaction(instance)).toBe(true);
        expect(await bookingsStartingAt(time)).toEqual([]);
        expect(await recordOf(`parse-${table}`)).toEqual([]);
        const retried = await book(instance, time, { key: `parse-${table}` });
        expect(retried.statusCode, retried.body).toBe(201);
        expect(await outsideTransaction(instance)).toBe(true);
      } finally {
        await locker.end();
        await instance.close();
      }
    });
  }

  it('makes one booking of concurrent requests with one key and one body, every answer the same', async () => {
    const time = '2026-11-30T14:00:00Z';
    const instance = await startInstance();
    const other = await startInstance();
    try {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => book(i % 2 ? other : instance, time, { key: 'same-body' })),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(Array(8).fill(201));
      expect(new Set(answers.map((a) => a.body)).size).toBe(1);
      expect((await bookingsStartingAt(time)).length).toBe(1);
      expect(await outsideTransaction(instance)).toBe(true);
      expect(await outsideTransaction(other)).toBe(true);
    } finally {
      await instance.close();
      await other.close();
    }
  });

  it('makes one booking of concurrent requests with one key and different bodies; the others are key reuses', async () => {
    const instance = await startInstance();
    const other = await startInstance();
    const times = Array.from({ length: 6 }, (_, i) => `2026-12-01T${String(9 + i).padStart(2, '0')}:00:00Z`);
    try {
      const answers = await Promise.all(
        times.map((time, i) => book(i % 2 ? other : instance, time, { key: 'other-bodies' })),
      );
      const codes = answers.map((a) => a.statusCode).sort();
      expect(codes).toEqual([201, 409, 409, 409, 409, 409]);
      for (const answer of answers.filter((a) => a.statusCode === 409)) {
        expect(answer.json().error.code).toBe('idempotency_key_reused');
      }
      // One at a time: the admin connection runs one statement at a time (pg@9 refuses more).
      const made: { id: string; status: string }[] = [];
      for (const time of times) made.push(...(await bookingsStartingAt(time)));
      expect(made.length).toBe(1);
    } finally {
      await instance.close();
      await other.close();
    }
  });

  it('rolls the booking back whole when the booking.created event that carries the COMMIT fails', async () => {
    const time = '2026-11-30T15:00:00Z';
    const instance = await startInstance();
    try {
      const created = await instance.app.inject({
        method: 'POST',
        url: '/v1/webhook-endpoints',
        headers: { authorization: `Bearer ${t.keys.readWrite}` },
        payload: { url: 'http://127.0.0.1:9/hook', events: ['booking.created'] },
      });
      expect(created.statusCode, created.body).toBe(201);
      await admin.query(`CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.payload LIKE '%refuse this event%' THEN RAISE EXCEPTION 'event refused'; END IF; RETURN NEW; END $$`);
      await admin.query(
        'CREATE TRIGGER refuse_event BEFORE INSERT ON webhook_events FOR EACH ROW EXECUTE FUNCTION refuse_event()',
      );
      const failed = await book(instance, time, { key: 'event-fails', notes: 'refuse this event' });
      expect(failed.statusCode).toBe(500);
      expect(await outsideTransaction(instance)).toBe(true);
      expect(await bookingsStartingAt(time)).toEqual([]);
      expect(await recordOf('event-fails')).toEqual([]);
      const made = await book(instance, time, { key: 'event-made' });
      expect(made.statusCode, made.body).toBe(201);
      const { rows } = await admin.query(
        `SELECT count(*)::int AS n FROM webhook_events WHERE type = 'booking.created' AND payload LIKE $1`,
        [`%${made.json().data.reference}%`],
      );
      expect(rows).toEqual([{ n: 1 }]);
      expect(await recordOf('event-made')).toEqual([{ status_code: 201 }]);
    } finally {
      await admin.query('DROP TRIGGER IF EXISTS refuse_event ON webhook_events');
      await admin.query('DROP FUNCTION IF EXISTS refuse_event()');
      await admin.query('DELETE FROM webhook_endpoints');
      await instance.close();
    }
  });
});
