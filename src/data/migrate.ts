import { Migrator, sql } from 'kysely';
import { migrations } from '../../db/migrations/index.ts';
import type { Db } from './database.ts';

export interface MigrationOutcome {
  applied: string[];
}

/** Brings the schema up to date; safe to call at every start (already applied steps are skipped). */
export async function migrateToLatest(db: Db): Promise<MigrationOutcome> {
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
  const applied = await sql<{ name: string }>`SELECT name FROM kysely_migration`
    .execute(db)
    .then((result) => new Set(result.rows.map((row) => row.name)))
    .catch(() => null);
  if (applied === null) return null;
  return Object.keys(migrations).filter((name) => !applied.has(name));
}

/**
 * Of the migrations a database has applied, the first this version does not have, or null: a database
 * a newer version migrated, which this one cannot open (its migrator refuses unknown migrations).
 */
export function migrationUnknownHere(applied: Iterable<string>): string | null {
  for (const name of applied) if (!Object.hasOwn(migrations, name)) return name;
  return null;
}
