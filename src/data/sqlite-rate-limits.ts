import { rmSync } from 'node:fs';
import { privateDatabaseFile } from './private-files.ts';
import type { RateLimitCounter, RateLimitStore, RequestCounts } from './rate-limit-counters.ts';
import { type SqliteConnection, SqliteDatabase, type SqliteStatement } from './sqlite-driver.ts';

/** How long a passed window's counters are kept before the next new window deletes them. */
const KEEP_PASSED_WINDOWS_MS = 60_000;

/** The counters' file beside a SQLite database: `booking.sqlite` counts in `booking.sqlite-limits`. */
export function rateLimitFileOf(databaseFile: string): string {
  return `${databaseFile}-limits`;
}

/**
 * Rate-limit windows shared by every process on one SQLite database, as PostgreSQL's unlogged table
 * shares them between instances: two `booking serve` on one file allow a key its limit once, not once
 * each.
 *
 * The counters live in a file of their own beside the database, not in it: every request counts, and
 * in the database each count would be a write transaction queued behind bookings for the one write
 * lock, synced to disk (synchronous = FULL) for data worth nothing after a minute. Here a count is one
 * upsert in WAL mode without syncing (for a busy key, one upsert per batch: countRequest): it survives
 * a crash of the process, and a crash of the machine may lose (or, rarely, corrupt) the file, which is
 * then started afresh: at worst a minute forgiven.
 */
export class SqliteRateLimitStore implements RateLimitStore {
  readonly #sqlite: SqliteConnection;
  readonly #increment: SqliteStatement;
  readonly #incrementBelow: SqliteStatement;
  readonly #decrement: SqliteStatement;
  readonly #get: SqliteStatement;
  readonly #purge: SqliteStatement;
  #currentWindowEnd = 0;
  #purgeDue = false;
  /** This process's own counts of the current window, for when the file cannot be written. */
  readonly #alone = new Map<string, number>();
  /** The counts of the current window taken from the file and not yet handed out (countRequest). */
  readonly #held = new Map<string, { next: number; last: number }>();

  constructor(file: string) {
    this.#sqlite = openCounters(file);
    this.#increment = this.#sqlite.prepare(
      `INSERT INTO rate_limit_counters (organisation_id, key, window_end, count) VALUES (?, ?, ?, ?)
       ON CONFLICT (organisation_id, key, window_end) DO UPDATE SET count = count + ?
       RETURNING count`,
    );
    // The upsert's condition reads the count under the file's write lock: one process at a time.
    this.#incrementBelow = this.#sqlite.prepare(
      `INSERT INTO rate_limit_counters (organisation_id, key, window_end, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (organisation_id, key, window_end) DO UPDATE SET count = count + 1 WHERE count < ?
       RETURNING count`,
    );
    this.#decrement = this.#sqlite.prepare(
      `UPDATE rate_limit_counters SET count = count - 1
       WHERE organisation_id = ? AND key = ? AND window_end = ? AND count > 0`,
    );
    this.#get = this.#sqlite.prepare(
      'SELECT count FROM rate_limit_counters WHERE organisation_id = ? AND key = ? AND window_end = ?',
    );
    this.#purge = this.#sqlite.prepare('DELETE FROM rate_limit_counters WHERE window_end < ?');
  }

  /**
   * One more hit. Should the file refuse the write (a full disk), this process counts on alone for the
   * window rather than refuse every request: the limit then holds per process until the file takes
   * writes again.
   */
  async increment(counter: RateLimitCounter, windowEnd: number): Promise<number> {
    const ownCount = this.#countAlone(counter, windowEnd);
    try {
      return this.#addHits(counter, windowEnd);
    } catch {
      return ownCount;
    }
  }

  /**
   * As countRequestInTurn, but each counter's hits are taken from the file in batches (leaseSize):
   * one upsert adds a batch and this process hands its counts out one request at a time, so most
   * requests of a busy key write nothing (issue 47). The counts handed out are distinct across
   * processes, so no more than the limit are ever allowed; a batch a process has not used up when the
   * window ends is allowed to nobody (at most a 64th of a limit per other process).
   */
  async countRequest(
    key: RateLimitCounter,
    keyLimit: number,
    organisation: RateLimitCounter,
    organisationLimit: number,
    windowEnd: number,
  ): Promise<RequestCounts> {
    const ownKey = this.#countAlone(key, windowEnd);
    try {
      const keyCount = this.#nextCount(key, keyLimit, windowEnd);
      if (keyCount > keyLimit) return { key: keyCount, organisation: null };
      const organisationCount = this.#nextCount(organisation, organisationLimit, windowEnd);
      this.#countAlone(organisation, windowEnd);
      return { key: keyCount, organisation: organisationCount };
    } catch {
      return {
        key: ownKey,
        organisation: ownKey <= keyLimit ? this.#countAlone(organisation, windowEnd) : null,
      };
    }
  }

  /** The next count of `counter` this process holds, taking a new batch from the file when it has none. */
  #nextCount(counter: RateLimitCounter, limit: number, windowEnd: number): number {
    const at = this.#aloneKey(counter, windowEnd);
    const held = this.#held.get(at);
    if (held && held.next <= held.last) return held.next++;
    const size = leaseSize(limit);
    const last = this.#addHits(counter, windowEnd, size);
    const first = last - size + 1;
    this.#held.set(at, { next: first + 1, last });
    return first;
  }

  /** This process's own count of `counter` with one more hit; a new window starts them afresh. */
  #countAlone(counter: RateLimitCounter, windowEnd: number): number {
    if (windowEnd > this.#currentWindowEnd) {
      this.#currentWindowEnd = windowEnd;
      this.#alone.clear();
      this.#held.clear();
      this.#purgeDue = true;
    }
    const alone = this.#aloneKey(counter, windowEnd);
    const ownCount = (this.#alone.get(alone) ?? 0) + 1;
    this.#alone.set(alone, ownCount);
    return ownCount;
  }

  /**
   * `hits` more in the file, and the new count; the first of a window this process sees deletes the
   * windows long passed.
   */
  #addHits(counter: RateLimitCounter, windowEnd: number, hits = 1): number {
    if (this.#purgeDue) {
      this.#purge.run(windowEnd - KEEP_PASSED_WINDOWS_MS);
      this.#purgeDue = false;
    }
    const row = this.#increment.get(counter.organisationId, counter.name, windowEnd, hits, hits) as {
      count: number;
    };
    return row.count;
  }

  /** As increment, one hit only below `limit`; alone (the file refusing writes), this process's own count. */
  async incrementBelow(counter: RateLimitCounter, limit: number, windowEnd: number): Promise<number | null> {
    if (limit < 1) return null;
    const alone = this.#aloneKey(counter, windowEnd);
    const ownCount = this.#alone.get(alone) ?? 0;
    let count: number | null;
    try {
      const row = this.#incrementBelow.get(counter.organisationId, counter.name, windowEnd, limit) as
        | { count: number }
        | undefined;
      count = row?.count ?? null;
    } catch {
      count = ownCount < limit ? ownCount + 1 : null;
    }
    if (count !== null) this.#alone.set(alone, ownCount + 1);
    return count;
  }

  async decrement(counter: RateLimitCounter, windowEnd: number): Promise<void> {
    const alone = this.#aloneKey(counter, windowEnd);
    const ownCount = this.#alone.get(alone) ?? 0;
    if (ownCount > 1) this.#alone.set(alone, ownCount - 1);
    else this.#alone.delete(alone);
    try {
      this.#decrement.run(counter.organisationId, counter.name, windowEnd);
    } catch {
      // The file refuses writes: the hit stays counted there, as a failure would have been.
    }
  }

  /** The key of `counter` in this process's own counts (those of a passed window are not looked at). */
  #aloneKey(counter: RateLimitCounter, windowEnd: number): string {
    return `${windowEnd}\u0000${counter.organisationId}\u0000${counter.name}`;
  }

  async get(counter: RateLimitCounter, windowEnd: number): Promise<number> {
    const row = this.#get.get(counter.organisationId, counter.name, windowEnd) as
      | { count: number }
      | undefined;
    return row?.count ?? 0;
  }

  close(): void {
    this.#sqlite.close();
  }
}

function openCounters(file: string): SqliteConnection {
  try {
    return openCountersFile(file);
  } catch (error) {
    // Counters of the last minute are all this file holds: one that cannot be read is started afresh.
    if (!/^SQLITE_(CORRUPT|NOTADB)/.test((error as { code?: string }).code ?? '')) throw error;
    for (const part of [file, `${file}-wal`, `${file}-shm`]) rmSync(part, { force: true });
    return openCountersFile(file);
  }
}

function openCountersFile(file: string): SqliteConnection {
  privateDatabaseFile(file);
  const sqlite = new SqliteDatabase(file);
  try {
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = OFF');
    // Another process holds the write lock for one upsert at a time: microseconds.
    sqlite.pragma('busy_timeout = 1000');
    sqlite.exec(
      `CREATE TABLE IF NOT EXISTS rate_limit_counters (
         organisation_id TEXT NOT NULL,
         key TEXT NOT NULL,
         window_end INTEGER NOT NULL,
         count INTEGER NOT NULL,
         PRIMARY KEY (organisation_id, key, window_end)
       ) WITHOUT ROWID`,
    );
    return sqlite;
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

/**
 * How many hits of a counter one process takes from the file at once: a 64th of its limit, at least
 * one (a limit under 128 is counted hit by hit, exactly as before) and at most 64. The batch bounds
 * what a busy process can hold back from another process on the same file in a window.
 */
export function leaseSize(limit: number): number {
  return Math.max(1, Math.min(64, Math.floor(limit / 64)));
}
