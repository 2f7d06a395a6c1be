import { sql } from 'kysely';
import { type CountedApiKey, findApiKeyByHashCounting, type RequestCounters } from './api-key-repository.ts';
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
 * A request of an API key counted in its two windows: its key's count after this hit, and its
 * organisation's, or null when the key's own limit refused the request and the organisation's window
 * did not count it.
 */
export interface RequestCounts {
  key: number;
  organisation: number | null;
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
  /**
   * One request of an API key in the window ending at `windowEnd`: one hit on the key's counter and,
   * when the key's new count is at most `keyLimit`, one on its organisation's (whose limit is
   * `organisationLimit`). PostgreSQL does both in one statement; memory one after the other
   * (countRequestInTurn); a SQLite file in batches of hits taken ahead (sqlite-rate-limits.ts).
   */
  countRequest(
    key: RateLimitCounter,
    keyLimit: number,
    organisation: RateLimitCounter,
    organisationLimit: number,
    windowEnd: number,
  ): Promise<RequestCounts>;
  /** Lets go of what the store holds open (a file), for stores that hold one. */
  close?(): void;
  /**
   * For a store that is a table of the application's own database (PostgreSQL): finds the API key
   * with this hash (as findApiKeyByHash) and, when it is unrevoked, counts the request as countRequest
   * does (`counters`: the key's counter is its prefix and the key's id, in the key's organisation) in
   * the same statement: one round trip for what every authenticated request asks. Stores elsewhere (a
   * file, memory) leave it out; the caller then looks the key up and calls countRequest.
   */
  findKeyAndCount?(
    keyHash: string,
    counters: RequestCounters,
    windowEnd: number,
  ): Promise<CountedApiKey | undefined>;
}

/** countRequest for a store whose increments are each one step in process (memory, a SQLite file). */
export async function countRequestInTurn(
  store: Pick<RateLimitStore, 'increment'>,
  key: RateLimitCounter,
  keyLimit: number,
  organisation: RateLimitCounter,
  windowEnd: number,
): Promise<RequestCounts> {
  const keyCount = await store.increment(key, windowEnd);
  return {
    key: keyCount,
    organisation: keyCount <= keyLimit ? await store.increment(organisation, windowEnd) : null,
  };
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

  async countRequest(
    key: RateLimitCounter,
    keyLimit: number,
    organisation: RateLimitCounter,
    _organisationLimit: number,
    windowEnd: number,
  ): Promise<RequestCounts> {
    await this.#enter(windowEnd);
    // Two upserts of two rows in one statement; the second reads the first's new count.
    const { rows } = await sql<{ key_count: number; organisation_count: number | null }>`
      WITH k AS (
        INSERT INTO rate_limit_counters (organisation_id, key, window_end, count)
        VALUES (${key.organisationId}::text, ${key.name}::text, ${windowEnd}::bigint, 1)
        ON CONFLICT (organisation_id, key, window_end)
        DO UPDATE SET count = rate_limit_counters.count + 1
        RETURNING count
      ),
      o AS (
        INSERT INTO rate_limit_counters (organisation_id, key, window_end, count)
        SELECT ${organisation.organisationId}::text, ${organisation.name}::text, ${windowEnd}::bigint, 1 FROM k
        WHERE k.count <= ${keyLimit}::integer
        ON CONFLICT (organisation_id, key, window_end)
        DO UPDATE SET count = rate_limit_counters.count + 1
        RETURNING count
      )
      SELECT (SELECT k.count FROM k) AS key_count, (SELECT o.count FROM o) AS organisation_count`.execute(
      this.#db,
    );
    const row = rows[0]!;
    return { key: row.key_count, organisation: row.organisation_count };
  }

  async findKeyAndCount(
    keyHash: string,
    counters: RequestCounters,
    windowEnd: number,
  ): Promise<CountedApiKey | undefined> {
    await this.#enter(windowEnd);
    return findApiKeyByHashCounting(this.#db, keyHash, counters, windowEnd);
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
