import { type CompiledQuery, sql } from 'kysely';
import { UnchangedRows } from './change-mark.ts';
import type { Db } from './database.ts';
import type { ApiKeysTable } from './tables.ts';

export type ApiKeyRow = ApiKeysTable;

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

/** Inserts the key unless one with its id is there already; whether it was inserted. */
export async function insertApiKeyOnce(db: Db, row: ApiKeyRow): Promise<boolean> {
  const result = await db
    .insertInto('api_keys')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export type ApiKeyWithOrganisation = ApiKeyRow & {
  organisation_slug: string;
  currency: string;
  locale: string;
  booking_reference_prefix: string;
  catalogue_version: number;
  bookings_version: number;
};

/**
 * The key with this hash and the organisation it belongs to, revoked or not (the caller decides what
 * revocation means). One indexed lookup gives a request everything it needs about its caller.
 *
 * This runs on every request, and building and compiling it with Kysely costs twice what SQLite
 * spends answering it, so it is compiled once per database handle and re-run with each hash.
 */
export function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyWithOrganisation | undefined> {
  return unchangedKeys.get(db, keyHash, () => readApiKeyByHash(db, keyHash));
}

/**
 * Every request looks its key up, and between two writes the answer is the same: on SQLite the row
 * is kept until anything commits (change-mark.ts), which takes a request's one query away while the
 * database is only read (issue 47). A revoked key or a new catalogue version moves the mark at once,
 * in this process and in any other on the same file.
 */
const unchangedKeys = new UnchangedRows<string, ApiKeyWithOrganisation>();

async function readApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyWithOrganisation | undefined> {
  let compiled = compiledKeyLookups.get(db);
  if (!compiled) {
    compiled = keyLookup(db, '').compile();
    compiledKeyLookups.set(db, compiled);
  }
  const result = await db.executeQuery<ApiKeyWithOrganisation>({ ...compiled, parameters: [keyHash] });
  return result.rows[0];
}

const compiledKeyLookups = new WeakMap<Db, CompiledQuery<ApiKeyWithOrganisation>>();

/** The lookup's only parameter is the hash, so its compiled form can take any hash in its place. */
function keyLookup(db: Db, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('organisations', 'organisations.id', 'api_keys.organisation_id')
    .selectAll('api_keys')
    .select([
      'organisations.slug as organisation_slug',
      'organisations.currency',
      'organisations.locale',
      'organisations.booking_reference_prefix',
      'organisations.catalogue_version',
      'organisations.bookings_version',
    ])
    .where('api_keys.key_hash', '=', keyHash);
}

/**
 * findApiKeyByHash's row, and the counts after this hit of its key's counter (null: not counted,
 * revoked) and of its organisation's (null: not counted, the key's own limit refused the request).
 */
export type CountedApiKey = ApiKeyWithOrganisation & {
  window_count: number | null;
  organisation_window_count: number | null;
};

/** What findApiKeyByHashCounting counts a found key's request in (src/app/request-budgets.ts). */
export interface RequestCounters {
  /** The key's counter is this and the key's id. */
  keyPrefix: string;
  /** The name of the organisation's counter of requests, across its keys. */
  organisation: string;
  /** The limit of a key without one of its own: up to its limit, a request counts for the organisation. */
  defaultKeyLimit: number;
}

/**
 * findApiKeyByHash and, for a key found unrevoked, one hit on its rate-limit counter
 * (`counters.keyPrefix` + the key's id, in the key's organisation) and, when that count is within the
 * key's limit, one on its organisation's (`counters.organisation`), in the window ending at
 * `windowEnd`, in one statement: PostgreSQL only, where the counters are a table of the same database
 * (rate-limit-counters.ts). Every authenticated request asks all three, so this is one round trip
 * instead of three, and the upserts are the store's own (atomic however many instances count the key
 * and its organisation at once). Compiled once per database handle, as the lookup is; its parameters
 * are the hash, the key's prefix, the window's end, the organisation's counter, the window's end again
 * and the default key limit, in that order.
 */
export async function findApiKeyByHashCounting(
  db: Db,
  keyHash: string,
  counters: RequestCounters,
  windowEnd: number,
): Promise<CountedApiKey | undefined> {
  let compiled = compiledCountingLookups.get(db);
  if (!compiled) {
    // The second upsert reads the first's new count (a data-modifying CTE's RETURNING): one statement,
    // two rows, always in the order key then organisation, so concurrent statements cannot deadlock.
    compiled = sql<CountedApiKey>`
      WITH k AS (${keyLookup(db, '')}),
      c AS (
        INSERT INTO rate_limit_counters (organisation_id, key, window_end, count)
        SELECT k.organisation_id, ${''}::text || k.id, ${0}::bigint, 1 FROM k WHERE k.revoked_at IS NULL
        ON CONFLICT (organisation_id, key, window_end)
        DO UPDATE SET count = rate_limit_counters.count + 1
        RETURNING count
      ),
      o AS (
        INSERT INTO rate_limit_counters (organisation_id, key, window_end, count)
        SELECT k.organisation_id, ${''}::text, ${0}::bigint, 1 FROM k, c
        WHERE c.count <= COALESCE(k.rate_limit_per_minute, ${0}::integer)
        ON CONFLICT (organisation_id, key, window_end)
        DO UPDATE SET count = rate_limit_counters.count + 1
        RETURNING count
      )
      SELECT k.*, (SELECT c.count FROM c) AS window_count, (SELECT o.count FROM o) AS organisation_window_count
      FROM k`.compile(db);
    compiledCountingLookups.set(db, compiled);
  }
  const result = await db.executeQuery<CountedApiKey>({
    ...compiled,
    parameters: [
      keyHash,
      counters.keyPrefix,
      windowEnd,
      counters.organisation,
      windowEnd,
      counters.defaultKeyLimit,
    ],
  });
  return result.rows[0];
}

const compiledCountingLookups = new WeakMap<Db, CompiledQuery<CountedApiKey>>();

export async function listApiKeys(db: Db, organisationId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Revokes a key that is not yet revoked; returns whether a row changed. */
export async function revokeApiKey(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function findApiKeyById(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function recordApiKeyUse(db: Db, id: string, now: number): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', id).execute();
}
