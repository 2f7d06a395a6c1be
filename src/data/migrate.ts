import { Migrator } from 'kysely';
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
