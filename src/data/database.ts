import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type SqliteDatabase as KyselySqliteDatabase,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import { searchFold } from '../domain/search-fold.ts';
import { registerChangeMark } from './change-mark.ts';
import { type DatabaseHandle, type DatabaseOptions, SQLITE_BUSY_TIMEOUT_MS } from './db.ts';
import { openPostgres } from './postgres.ts';
import { privateDatabaseFile } from './private-files.ts';
import { type SqliteConnection, SqliteDatabase, type SqliteStatement } from './sqlite-driver.ts';
import { StorageHealth, trackStorageHealth } from './storage-health.ts';
import type { Database } from './tables.ts';
import { enableGroupCommit } from './write-transaction.ts';

export type { DatabaseHandle, DatabaseOptions, Db, DialectName } from './db.ts';
export { dialectOf } from './db.ts';

/** The project's own folder (this file is src/data/database.ts), whatever the working directory. */
export const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The project's db/booking.sqlite. A relative SQLite path is read against the project folder, not the
 * working directory, so a command started elsewhere (an MCP host starting `booking mcp`) finds the
 * same database as `npm start` in the project.
 */
export const DEFAULT_DATABASE_URL = 'sqlite:db/booking.sqlite';

/**
 * What a command says of a SQLite DATABASE_URL path with no file: the path, and the two ways on (a
 * mistyped path, or a database not made yet).
 */
export function noDatabaseAt(file: string): string {
  return `There is no booking database at ${file}. Check DATABASE_URL, or make one there with \`booking migrate\`.`;
}

/** A SQLite database file that was required to exist (DatabaseOptions.mustExist) and does not. */
export class MissingDatabaseError extends Error {
  readonly file: string;

  constructor(file: string) {
    super(noDatabaseAt(file));
    this.name = 'MissingDatabaseError';
    this.file = file;
  }
}

/**
 * A database that holds tables but none of the engine's migrations, required to be a booking database
 * (DatabaseOptions.mustExist): another application's, which only a command that sets a database up
 * may add the engine's tables to.
 */
export class ForeignDatabaseError extends Error {
  constructor(description: string) {
    super(
      `${description} (DATABASE_URL) holds tables of another kind, not a booking database. Check DATABASE_URL (\`booking migrate\` would add the booking tables to it).`,
    );
    this.name = 'ForeignDatabaseError';
  }
}

/**
 * Opens the database named by a DATABASE_URL.
 *
 * `sqlite:<path>` (relative paths are resolved against the project folder), `sqlite::memory:`, or
 * `postgres://user:password@host:port/database` (see postgres.ts). Every dialect-specific setting lives
 * in these two files so the rest of the code is plain Kysely.
 */
export function openDatabase(
  url: string = DEFAULT_DATABASE_URL,
  options: DatabaseOptions = {},
): DatabaseHandle {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length), options);
  if (isPostgresUrl(url)) return openPostgres(url, options);
  throw new Error(
    'Unsupported DATABASE_URL scheme: expected sqlite:<path> or postgres://user@host:port/database.',
  );
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/**
 * The file of a `sqlite:<path>` DATABASE_URL, resolved against the project folder; null for another
 * dialect or an in-memory database (what file-level operations such as backups need to know).
 */
export function sqliteFileOf(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null;
  const file = url.slice('sqlite:'.length);
  return file === '' || file === ':memory:' ? null : path.resolve(PROJECT_ROOT, file);
}

function openSqlite(file: string, options: DatabaseOptions): DatabaseHandle {
  if (file === '') throw new Error('DATABASE_URL sqlite: needs a file path, e.g. sqlite:db/booking.sqlite');
  const inMemory = file === ':memory:';
  const resolved = inMemory ? file : path.resolve(PROJECT_ROOT, file);
  const readonly = options.readonly === true && !inMemory;
  if (!inMemory && options.mustExist && !existsSync(resolved)) throw new MissingDatabaseError(resolved);
  if (!inMemory && !readonly) {
    try {
      mkdirSync(path.dirname(resolved), { recursive: true });
      privateDatabaseFile(resolved);
    } catch (error) {
      throw new Error(`Cannot make the database file ${resolved} (DATABASE_URL): ${whyNoFile(error)}.`);
    }
  }
  const sqlite = new SqliteDatabase(resolved, { readonly, fileMustExist: readonly });
  if (readonly) configureReadonlySqlite(sqlite);
  else configureSqlite(sqlite);
  registerSearchFold(sqlite);
  const onQuery = options.onQuery;
  const health = new StorageHealth();
  const changed: Changed = { since: false, lazily: false, writes: 0 };
  const db = new Kysely<Database>({
    dialect: new EmbeddedSqliteDialect({ database: withStatementCache(sqlite, health, changed) }, sqlite),
    ...(onQuery && { log: (event) => onQuery(event.query.sql) }),
  });
  enableGroupCommit(db);
  trackStorageHealth(db, health);
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  registerChangeMark(db, () => `${dataVersion.get()}:${changed.writes}`);
  return {
    db,
    dialect: 'sqlite',
    description: inMemory ? 'SQLite in memory' : `SQLite ${resolved}`,
    close: () => db.destroy(),
  };
}

/** Why a folder or file on the way to a SQLite database could not be made, said of the path at fault. */
function whyNoFile(error: unknown): string {
  const { code, path: at } = error as NodeJS.ErrnoException;
  if (at !== undefined) {
    if (code === 'EEXIST' || code === 'ENOTDIR') return `${fileOnTheWay(at)} is a file, not a folder`;
    if (code === 'EACCES' || code === 'EPERM') return `permission denied on ${at}`;
    if (code === 'EROFS') return `${at} is on a read-only file system`;
    if (code === 'ENOENT') return `${at} cannot be made there`;
  }
  return (error as Error).message;
}

/** The file a folder was to be made under or in place of (`/etc/hostname` of `/etc/hostname/sub`). */
function fileOnTheWay(at: string): string {
  for (let p = at; p !== path.dirname(p); p = path.dirname(p)) {
    try {
      if (!statSync(p).isDirectory()) return p;
    } catch {
      // Not there: its parent is looked at.
    }
  }
  return at;
}

/**
 * Pages SQLite keeps in process memory per connection, in KiB (a negative cache_size): SQLite's own
 * default. better-sqlite3 builds SQLite with 16 MiB, which a server filled as its file grew (the mixed
 * load's server held 16 MiB of pages after a minute) while the operating system caches the same file
 * anyway; a page missed here is a read from that cache. The hot pages of a request (the key, the
 * organisation's versions, one location's bookings) fit many times over.
 */
export const SQLITE_CACHE_KIB = 2_000;

/**
 * WAL lets readers run beside the single writer; FULL synchronous makes a committed booking survive a
 * power cut (WAL's default NORMAL may lose the last transactions); the busy timeout lets a second
 * process wait for the write lock instead of failing at once; the page cache is bounded (above).
 *
 * Temporary storage in memory: group commit runs each unit of work in a savepoint (write-transaction.ts),
 * and SQLite keeps the pages a savepoint changes in a statement journal that goes to a temporary file
 * past 64 KiB: a booking's unit passed that, so every booking wrote its pages to a file it never read
 * back (two thirds of the writer's pwrite calls; bench `outbox`). In memory, that journal lives as long
 * as its savepoint. Sorts too large for the page cache (an organisation's whole outbox) sort in memory.
 */
export function configureSqlite(sqlite: SqliteConnection): void {
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  sqlite.pragma('trusted_schema = OFF');
  sqlite.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  sqlite.pragma('temp_store = MEMORY');
}

/**
 * `search_fold(text)`: searchFold in SQL, for the client search (SQLite's own lower() folds ASCII only,
 * so "élodie" missed "Élodie"). PostgreSQL does the same steps with its own functions (searchFolded).
 */
function registerSearchFold(sqlite: SqliteConnection): void {
  sqlite.function('search_fold', { deterministic: true }, (value: unknown) =>
    typeof value === 'string' ? searchFold(value) : value,
  );
}

/** The settings of configureSqlite that a read-only connection may set (no journal or sync mode). */
function configureReadonlySqlite(sqlite: SqliteConnection): void {
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  sqlite.pragma('trusted_schema = OFF');
  sqlite.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
}

/** Bounds of a connection's prepared statements: how many, and the bytes of their SQL texts. */
export const STATEMENT_CACHE_SIZE = 500;
export const STATEMENT_CACHE_TEXT_BYTES = 2 ** 20;

/**
 * Prepared statements by SQL text, bounded by count and by the length of their texts (SQL here is
 * ASCII, one byte a character; what SQLite holds for a statement grows with its text). When either
 * bound would be passed the cache starts afresh: the shapes in use are prepared again at once. A text
 * longer than the whole bound is not kept.
 */
export class StatementCache<T> {
  readonly #statements = new Map<string, T>();
  readonly #maxEntries: number;
  readonly #maxTextBytes: number;
  #textBytes = 0;

  constructor(maxEntries = STATEMENT_CACHE_SIZE, maxTextBytes = STATEMENT_CACHE_TEXT_BYTES) {
    this.#maxEntries = maxEntries;
    this.#maxTextBytes = maxTextBytes;
  }

  get size(): number {
    return this.#statements.size;
  }

  get textBytes(): number {
    return this.#textBytes;
  }

  get(sql: string): T | undefined {
    return this.#statements.get(sql);
  }

  set(sql: string, statement: T): void {
    if (sql.length > this.#maxTextBytes || this.#statements.has(sql)) return;
    if (this.#statements.size >= this.#maxEntries || this.#textBytes + sql.length > this.#maxTextBytes) {
      this.#statements.clear();
      this.#textBytes = 0;
    }
    this.#statements.set(sql, statement);
    this.#textBytes += sql.length;
  }
}

/**
 * Kysely prepares every statement anew on each execution, which costs more than running most of our
 * queries. The same SQL text always gets the same prepared statement here (SQLite re-prepares it by
 * itself after a schema change). Kysely's single-connection mutex means a statement is never used by
 * two queries at once. The cache is bounded (StatementCache): the queries are built from a fixed set of
 * shapes, but `in (...)` lists of varying length make distinct texts. Every statement reports to
 * `health` whether a write reached the disk or the storage failed (storage-health.ts).
 */
function withStatementCache(
  sqlite: SqliteConnection,
  health: StorageHealth,
  changed: Changed,
): KyselySqliteDatabase {
  const statements = new StatementCache<KyselyStatement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        const prepared = sqlite.prepare(sql);
        const kind = {
          rollback: /^\s*rollback\b/i.test(sql),
          // writeTransaction's durable: false (write-transaction.ts) commits between these two.
          syncs: /^\s*pragma\s+synchronous\s*=\s*(normal|full)\b/i.exec(sql)?.[1]?.toLowerCase(),
          // `readonly` tells a WITH that reads from one that writes (a COMMIT is readonly to SQLite too,
          // yet reports the changes of the statement before it: hence the statement's first word).
          write: !prepared.readonly && /^\s*(insert|update|delete|replace|with)\b/i.test(sql),
        };
        statement = reporting(sqlite, prepared, kind, changed, health);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

type KyselyStatement = ReturnType<KyselySqliteDatabase['prepare']>;

/**
 * What the connection's statements changed: `since` the last moment outside a transaction, and
 * whether under synchronous NORMAL (`lazily`), for storage health; and how many write statements
 * changed rows since it opened (`writes`), for the change mark (change-mark.ts), as SQLite's
 * data_version counts only other connections' commits.
 */
interface Changed {
  since: boolean;
  lazily: boolean;
  writes: number;
}

/**
 * A statement that tells `health` how it went: a write has reached the disk when a statement that is
 * not a read (nor a rollback) leaves the connection outside a transaction (a COMMIT, or a write on its
 * own) after something was changed since the last such moment (`changed`): a transaction that changed
 * nothing (a worker's claim that found nothing) wrote nothing to the disk, and proves nothing about it;
 * nor do the changes of a transaction that failed and was rolled back, nor a COMMIT under synchronous
 * NORMAL (bookkeeping redone if lost, write-transaction.ts), which did not wait for the disk. A failure is reported whatever it was, and kept if it is the storage's.
 */
function reporting(
  sqlite: SqliteConnection,
  statement: SqliteStatement,
  kind: { rollback: boolean; write: boolean; syncs?: string | undefined },
  changed: Changed,
  health: StorageHealth,
): KyselyStatement {
  const observe = <T>(run: () => T, changes: (result: T) => boolean): T => {
    let result: T;
    try {
      result = run();
    } catch (error) {
      health.failed(error);
      // A failure that ended the transaction (a full disk fails the COMMIT, and SQLite rolls back)
      // took its changes with it: the next COMMIT must not be credited with them.
      if (!sqlite.inTransaction) changed.since = false;
      throw error;
    }
    if (kind.syncs) changed.lazily = kind.syncs === 'normal';
    if (kind.write && changes(result)) {
      changed.since = true;
      changed.writes++;
    }
    if (kind.rollback) changed.since = false;
    if (!statement.reader && !kind.rollback && !sqlite.inTransaction) {
      // A COMMIT under synchronous NORMAL did not wait for the disk: it proves nothing about it.
      if (changed.since && !changed.lazily) health.written();
      changed.since = false;
    }
    return result;
  };
  const rows = (result: unknown) => Array.isArray(result) && result.length > 0;
  return {
    reader: statement.reader,
    all: (parameters) => observe(() => statement.all(parameters), rows),
    run: (parameters) =>
      observe(
        () => statement.run(parameters),
        (result) => Number((result as { changes?: number | bigint }).changes ?? 0) > 0,
      ),
    iterate: (parameters) =>
      observe(
        () => statement.iterate(parameters),
        () => true,
      ),
  };
}

/**
 * Kysely's SQLite dialect with two corrections:
 * - transactions start with BEGIN IMMEDIATE, taking the write lock up front. Every transaction here
 *   writes; a deferred one that reads first fails with SQLITE_BUSY (without waiting) when another
 *   process commits in between, while an immediate one waits out busy_timeout and then sees fresh data;
 * - DDL is declared transactional (SQLite supports it), so a failed migration leaves nothing behind.
 */
class EmbeddedSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #sqlite: SqliteConnection;

  constructor(config: SqliteDialectConfig, sqlite: SqliteConnection) {
    super(config);
    this.#config = config;
    this.#sqlite = sqlite;
  }

  override createDriver(): Driver {
    return new ImmediateTransactionSqliteDriver(this.#config, this.#sqlite);
  }

  override createAdapter(): SqliteAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

class ImmediateTransactionSqliteDriver extends SqliteDriver {
  readonly #sqlite: SqliteConnection;

  constructor(config: SqliteDialectConfig, sqlite: SqliteConnection) {
    super(config);
    this.#sqlite = sqlite;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * Some failures end the transaction inside SQLite already (a full disk, an I/O error): a ROLLBACK
   * then fails with "cannot rollback - no transaction is active", and that error, not the real one,
   * would reach the caller and the log. Nothing is left to roll back, so nothing is asked.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#sqlite.inTransaction) await super.rollbackTransaction(connection);
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}
