import type { Db } from '../data/database.ts';

/** Entries per database handle, oldest out: superseded versions are never asked for again. */
const MAX_ENTRIES = 2_000;

/**
 * One cache per database handle, found through the handle's adapter, which every transaction of the
 * handle shares (Kysely makes a transaction's executor with the handle's adapter): a booking reads
 * inside its transaction, and must find what availability read through the handle itself.
 */
const caches = new WeakMap<object, Map<string, { value: unknown }>>();

/**
 * A read of catalogue tables only (locations, services, staff, their hours, time off, closures),
 * reused by every caller that saw the same catalogue_version of the organisation.
 *
 * `catalogueVersion` is the organisation's catalogue_version as the caller read it before anything
 * else it did (a request's key lookup reads it: Principal.organisation); undefined when the caller
 * knows none, and then `read` goes to the database.
 *
 * Database triggers bump catalogue_version in the transaction of every change to those tables,
 * whoever writes (another instance, `booking import`), so a version names one state of the catalogue
 * or a later one: a read made after the version was read is at least that new, and a change
 * committed before a caller read its version gives that caller a version no entry has yet. The same
 * rule as the listing and availability caches. What `read` returns is shared by every caller served
 * from the entry: never modify it. Only what a read returns is kept: a read that fails fails its own
 * caller alone, and callers that miss at once each read.
 *
 * `read` may run inside a write transaction, whose reads of the catalogue are of committed rows:
 * nothing in a serving process writes the catalogue in a transaction a booking shares (the catalogue
 * changes only through `booking import`, a transaction of its own).
 */
export async function readCatalogue<T>(
  db: Db,
  organisationId: string,
  catalogueVersion: number | undefined,
  key: string,
  read: () => Promise<T>,
): Promise<T> {
  if (catalogueVersion === undefined) return read();
  const handle = db.getExecutor().adapter;
  let cache = caches.get(handle);
  if (!cache) {
    cache = new Map();
    caches.set(handle, cache);
  }
  const versioned = `${organisationId}|${catalogueVersion}|${key}`;
  const kept = cache.get(versioned);
  if (kept) return kept.value as T;
  const value = await read();
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(versioned, { value });
  return value;
}
