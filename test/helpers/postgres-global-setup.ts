import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/data/database.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import { postgresUrlOf, TEST_DATABASE_PREFIX, withAdminConnection } from './postgres-test-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database every PostgreSQL test database of this run is copied from. */
    postgresTemplate: string;
  }
}

/**
 * Before the PostgreSQL run: drops the test databases of runs that are no longer alive (an
 * interrupted run leaves its databases behind; a run alive beside this one keeps them), then builds
 * this run's template, migrated by this version's migrations. Database names carry the id of the
 * process running vitest, so concurrent runs on one server never touch each other's databases.
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = `${TEST_DATABASE_PREFIX}${process.pid}_`;
  await dropDatabases((name) => !runIsAlive(name));
  const template = `${run}template`;
  await withAdminConnection((client) => client.query(`CREATE DATABASE ${template}`));
  const handle = openDatabase(postgresUrlOf(template));
  try {
    await migrateToLatest(handle.db);
  } finally {
    // A template must have no open connection while it is copied.
    await handle.close();
  }
  project.provide('postgresTemplate', template);
  return () => dropDatabases((name) => name.startsWith(run));
}

function runIsAlive(database: string): boolean {
  const pid = Number(database.slice(TEST_DATABASE_PREFIX.length).split('_')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function dropDatabases(which: (name: string) => boolean): Promise<void> {
  await withAdminConnection(async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [TEST_DATABASE_PREFIX],
    );
    for (const { datname } of rows.filter((row) => which(row.datname))) {
      await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  });
}
