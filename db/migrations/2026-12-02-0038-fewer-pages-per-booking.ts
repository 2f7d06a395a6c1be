import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * SQLite: fewer b-trees written by every booking, so fewer pages in its COMMIT (each synced to the
 * WAL) and checkpoints further apart (issue 47; docs/decisions/pages-per-booking.md).
 *
 * - booking_services, booking_events and booking_pages become WITHOUT ROWID tables: each was a rowid
 *   table plus the index of its composite primary key, two b-trees written per row, where the rows
 *   (a few dozen bytes, always read by that key) can live in the key's b-tree alone.
 * - `bookings_series` covers only the bookings of a series (`series_id IS NOT NULL`, what every query
 *   by series says), as it already does on PostgreSQL (0030): a booking outside a series writes nothing
 *   to it.
 *
 * Each table is made anew from its own definition (the text SQLite keeps), with its indexes and
 * triggers (booking_events' append-only guards), inside the migration's transaction. Nothing points at
 * these tables, so dropping them breaks no foreign key. PostgreSQL has no rowid: nothing changes there.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

const TABLES = ['booking_services', 'booking_events', 'booking_pages'];

export async function up(db: AnyDb): Promise<void> {
  if (isPostgres(db)) return;
  for (const table of TABLES) await rebuildWithoutRowid(db, table);
  await db.schema.dropIndex('bookings_series').execute();
  await db.schema
    .createIndex('bookings_series')
    .on('bookings')
    .columns(['organisation_id', 'series_id', 'starts_at'])
    .where(sql.ref('series_id'), 'is not', null)
    .execute();
}

async function rebuildWithoutRowid(db: AnyDb, table: string): Promise<void> {
  const schema = await sql<{ type: string; name: string; sql: string | null }>`
    SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ${table}`.execute(db);
  const definition = schema.rows.find((row) => row.type === 'table')?.sql;
  const opening = `CREATE TABLE "${table}" (`;
  if (!definition?.startsWith(opening)) throw new Error(`${table}: unexpected definition ${definition}`);
  // Its own indexes and triggers (the automatic indexes of its constraints come with the table).
  const dependents = schema.rows.filter((row) => row.type !== 'table' && row.sql !== null);
  const next = `${table}_next`;
  await sql.raw(`CREATE TABLE "${next}" (${definition.slice(opening.length)} WITHOUT ROWID`).execute(db);
  await sql.raw(`INSERT INTO "${next}" SELECT * FROM "${table}"`).execute(db);
  await db.schema.dropTable(table).execute();
  await db.schema.alterTable(next).renameTo(table).execute();
  for (const dependent of dependents) await sql.raw(dependent.sql!).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
