/**
 * The full stack for the public-booking benchmark: the real app (the production wiring of
 * src/runtime.ts, a clock fixed a week before the first slot, no logger) on the two organisations of
 * bench/lib/public-booking-database.ts, serving both REST POST /v1/bookings and the public page's
 * POST /p/{org}/book. Beside it, on other loopback ports:
 *
 * - a recorded instance: the same app on a second connection to the same database, opened with
 *   openDatabase's onQuery, so the runner can book through it one request at a time and read every SQL
 *   statement those bookings ran (the measured instance runs without the hook, as deployed);
 * - a control endpoint: POST {op: 'state'} answers what each side has stored and this process's CPU
 *   time; {op: 'census-begin'} and {op: 'census-end'} bracket the recorded bookings and answer their
 *   statements and the rows they added to each table.
 *
 * Runs as a child process: see bench/lib/server-process.ts.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { ManualClock } from '../src/app/clock.ts';
import { createAppDeps, DEFAULT_LIMITS } from '../src/app/deps.ts';
import { type Db, openDatabase } from '../src/data/database.ts';
import { buildApp } from '../src/http/build-app.ts';
import { BOOKINGS_SCENARIO } from './lib/bookings-database.ts';
import { serveFromChild } from './lib/child.ts';
import { listenForControl } from './lib/control-server.ts';
import { listenFullStack } from './lib/full-stack.ts';
import {
  createPublicBookingDatabase,
  type PublicBookingBenchDatabase,
} from './lib/public-booking-database.ts';

export interface PublicBookingStackInfo {
  /** This process, for the account of where the machine's CPU went. */
  pid: number;
  /** The measured instance. */
  origin: string;
  /** The recorded instance (every statement noted), for the census. */
  recordedOrigin: string;
  /** POST here: PublicBookingControl. */
  controlOrigin: string;
  organisations: PublicBookingBenchDatabase['organisations'];
}

export type Side = 'rest' | 'code' | 'none';

/** What one side has stored: its bookings, and the outbox, clients and contact_proofs rows they brought. */
export interface SideCounts {
  bookings: number;
  outbox: number;
  clients: number;
  proofs: number;
}

export interface PublicBookingState {
  counts: Record<Side, SideCounts>;
  /** CPU time (user and system) this process has used so far, in milliseconds. */
  cpuMs: number;
}

export interface Census {
  /** The SQL of every statement the recorded instance ran between census-begin and census-end, in order. */
  statements: string[];
  /** Rows added to each table meanwhile (tables that did not change are left out). */
  rows: Record<string, number>;
}

export type PublicBookingControl = { op: 'state' } | { op: 'census-begin' } | { op: 'census-end' };

/**
 * The page's per-address request limit (the API's default limit, per minute) would refuse the 121st
 * form post from 127.0.0.1 in the fixed clock's one minute: raised for this server, as the attempts
 * cap is in the catalogue. Keys have their own limit (the bench key the highest), so REST is unaffected.
 */
const LIMITS = { ...DEFAULT_LIMITS, requestsPerMinute: 1_000_000_000 };

serveFromChild<null, PublicBookingStackInfo>(async () => {
  const seeded = await createPublicBookingDatabase();
  const { database, organisations } = seeded;
  // Fixed before every slot booked, so each one stays within notice and advance limits, and every
  // hold within its time.
  const clock = new ManualClock(BOOKINGS_SCENARIO.now);
  const secret = randomBytes(32).toString('base64url');
  const stack = await listenFullStack(createAppDeps({ db: database.db, clock, secret, limits: LIMITS }), () =>
    database.dispose(),
  );

  let recording = false;
  const statements: string[] = [];
  const recordedHandle = openDatabase(database.url, {
    onQuery: (text) => {
      if (recording) statements.push(text);
    },
  });
  const recorded = await buildApp(createAppDeps({ db: recordedHandle.db, clock, secret, limits: LIMITS }));
  const recordedOrigin = await recorded.listen({ host: '127.0.0.1', port: 0 });

  // REST books for the client on file (contact_proven 1) at either organisation, confirmed; a public
  // booking has a client record of its own that nobody proves here (contact_proven 0): a hold where
  // the code is asked, confirmed where it is not.
  const sideOf = (row: { organisation_id: string; status: string; contact_proven: number }): Side | null => {
    if (row.contact_proven === 1) return row.status === 'confirmed' ? 'rest' : null;
    if (row.organisation_id === organisations.withCode.id)
      return row.status === 'pending_confirmation' ? 'code' : null;
    return row.status === 'confirmed' ? 'none' : null;
  };
  const counts = async (): Promise<Record<Side, SideCounts>> => {
    const { db } = database;
    const result: Record<Side, SideCounts> = {
      rest: { bookings: 0, outbox: 0, clients: 0, proofs: 0 },
      code: { bookings: 0, outbox: 0, clients: 0, proofs: 0 },
      none: { bookings: 0, outbox: 0, clients: 0, proofs: 0 },
    };
    // Per organisation, status and whether the client is on file: the bookings, then what they brought.
    const bookings = () =>
      db
        .selectFrom('bookings as b')
        .innerJoin('clients as c', (join) =>
          join.onRef('c.organisation_id', '=', 'b.organisation_id').onRef('c.id', '=', 'b.client_id'),
        )
        .groupBy(['b.organisation_id', 'b.status', 'c.contact_proven'])
        .select([
          'b.organisation_id',
          'b.status',
          'c.contact_proven',
          (eb) => eb.fn.countAll<number>().as('n'),
        ]);
    const add = async (query: ReturnType<typeof bookings>, into: keyof SideCounts): Promise<void> => {
      for (const row of await query.execute()) {
        const side = sideOf(row);
        if (side === null) throw new Error(`Bookings no side makes: ${JSON.stringify(row)}.`);
        result[side][into] += Number(row.n);
      }
    };
    const belonging = (table: 'outbox' | 'contact_proofs') =>
      bookings().innerJoin(`${table} as x`, (join) =>
        join.onRef('x.organisation_id', '=', 'b.organisation_id').onRef('x.booking_id', '=', 'b.id'),
      );
    await add(bookings(), 'bookings');
    await add(belonging('outbox'), 'outbox');
    await add(belonging('contact_proofs'), 'proofs');
    // A public booking's client record is its own (one booking each); REST books for a client on file.
    await add(bookings().where('c.contact_proven', '=', 0), 'clients');
    return result;
  };

  let before: Record<string, number> = {};
  const control = await listenForControl(async (body) => {
    const { op } = body as PublicBookingControl;
    if (op === 'state') {
      // Read first: an interval between two readings then holds the counting done at its start, not the
      // counting at its end (the same small cost in every interval).
      const { user, system } = process.cpuUsage();
      const state: PublicBookingState = { counts: await counts(), cpuMs: (user + system) / 1000 };
      return state;
    }
    if (op === 'census-begin') {
      before = await rowsPerTable(database.db);
      statements.length = 0;
      recording = true;
      return {};
    }
    if (op === 'census-end') {
      recording = false;
      const after = await rowsPerTable(database.db);
      const rows = Object.fromEntries(
        Object.entries(after)
          .map(([table, n]) => [table, n - (before[table] ?? 0)] as const)
          .filter(([, added]) => added !== 0),
      );
      const census: Census = { statements: [...statements], rows };
      return census;
    }
    throw new Error(`No control operation ${JSON.stringify(op)}.`);
  });

  return {
    info: {
      pid: process.pid,
      origin: stack.origin,
      recordedOrigin,
      controlOrigin: control.origin,
      organisations,
    },
    close: async () => {
      await control.close();
      await recorded.close();
      await recordedHandle.close();
      await stack.close();
    },
  };
});

/**
 * Every table's row count (SQLite: the tables of sqlite_master but its own and the migrations'), the
 * outbox's by kind of message ("outbox (confirmed)").
 */
async function rowsPerTable(db: Db): Promise<Record<string, number>> {
  const tables = await sql<{ name: string }>`
    SELECT name FROM sqlite_master
    WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%'
    ORDER BY name`.execute(db);
  const counts: Record<string, number> = {};
  for (const { name } of tables.rows) {
    const row = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(name)}`.execute(db);
    if (name !== 'outbox') counts[name] = Number(row.rows[0]?.n ?? 0);
  }
  const kinds = await db
    .selectFrom('outbox')
    .select(['kind', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('kind')
    .execute();
  for (const { kind, n } of kinds) counts[`outbox (${kind})`] = Number(n);
  return counts;
}
