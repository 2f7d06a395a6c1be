import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Migrator, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrations } from '../../db/migrations/index.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { openDatabase, SQLITE_CACHE_KIB } from '../../src/data/database.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import type { BookingsTable } from '../../src/data/tables.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow, bookingRowBeforeSeries } from '../helpers/booking-row.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import {
  expectExclusionRefusal,
  expectOverlapRefusal,
  expectRefusedBy,
  expectTriggerRefusal,
} from '../helpers/database-refusal.ts';
import { CATALOGUE_TABLES, copyRows } from '../helpers/older-schema.ts';
import {
  createTempDatabase,
  freshDatabaseUrl,
  onPostgres,
  type TempDatabase,
} from '../helpers/temp-database.ts';

/** The rules the database itself holds, whatever the code above it does. */
let t: TempDatabase;
let ids: { org: string; location: string; staff: string; client: string };
const hour = 3_600_000;
const t0 = Date.parse('2026-11-23T09:00:00Z');

beforeEach(async () => {
  t = await createTempDatabase();
  await importCatalogue(t.db, smallCatalogue(), t0);
  const catalogue = await catalogueIds(t.db);
  ids = {
    org: catalogue.organisation,
    location: catalogue.locations.soho!,
    staff: catalogue.staff.ana!,
    client: catalogue.jo,
  };
});
afterEach(async () => {
  await t.dispose();
});

function booking(overrides: Partial<BookingsTable> = {}): BookingsTable {
  return bookingRow(
    {
      organisationId: ids.org,
      locationId: ids.location,
      staffId: ids.staff,
      clientId: ids.client,
      startsAt: t0 + 24 * hour,
      endsAt: t0 + 25 * hour,
      blockedUntil: t0 + 25 * hour + 15 * 60_000,
    },
    { created_at: t0, updated_at: t0, ...overrides },
  );
}

const insert = (row: BookingsTable) => t.db.insertInto('bookings').values(row).execute();

/**
 * The span rule (a booking blocks its staff member for at most a day, and not backwards): a trigger
 * raising 'booking_span' on SQLite, which cannot add a CHECK to an existing table; the CHECK
 * constraint bookings_span on PostgreSQL.
 */
const expectSpanRefused = (write: Promise<unknown>) =>
  onPostgres
    ? expectRefusedBy(write, 'check', { constraint: 'bookings_span' })
    : expectTriggerRefusal(write, 'booking_span');

describe('database settings and migrations', () => {
  it.skipIf(onPostgres)(
    'runs SQLite in WAL mode with foreign keys, FULL synchronous, a busy timeout and temporary storage in memory',
    async () => {
      const pragma = async (name: string) =>
        Object.values((await sql.raw(`PRAGMA ${name}`).execute(t.db)).rows[0] as Record<string, unknown>)[0];
      expect(await pragma('journal_mode')).toBe('wal');
      expect(await pragma('foreign_keys')).toBe(1);
      expect(await pragma('synchronous')).toBe(2);
      expect(await pragma('busy_timeout')).toBe(5000);
      // 2: MEMORY (the savepoints' statement journals never go to a file).
      expect(await pragma('temp_store')).toBe(2);
    },
  );

  it.skipIf(onPostgres)('bounds the SQLite page cache of a connection to SQLITE_CACHE_KIB', async () => {
    const cacheSize = (await sql.raw('PRAGMA cache_size').execute(t.db)).rows[0] as { cache_size: number };
    expect(cacheSize.cache_size).toBe(-SQLITE_CACHE_KIB);
    expect(SQLITE_CACHE_KIB).toBeLessThanOrEqual(4_096);
  });

  it.runIf(onPostgres)(
    'holds the overlap exclusion constraint over live bookings, with btree_gist',
    async () => {
      // What the PostgreSQL run has instead of one writer at a time (see the double-booking guard below).
      const extensions = await sql<{ extname: string }>`
        select extname from pg_extension where extname = 'btree_gist'`.execute(t.db);
      expect(extensions.rows).toEqual([{ extname: 'btree_gist' }]);
      const constraints = await sql<{ conname: string; contype: string; definition: string }>`
        select conname, contype, pg_get_constraintdef(oid) as definition from pg_constraint
        where conrelid = 'bookings'::regclass and contype = 'x'`.execute(t.db);
      expect(constraints.rows).toEqual([
        {
          conname: 'bookings_no_overlap',
          contype: 'x',
          definition: expect.stringMatching(
            /^EXCLUDE USING gist .*organisation_id WITH =.*staff_id WITH =.*&&/,
          ),
        },
      ]);
      expect(constraints.rows[0]!.definition).toMatch(
        /WHERE .*pending_payment.*pending_confirmation.*confirmed/,
      );
    },
  );

  it('migrates once; a second run changes nothing', async () => {
    expect((await migrateToLatest(t.db)).applied).toEqual([]);
  });

  it('leaves nothing behind when a migration fails', async () => {
    // An empty database of the run's kind (a SQLite file beside the test's, or a PostgreSQL database).
    const { url, drop } = await freshDatabaseUrl(path.join(t.dir, 'half'));
    const other = openDatabase(url);
    try {
      await other.db.schema.createTable('locations').addColumn('id', 'text').execute();
      await expect(migrateToLatest(other.db)).rejects.toThrow(/already exists/);
      const tables = await other.db.introspection.getTables({ withInternalKyselyTables: false });
      expect(tables.map((table) => table.name)).toEqual(['locations']);
    } finally {
      await other.close();
      await drop();
    }
  });
});

/** The tables an import writes that exist at 0003, parents first. */
/** Tables that stay whole on every node of a distributed deployment: small, and read before the organisation is known. */
const REFERENCE_TABLES = ['organisations', 'api_keys', 'oauth_records'];

describe('distribution by organisation', () => {
  it('gives every table but organisations a NOT NULL organisation_id', async () => {
    const tables = await t.db.introspection.getTables({ withInternalKyselyTables: false });
    expect(tables.length).toBeGreaterThan(15);
    const missing = tables
      .filter((table) => table.name !== 'organisations')
      .filter((table) => !table.columns.some((c) => c.name === 'organisation_id' && !c.isNullable))
      .map((table) => table.name);
    expect(missing).toEqual([]);
  });

  it.runIf(onPostgres)(
    'puts organisation_id in every key and foreign key of the distributed tables (what Citus requires)',
    async () => {
      const constraints = await sql<{ table: string; name: string; type: string; columns: string[] }>`
        select c.conrelid::regclass::text as table, c.conname as name, c.contype as type,
               array(select a.attname::text from pg_attribute a
                     where a.attrelid = c.conrelid and a.attnum = any (c.conkey)) as columns
        from pg_constraint c join pg_class r on r.oid = c.conrelid
        join pg_namespace n on n.oid = r.relnamespace
        where n.nspname = current_schema() and c.contype in ('p', 'u', 'x', 'f')
          and r.relname not like 'kysely_%'`.execute(t.db);
      const distributed = constraints.rows.filter((c) => !REFERENCE_TABLES.includes(c.table));
      expect(distributed.filter((c) => c.type === 'p').length).toBeGreaterThan(15);
      const offending = distributed
        .filter((c) => !c.columns.includes('organisation_id'))
        .map((c) => `${c.table}.${c.name}`);
      expect(offending).toEqual([]);
      // Foreign keys between distributed tables must join on the distribution column too.
      const references = await sql<{ name: string; target: string; columns: string[] }>`
        select c.conname as name, c.confrelid::regclass::text as target,
               array(select a.attname::text from pg_attribute a
                     where a.attrelid = c.confrelid and a.attnum = any (c.confkey)) as columns
        from pg_constraint c join pg_namespace n on n.oid = c.connamespace
        where n.nspname = current_schema() and c.contype = 'f'`.execute(t.db);
      const crossing = references.rows
        .filter((r) => !REFERENCE_TABLES.includes(r.target) && !r.columns.includes('organisation_id'))
        .map((r) => r.name);
      expect(crossing).toEqual([]);
      // Unique indexes too, whether or not a constraint owns them (Citus refuses them all alike).
      const uniqueIndexes = await sql<{ table: string; name: string; columns: string[] }>`
        select t.relname as table, i.relname as name,
               array(select a.attname::text from pg_attribute a
                     where a.attrelid = x.indrelid and a.attnum = any (x.indkey)) as columns
        from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
        join pg_namespace n on n.oid = t.relnamespace
        where n.nspname = current_schema() and x.indisunique and t.relname not like 'kysely_%'`.execute(t.db);
      expect(uniqueIndexes.rows.length).toBeGreaterThan(30);
      const unkeyed = uniqueIndexes.rows
        .filter((i) => !REFERENCE_TABLES.includes(i.table) && !i.columns.includes('organisation_id'))
        .map((i) => `${i.table}.${i.name}`);
      expect(unkeyed).toEqual([]);
    },
  );

  it('upgrades a populated database to organisation keys without losing a row', async () => {
    const { url, drop } = await freshDatabaseUrl(path.join(t.dir, 'upgrade'));
    const old = openDatabase(url);
    try {
      const migrator = new Migrator({ db: old.db, provider: { getMigrations: async () => migrations } });
      const before = await migrator.migrateTo('2026-11-23-0003-rate-limit-counters');
      expect(before.error).toBeUndefined();
      await sql`insert into instance_settings (key, value) values ('cursor_secret', 'old')`.execute(old.db);
      // Today's importer writes tables that 0003 does not have yet: copy what it wrote here instead.
      await copyRows(t.db, old.db, CATALOGUE_TABLES);
      const catalogue = await catalogueIds(old.db);
      const oldRow = bookingRowBeforeSeries(
        {
          organisationId: catalogue.organisation,
          locationId: catalogue.locations.soho!,
          staffId: catalogue.staff.ana!,
          clientId: catalogue.jo,
          startsAt: t0 + 24 * hour,
          endsAt: t0 + 25 * hour,
          blockedUntil: t0 + 25 * hour,
        },
        { created_at: t0, updated_at: t0 },
      );
      await old.db.insertInto('bookings').values(oldRow).execute();
      const counts = async () => {
        const result: Record<string, number> = {};
        for (const table of [
          'locations',
          'services',
          'staff',
          'staff_working_hours',
          'clients',
          'bookings',
        ]) {
          const row = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(old.db);
          result[table] = Number(row.rows[0]!.n);
        }
        return result;
      };
      const rowsBefore = await counts();
      expect(rowsBefore.bookings).toBe(1);

      // 0004 and every migration after it (later ones add tables; none may lose a row either).
      const names = Object.keys(migrations);
      expect((await migrateToLatest(old.db)).applied).toEqual(
        names.slice(names.indexOf('2026-11-23-0004-organisation-keys')),
      );
      expect(await counts()).toEqual(rowsBefore);
      const tables = await old.db.introspection.getTables({ withInternalKyselyTables: false });
      expect(tables.map((table) => table.name)).toContain('cursor_secrets');
      expect(tables.map((table) => table.name)).not.toContain('instance_settings');
      if (onPostgres) {
        const key = await sql<{ definition: string }>`
          select pg_get_constraintdef(oid) as definition from pg_constraint
          where conname = 'bookings_pkey'`.execute(old.db);
        expect(key.rows).toEqual([{ definition: 'PRIMARY KEY (id, organisation_id)' }]);
      }
    } finally {
      await old.close();
      await drop();
    }
  });
});

describe('uniqueness', () => {
  it('refuses a second location with the same slug in an organisation', async () => {
    const location = await t.db
      .selectFrom('locations')
      .selectAll()
      .where('id', '=', ids.location)
      .executeTakeFirstOrThrow();
    await expectRefusedBy(
      t.db
        .insertInto('locations')
        .values({ ...location, id: randomUUID(), ref: 'other' })
        .execute(),
      'unique',
      { constraint: 'locations_org_slug' },
    );
  });

  it('refuses a second client with the same phone or e-mail in an organisation', async () => {
    const client = await t.db
      .selectFrom('clients')
      .selectAll()
      .where('id', '=', ids.client)
      .executeTakeFirstOrThrow();
    await expectRefusedBy(
      t.db
        .insertInto('clients')
        .values({ ...client, id: randomUUID(), ref: null, email: null })
        .execute(),
      'unique',
      { constraint: 'clients_org_phone' },
    );
    await expectRefusedBy(
      t.db
        .insertInto('clients')
        .values({ ...client, id: randomUUID(), ref: null, phone: null })
        .execute(),
      'unique',
      { constraint: 'clients_org_email' },
    );
  });

  it('refuses a duplicate booking reference and an unknown status', async () => {
    await insert(booking({ reference: 'AC-ABCDEF' }));
    await expectRefusedBy(
      insert(
        booking({
          reference: 'AC-ABCDEF',
          starts_at: t0 + 48 * hour,
          ends_at: t0 + 49 * hour,
          blocked_until: t0 + 49 * hour,
        }),
      ),
      'unique',
      { constraint: 'bookings_org_reference' },
    );
    await expectRefusedBy(
      insert(
        booking({
          status: 'maybe' as never,
          starts_at: t0 + 72 * hour,
          ends_at: t0 + 73 * hour,
          blocked_until: t0 + 73 * hour,
        }),
      ),
      'check',
      { constraint: 'bookings_status_check' },
    );
  });
});

describe('the double-booking guard', () => {
  it('refuses a live booking overlapping another of the same staff member, buffer included', async () => {
    await insert(booking());
    await expectOverlapRefusal(
      insert(booking({ starts_at: t0 + 25 * hour, ends_at: t0 + 26 * hour, blocked_until: t0 + 26 * hour })),
    );
    // Starting exactly when the buffer ends is fine.
    await insert(
      booking({
        starts_at: t0 + 25 * hour + 15 * 60_000,
        ends_at: t0 + 26 * hour,
        blocked_until: t0 + 26 * hour,
      }),
    );
  });

  it('ignores cancelled bookings and holds that have lapsed', async () => {
    await insert(booking({ status: 'cancelled', cancelled_at: t0 }));
    const hold = booking({
      status: 'pending_payment',
      hold_expires_at: t0 + 30 * 60_000,
      deposit_minor: 2000,
      deposit_status: 'pending',
    });
    await insert(hold);
    // The hold has lapsed by the time of this write (the writer's clock is in updated_at): the trigger
    // lets the slot go again.
    const later = t0 + hour;
    const over = booking({ created_at: later, updated_at: later });
    if (onPostgres) {
      // PostgreSQL's exclusion constraint, its one guard, cannot read a clock: a pending hold keeps
      // its slot there until its row says `expired`, which the booking paths write before they book
      // over it (2026-11-23-0002-overlap-exclusion).
      await expectExclusionRefusal(insert(over), 'bookings_no_overlap');
      await t.db
        .updateTable('bookings')
        .set({ status: 'expired', updated_at: later })
        .where('id', '=', hold.id)
        .execute();
    }
    await insert(over);
  });

  it('catches an overlap with a booking that started the better part of a day before', async () => {
    // The guard scans only bookings that start less than a day before the new one; the longest booking
    // allowed (24 h, buffer included) must still be caught.
    await insert(booking({ starts_at: t0, ends_at: t0 + 23 * hour, blocked_until: t0 + 24 * hour }));
    await expectOverlapRefusal(
      insert(
        booking({
          starts_at: t0 + 24 * hour - 60_000,
          ends_at: t0 + 25 * hour,
          blocked_until: t0 + 25 * hour,
        }),
      ),
    );
    await insert(
      booking({ starts_at: t0 + 24 * hour, ends_at: t0 + 25 * hour, blocked_until: t0 + 25 * hour }),
    );
  });

  it('refuses a booking blocking its staff member for more than a day, or ending before it starts', async () => {
    await expectSpanRefused(
      insert(booking({ starts_at: t0, ends_at: t0 + 24 * hour, blocked_until: t0 + 24 * hour + 60_000 })),
    );
    await expectSpanRefused(insert(booking({ starts_at: t0, ends_at: t0, blocked_until: t0 - 60_000 })));
    const row = booking();
    await insert(row);
    await expectSpanRefused(
      t.db
        .updateTable('bookings')
        .set({ blocked_until: row.starts_at + 25 * hour })
        .where('id', '=', row.id)
        .execute(),
    );
  });

  it('guards reschedules (updates) too', async () => {
    await insert(booking());
    const second = booking({
      starts_at: t0 + 30 * hour,
      ends_at: t0 + 31 * hour,
      blocked_until: t0 + 31 * hour,
    });
    await insert(second);
    await expectOverlapRefusal(
      t.db
        .updateTable('bookings')
        .set({ starts_at: t0 + 24 * hour + 30 * 60_000 })
        .where('id', '=', second.id)
        .execute(),
    );
  });

  it.runIf(onPostgres)(
    'refuses an overlap written by a concurrent transaction, which a read of committed rows cannot see',
    async () => {
      // Two instances booking one slot at once: neither trigger sees the other's uncommitted row, and
      // the exclusion constraint makes the second wait for the first and fail when it commits.
      const first = await t.db.startTransaction().execute();
      const second = await t.db.startTransaction().execute();
      let firstOpen = true;
      try {
        await first.insertInto('bookings').values(booking()).execute();
        const secondPid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(second))
          .rows[0]!.pid;
        const racing = second.insertInto('bookings').values(booking()).execute();
        racing.catch(() => undefined);
        // Commit only once the second insert waits on the first transaction: had it not started yet,
        // its trigger would see the committed row and refuse it, and the constraint would go untested.
        await waitUntil('the second insert waits on the first transaction', async () => {
          const blocked = await sql<{ n: number }>`
            select cardinality(pg_blocking_pids(${secondPid})) as n`.execute(t.db);
          return blocked.rows[0]!.n > 0;
        });
        await first.commit().execute();
        firstOpen = false;
        await expectExclusionRefusal(racing, 'bookings_no_overlap');
      } finally {
        if (firstOpen) await first.rollback().execute();
        await second.rollback().execute();
      }
      expect(await t.db.selectFrom('bookings').select('id').execute()).toHaveLength(1);
    },
  );
});

async function waitUntil(what: string, condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not true after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the booking event log', () => {
  it('is append-only', async () => {
    const row = booking();
    await insert(row);
    await t.db
      .insertInto('booking_events')
      .values({
        organisation_id: ids.org,
        booking_id: row.id,
        seq: 1,
        from_status: null,
        to_status: 'confirmed',
        actor: 'test',
        occurred_at: t0,
        details: null,
      })
      .execute();
    await expectTriggerRefusal(
      t.db.updateTable('booking_events').set({ actor: 'someone else' }).execute(),
      'booking_events is append-only',
    );
    await expectTriggerRefusal(t.db.deleteFrom('booking_events').execute(), 'booking_events is append-only');
  });
});

describe('a confirmed booking', () => {
  it('blocks its slot even when an old hold expiry is still on the row', async () => {
    await insert(booking({ status: 'confirmed', hold_expires_at: t0 - hour }));
    await expectOverlapRefusal(insert(booking({ created_at: t0 + hour, updated_at: t0 + hour })));
  });
});
