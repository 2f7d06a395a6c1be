import type { Db } from './db.ts';

/**
 * Whether a database can still write, as its own writes tell: a database whose disk is full (or
 * read-only, or failing) goes on answering reads, so "it answers a query" is not readiness.
 *
 * Each dialect module reports what its connection sees: a write that reached the disk (a COMMIT, or a
 * statement outside a transaction) and a write that failed for lack of storage. The database counts as
 * unable to write while its last such failure is recent (FAILING_FOR_MS) and no write has succeeded
 * since; a database nobody writes to is not judged on failures older than that.
 */
export class StorageHealth {
  #lastFailure: { at: number; writesBefore: number; error: Error } | null = null;
  #writes = 0;

  /** A write reached the disk. */
  written(): void {
    this.#writes += 1;
  }

  /** A statement failed; remembered when the failure is the storage's. */
  failed(error: unknown): void {
    if (!isStorageFailure(error)) return;
    this.#lastFailure = { at: performance.now(), writesBefore: this.#writes, error: error as Error };
  }

  /** The storage failure that keeps the database from writing now, or null. */
  problem(): Error | null {
    const failure = this.#lastFailure;
    if (!failure || this.#writes > failure.writesBefore) return null;
    return performance.now() - failure.at < FAILING_FOR_MS ? failure.error : null;
  }
}

/** How long a storage failure counts without a successful write after it. */
export const FAILING_FOR_MS = 30_000;

/**
 * Failures of the storage rather than of the query: SQLite's full disk, I/O errors, a read-only or
 * unopenable or corrupt file; PostgreSQL's disk_full (53100), io_error (58030) and a read-only
 * transaction forced on it (25006, a standby).
 */
export function isStorageFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB)/.test(code) || POSTGRES_STORAGE.has(code);
}

const POSTGRES_STORAGE = new Set(['53100', '58030', '25006']);

const trackers = new WeakMap<Db, StorageHealth>();

export function trackStorageHealth(db: Db, health: StorageHealth): void {
  trackers.set(db, health);
}

/** The storage failure that keeps `db` from writing now, or null (also for a handle nobody tracks). */
export function storageProblemOf(db: Db): Error | null {
  return trackers.get(db)?.problem() ?? null;
}
