import { Migrator, sql } from 'kysely';
import { migrations } from '../../db/migrations/index.ts';
import { type Db, dialectOf } from './database.ts';

export interface MigrationOutcome {
  applied: string[];
}

/** Brings the schema up to date; safe to call at every start (already applied steps are skipped). */
export async function migrateToLatest(db: Db): Promise<MigrationOutcome> {
  // Kysely's own refusal of it ("corrupted migrations: previously executed migration ... is
  // missing") does not tell an operator what happened, or what to do.
  const applied = await appliedMigrations(db);
  const unknown = migrationUnknownHere(applied ?? []);
  if (unknown !== null) {
    throw new Error(
      `The database was migrated by a newer version of booking (it has the migration ${unknown} this version lacks); run that version, or restore a backup this version wrote.`,
    );
  }
  // Up to date: nothing to write. Kysely's migrator would still take its lock with a write, which
  // waits behind any other process's write transaction (and on SQLite fails after the busy timeout):
  // `booking mcp` started while another process wrote for longer than that never answered its host.
  if (applied !== null && Object.keys(migrations).every((name) => applied.has(name))) return { applied: [] };
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

/**
 * The migrations this version has that the database has not applied, without applying or creating
 * anything (read-only connections can ask); null when the database has no migrations table at all.
 */
export async function pendingMigrations(db: Db): Promise<string[] | null> {
  const applied = await appliedMigrations(db);
  if (applied === null) return null;
  return Object.keys(migrations).filter((name) => !applied.has(name));
}

/**
 * Whether the database holds tables but has applied no migration of the engine: another application's
 * database, not a booking one (an empty one is a booking database not set up yet).
 */
export async function isForeignDatabase(db: Db): Promise<boolean> {
  if ((await appliedMigrations(db)) !== null) return false;
  if (dialectOf(db) === 'sqlite') return (await db.introspection.getTables()).length > 0;
  // On PostgreSQL, tables of the schema the engine's would go in (the search path's first): not of
  // other schemas of a shared database, nor an extension's (PostGIS's spatial_ref_sys in another).
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_tables t
    WHERE t.schemaname = current_schema()
      AND NOT EXISTS (
        SELECT 1 FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
        WHERE c.relname = t.tablename AND c.relnamespace = current_schema()::regnamespace AND d.deptype = 'e'
      )`.execute(db);
  return rows[0]!.n > 0;
}

/**
 * The migrations the database has applied; null when it has no migrations table at all. Any other
 * failure (a server down, a password refused) is thrown as itself, not taken for a missing table.
 */
async function appliedMigrations(db: Db): Promise<Set<string> | null> {
  return sql<{ name: string }>`SELECT name FROM kysely_migration`
    .execute(db)
    .then((result) => new Set(result.rows.map((row) => row.name)))
    .catch((error: unknown) => {
      if (isMissingTable(error)) return null;
      throw error;
    });
}

/** SQLite's "no such table", or PostgreSQL's undefined_table (SQLSTATE 42P01). */
function isMissingTable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '42P01' || (typeof message === 'string' && message.startsWith('no such table'));
}

/**
 * Of the migrations a database has applied, the first this version does not have, or null: a database
 * a newer version migrated, which this one cannot open (its migrator refuses unknown migrations).
 */
export function migrationUnknownHere(applied: Iterable<string>): string | null {
  for (const name of applied) if (!Object.hasOwn(migrations, name)) return name;
  return null;
}
