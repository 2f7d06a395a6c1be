import pg from 'pg';

/**
 * The PostgreSQL the suite's second run uses (TEST_POSTGRES_URL, by default the local server with
 * trust authentication). Each test database is a copy of the run's migrated template (see
 * postgres-global-setup.ts), made by CREATE DATABASE ... TEMPLATE, and dropped when the test is done.
 */
export const POSTGRES_ADMIN_URL =
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_DATABASE_PREFIX = 'booking_test_';

/** The URL of `database` on the test server. */
export function postgresUrlOf(database: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs `work` on a short-lived connection to the server's maintenance database. */
export async function withAdminConnection<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Whether the test server answers; what `npm test` decides on before it runs the PostgreSQL suite. */
export async function postgresReachable(): Promise<boolean> {
  try {
    await withAdminConnection((client) => client.query('SELECT 1'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Numbers this process's test databases. On globalThis, not in this module: the suite's files share a
 * module graph per worker (vitest.config.ts), and a file that resets the modules (vi.resetModules)
 * loads this one again, which would count from 0 and name a database an earlier file had.
 */
const databaseCounter = globalThis as typeof globalThis & { bookingTestDatabases?: number };

function nextDatabaseNumber(): number {
  databaseCounter.bookingTestDatabases = (databaseCounter.bookingTestDatabases ?? 0) + 1;
  return databaseCounter.bookingTestDatabases;
}

/**
 * A new database named after the run's template (so the run's teardown drops it): a copy of the
 * template (migrated), or empty, for commands that must migrate it themselves.
 */
export async function createTestDatabase(
  template: string,
  options: { empty?: boolean } = {},
): Promise<string> {
  const run = template.slice(0, -'template'.length);
  const name = `${run}w${process.pid}_${nextDatabaseNumber()}`;
  const source = options.empty ? '' : ` TEMPLATE ${template}`;
  await withAdminConnection((client) => client.query(`CREATE DATABASE ${name}${source}`));
  return name;
}

export async function dropDatabase(name: string): Promise<void> {
  await withAdminConnection((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/**
 * A new database of the same run (so the run's teardown drops it too) copied from `source`, a test
 * database nobody is connected to: for tests that prepare a database once, with the command line, and
 * then use a copy of it several times.
 */
export async function copyTestDatabase(source: string): Promise<string> {
  const name = `${source}_c${nextDatabaseNumber()}`;
  await withAdminConnection((client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${source}`));
  return name;
}

/** The database a URL of the test server names (the inverse of postgresUrlOf). */
export function databaseNameOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}
