import { type CountedApiKey, findApiKeyByHashCounting } from './api-key-repository.ts';
import type { Db } from './db.ts';

/** The organisation of counts made before the caller is known (failed authentications). */
export const NO_ORGANISATION = '';

/**
 * One counter: the organisation it belongs to (so shared counters can be distributed with the rest of
 * the organisation's data) and what it counts within it.
 */
export interface RateLimitCounter {
  organisationId: string;
  name: string;
}

/**
 * Where counters live, shared by every process on one database so that a key's window counts its
 * requests to each of them: PostgreSQL's unlogged table (below), a file beside a SQLite database
 * (sqlite-rate-limits.ts), or process memory for an in-memory database (src/app/rate-limiter.ts).
 */
export interface RateLimitStore {
  /** Adds one hit to `counter` in the window ending at `windowEnd` and returns the new count. */
  increment(counter: RateLimitCounter, windowEnd: number): Promise<number>;
  /** The count of `counter` in the window ending at `windowEnd`, without adding a hit. */
  get(counter: RateLimitCounter, windowEnd: number): Promise<number>;
  /**
   * Adds one hit to `counter` in the window ending at `windowEnd` only if its count is below `limit`,
   * in one step however many processes count it at once, and returns the new count; null when the
   * count had reached `limit` (nothing added). What reserves a try before the work it limits is done.
   */
  incrementBelow(counter: RateLimitCounter, limit: number, windowEnd: number): Promise<number | null>;
  /** Takes back one hit of `counter` in the window ending at `windowEnd` (a reserved try not spent). */
  decrement(counter: RateLimitCounter, windowEnd: number): Promise<void>;
  /** Lets go of what the store holds open (a file), for stores that hold one. */
  close?(): void;
  /**
   * For a store that is a table of the application's own database (PostgreSQL): finds the API key
   * with this hash (as findApiKeyByHash) and, when it is unrevoked, adds one hit to its counter
   * (`counterPrefix` + the key's id, in its organisation) in the same statement: one round trip for
   * what every authenticated request asks. Stores elsewhere (a file, memory) leave it out; the caller
   * then looks the key up and calls increment.
   */
  findKeyAndCount?(
    keyHash: string,
    counterPrefix: string,
    windowEnd: number,
  ): Promise<CountedApiKey | undefined>;
}

/** How long a passed window's counters are kept before the next new window deletes them. */
const KEEP_PASSED_WINDOWS_MS = 60_000;

/**
 * Rate-limit windows in PostgreSQL's unlogged `rate_limit_counters`, shared by every instance: one
 * upsert per request adds the hit and returns the window's count in one round trip, atomically
 * however many instances count the same key at once; for an API key's requests, the upsert is part of
 * the key's lookup (findKeyAndCount). The first hit of a new window (as this process sees it) deletes
 * the windows that have passed.
 */
export class PostgresRateLimitStore implements RateLimitStore {
  readonly #db: Db;
  #currentWindowEnd = 0;

  constructor(db: Db) {
    this.#db = db;
  }

  async increment(counter: RateLimitCounter, windowEnd: number): Promise<number> {
    await this.#enter(windowEnd);
    const row = await this.#db
      .insertInto('rate_limit_counters')
      .values({ organisation_id: counter.organisationId, key: counter.name, window_end: windowEnd, count: 1 })
      .onConflict((oc) =>
        oc
          .columns(['organisation_id', 'key', 'window_end'])
          .doUpdateSet((eb) => ({ count: eb('rate_limit_counters.count', '+', 1) })),
      )
      .returning('count')
      .executeTakeFirstOrThrow();
    return row.count;
  }

  async incrementBelow(counter: RateLimitCounter, limit: number, windowEnd: number): Promise<number | null> {
    if (limit < 1) return null;
    // No #enter: its purge keeps one window length of the windows it is given, and these may be longer
    // than a minute (sign-in's 15). The next request's first hit of a minute deletes them once passed.
    // The upsert's update is taken under the row's lock and its condition read on the newest count,
    // so concurrent reservations on every instance stop at `limit` together.
    const row = await this.#db
      .insertInto('rate_limit_counters')
      .values({ organisation_id: counter.organisationId, key: counter.name, window_end: windowEnd, count: 1 })
      .onConflict((oc) =>
        oc
          .columns(['organisation_id', 'key', 'window_end'])
          .doUpdateSet((eb) => ({ count: eb('rate_limit_counters.count', '+', 1) }))
          .where('rate_limit_counters.count', '<', limit),
      )
      .returning('count')
      .executeTakeFirst();
    return row?.count ?? null;
  }

  async decrement(counter: RateLimitCounter, windowEnd: number): Promise<void> {
    await this.#db
      .updateTable('rate_limit_counters')
      .set((eb) => ({ count: eb('count', '-', 1) }))
      .where('organisation_id', '=', counter.organisationId)
      .where('key', '=', counter.name)
      .where('window_end', '=', windowEnd)
      .where('count', '>', 0)
      .execute();
  }

  async findKeyAndCount(
    keyHash: string,
    counterPrefix: string,
    windowEnd: number,
  ): Promise<CountedApiKey | undefined> {
    await this.#enter(windowEnd);
    return findApiKeyByHashCounting(this.#db, keyHash, counterPrefix, windowEnd);
  }

  /** At the first hit of a new window, the windows that have passed are deleted. */
  async #enter(windowEnd: number): Promise<void> {
    if (windowEnd <= this.#currentWindowEnd) return;
    this.#currentWindowEnd = windowEnd;
    await this.#db
      .deleteFrom('rate_limit_counters')
      .where('window_end', '<', windowEnd - KEEP_PASSED_WINDOWS_MS)
      .execute();
  }

  async get(counter: RateLimitCounter, windowEnd: number): Promise<number> {
    const row = await this.#db
      .selectFrom('rate_limit_counters')
      .select('count')
      .where('organisation_id', '=', counter.organisationId)
      .where('key', '=', counter.name)
      .where('window_end', '=', windowEnd)
      .executeTakeFirst();
    return row?.count ?? 0;
  }
}
