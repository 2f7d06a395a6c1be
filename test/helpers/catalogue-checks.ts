import { sql } from 'kysely';
import { expect } from 'vitest';
import { CatalogueValidationError } from '../../src/app/catalogue-import/import-catalogue.ts';
import type { Db } from '../../src/data/database.ts';

/** The problems an import refused its catalogue for (failing the test if it did not refuse it). */
export async function importProblems(
  importing: Promise<unknown>,
): Promise<{ path: string; message: string }[]> {
  const error = await importing.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CatalogueValidationError);
  return (error as CatalogueValidationError).problems;
}

/**
 * Every row of every table (the migration bookkeeping too), as JSON: what "changes nothing" and
 * "writes nothing" compare. The tables come from Kysely's introspection, which reads SQLite's and
 * PostgreSQL's catalogues alike; each table's rows are sorted, since neither database promises an
 * order without ORDER BY (PostgreSQL moves an updated row to the end of its table).
 */
export async function everyRow(db: Db): Promise<Record<string, string[]>> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  const names = tables
    .filter((table) => !table.isView)
    .map((table) => table.name)
    .sort();
  expect(names).toContain('bookings');
  const result: Record<string, string[]> = {};
  for (const name of names) {
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db);
    result[name] = rows.rows.map((row) => JSON.stringify(row)).sort();
  }
  return result;
}
