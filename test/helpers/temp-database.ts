import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterEach, beforeEach, inject } from 'vitest';
import { type DatabaseHandle, type Db, openDatabase } from '../../src/data/database.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import { createTestDatabase, dropDatabase, postgresUrlOf } from './postgres-test-server.ts';

/**
 * Which database the suite runs on: SQLite by default, PostgreSQL in the `postgres` project of
 * vitest.config.ts (TEST_DATABASE=postgres). Tests of what only one of them has (a SQLite file, WAL,
 * pragmas) say so with `describe.skipIf(onPostgres)`.
 */
export const onPostgres = process.env.TEST_DATABASE === 'postgres';

export interface TempDatabase extends DatabaseHandle {
  /** The DATABASE_URL of this database, for child processes. */
  url: string;
  /** The SQLite file (on PostgreSQL, asking for it is a mistake of the test, and throws). */
  file: string;
  /** A fresh temporary directory, for files the test writes beside the database. */
  dir: string;
  /** Another handle on the same database, as another process or instance would have. */
  reopen(): DatabaseHandle;
  /** Closes the database and removes it and its directory. */
  dispose(): Promise<void>;
}

/**
 * A real, migrated database: a SQLite file in a fresh temporary directory (a copy of this process's
 * migrated one), or a new PostgreSQL database (a copy of the run's template).
 */
export async function createTempDatabase(): Promise<TempDatabase> {
  const dir = mkdtempSync(path.join(tmpdir(), 'booking-test-'));
  const { url, drop } = await freshDatabaseUrl(dir, { migrated: true });
  const sqliteFile = onPostgres ? null : path.join(dir, 'booking.sqlite');
  if (sqliteFile !== null) copyFileSync(await migratedSqliteTemplate(), sqliteFile);
  const handle = openDatabase(url);
  return {
    ...handle,
    url,
    dir,
    get file(): string {
      if (sqliteFile === null)
        throw new Error('This test reads the SQLite file; mark it describe.skipIf(onPostgres).');
      return sqliteFile;
    },
    reopen: () => openDatabase(url),
    async dispose() {
      await handle.close();
      await drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * This process's migrated SQLite database, closed (its WAL folded into the file): each test's
 * database is a copy of it, as each PostgreSQL one is a copy of the run's template, quicker than
 * migrating a new file every test. On globalThis, as the database counter (postgres-test-server.ts):
 * a file that resets the modules loads this one again. Removed by a later process once this one is gone.
 */
const sqliteTemplate = globalThis as typeof globalThis & { bookingSqliteTemplate?: Promise<string> };

function migratedSqliteTemplate(): Promise<string> {
  sqliteTemplate.bookingSqliteTemplate ??= (async () => {
    // Vitest ends its workers without an exit event: each worker removes those of workers gone.
    for (const name of readdirSync(tmpdir())) {
      const pid = Number(name.match(/^booking-template-(\d+)$/)?.[1]);
      if (pid > 0 && !processIsAlive(pid))
        rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
    }
    const dir = path.join(tmpdir(), `booking-template-${process.pid}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    const file = path.join(dir, 'booking.sqlite');
    const handle = openDatabase(`sqlite:${file}`);
    try {
      await migrateToLatest(handle.db);
    } finally {
      await handle.close();
    }
    return file;
  })();
  return sqliteTemplate.bookingSqliteTemplate;
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The DATABASE_URL of a database nothing uses yet, for tests that hand it to `booking` commands: a
 * SQLite file (not created) in `dir`, or a new PostgreSQL database, empty or (with `migrated`, quicker
 * than migrating it) a copy of the run's migrated template. `drop` removes a PostgreSQL database.
 */
export async function freshDatabaseUrl(
  dir: string,
  options: { migrated?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  if (!onPostgres) return { url: `sqlite:${path.join(dir, 'booking.sqlite')}`, drop: async () => undefined };
  const name = await createTestDatabase(inject('postgresTemplate'), { empty: !options.migrated });
  return { url: postgresUrlOf(name), drop: () => dropDatabase(name) };
}

/**
 * For a file whose tests run `booking` commands: before each test a new folder and a new, empty
 * database (on PostgreSQL too: every command must migrate it first), removed after it. `env` carries
 * its DATABASE_URL for runCli and startServer.
 */
export function freshDatabasePerTest(prefix: string): {
  readonly dir: string;
  readonly env: Record<string, string>;
} {
  let dir = '';
  let env: Record<string, string> = {};
  let drop = async () => {};
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), prefix));
    const database = await freshDatabaseUrl(dir);
    env = { DATABASE_URL: database.url };
    drop = database.drop;
  });
  afterEach(async () => {
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    get env() {
      return env;
    },
  };
}

/**
 * For a file of migration tests: before each test a new, empty database (no migration applied, on
 * PostgreSQL too), opened, and closed and removed after it. `empty.db` is the current test's.
 */
export function emptyDatabasePerTest(prefix: string): { readonly db: Db } {
  let dir = '';
  let handle: DatabaseHandle | undefined;
  let drop = async () => {};
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), prefix));
    const fresh = await freshDatabaseUrl(dir);
    drop = fresh.drop;
    handle = openDatabase(fresh.url);
  });
  afterEach(async () => {
    await handle?.close();
    handle = undefined;
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get db() {
      if (!handle) throw new Error('emptyDatabasePerTest: used outside a test');
      return handle.db;
    },
  };
}

/**
 * A new migrated database before each test of the describe block (or file) that calls it, disposed
 * after the test: `temp.db` and `temp.dir` are the current test's.
 */
export function tempDatabasePerTest(): { readonly db: DatabaseHandle['db']; readonly dir: string } {
  let current: TempDatabase | undefined;
  beforeEach(async () => {
    current = await createTempDatabase();
  });
  afterEach(async () => {
    await current?.dispose();
    current = undefined;
  });
  const now = () => {
    if (!current) throw new Error('tempDatabasePerTest: used outside a test');
    return current;
  };
  return {
    get db() {
      return now().db;
    },
    get dir() {
      return now().dir;
    },
  };
}

/**
 * Resolves once `count` backends of this PostgreSQL database wait on a lock (row or advisory): the
 * requests under test have come to queue behind another writer, however slow the machine. Throws
 * after 10 s.
 */
export async function untilLockWaiters(db: Db, count = 1): Promise<void> {
  for (let tries = 0; tries < 400; tries++) {
    const { rows } = await sql<{ waiting: number }>`
      SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db);
    if (rows[0]!.waiting >= count) return;
    await sleep(25);
  }
  throw new Error(`fewer than ${count} backends came to wait on a lock`);
}
