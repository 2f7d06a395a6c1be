import { Migrator } from 'kysely';
import { expect } from 'vitest';
import { migrations } from '../../db/migrations/index.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import type { Db } from '../../src/data/database.ts';
import type { Database } from '../../src/data/tables.ts';
import { smallCatalogue } from './catalogue-fixtures.ts';
import { createTempDatabase } from './temp-database.ts';

/**
 * Migration tests fill a database at an older schema. Today's importer writes columns and tables that
 * schema does not have yet, so they import into a current database and copy what it wrote here.
 */

/** The tables a catalogue import fills. */
export const CATALOGUE_TABLES = [
  'organisations',
  'locations',
  'location_closures',
  'services',
  'service_locations',
  'staff',
  'staff_services',
  'staff_locations',
  'staff_working_hours',
  'staff_time_off',
  'clients',
] as const;

/** Every row of the given tables, copied from one database to another in the columns the other has. */
export async function copyRows(from: Db, to: Db, tables: readonly (keyof Database)[]): Promise<void> {
  const schema = await to.introspection.getTables({ withInternalKyselyTables: false });
  for (const table of tables) {
    const columns = new Set(schema.find((s) => s.name === table)?.columns.map((c) => c.name));
    const rows = (await from.selectFrom(table).selectAll().execute()).map((row) =>
      Object.fromEntries(Object.entries(row).filter(([column]) => columns.has(column))),
    );
    // Rows of whichever table, in the older schema's columns.
    if (rows.length > 0)
      await to
        .insertInto(table)
        .values(rows as never)
        .execute();
  }
}

/**
 * Brings an empty database to `migration` (the last one applied) and fills it with the small catalogue
 * as that schema holds it: imported into a current database by today's importer, then copied.
 */
export async function catalogueAtMigration(db: Db, migration: string, now: number): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  expect((await migrator.migrateTo(migration)).error).toBeUndefined();
  const current = await createTempDatabase();
  try {
    await importCatalogue(current.db, smallCatalogue(), now);
    await copyRows(current.db, db, CATALOGUE_TABLES);
  } finally {
    await current.dispose();
  }
}
