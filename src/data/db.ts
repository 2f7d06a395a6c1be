import { type Kysely, PostgresAdapter } from 'kysely';
import type { Database } from './tables.ts';

/**
 * The database as every query sees it, and the handle that owns it. Opening one is database.ts's job
 * (with its two dialect modules); these types live apart so the dialect modules can name them
 * without importing the module that imports them.
 */
export type Db = Kysely<Database>;
export type DialectName = 'sqlite' | 'postgres';

/** How long a SQLite connection waits for another process's write lock before SQLITE_BUSY. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/** Which dialect a handle speaks, for the few places that must differ (see integrity-check.ts). */
export function dialectOf(db: Db): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

export interface DatabaseHandle {
  db: Db;
  dialect: DialectName;
  /** Where the data lives, for messages; never contains credentials. */
  description: string;
  close(): Promise<void>;
}

/** How a database is opened, beyond its URL. */
export interface DatabaseOptions {
  /** Called with the SQL of every query run (never its parameters): for tests that count queries. */
  onQuery?: (sql: string) => void;
  /**
   * PostgreSQL: called with each round trip to the server as it goes, the SQL of its statements, BEGIN
   * and COMMIT among them where they go with another (postgres-transaction-edges.ts): for tests that
   * count round trips. Kysely's `begin` or `commit` that goes with another statement, or nowhere, is
   * no round trip of its own.
   */
  onRoundTrip?: (statements: readonly string[]) => void;
  /**
   * For commands that only look (`booking check`): a SQLite file is opened read-only and as it is (it
   * must exist; not even its journal mode changes); PostgreSQL sessions refuse every write.
   */
  readonly?: boolean;
  /**
   * A SQLite file must be there already (MissingDatabaseError otherwise) rather than be created: for
   * every command but those that set a database up (migrate, import, demo, serve; restore writes the
   * file itself), so that a mistyped DATABASE_URL path makes no new, empty database.
   */
  mustExist?: boolean;
}
