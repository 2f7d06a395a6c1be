import type { CompiledQuery } from 'kysely';
import type { Db } from './database.ts';
import type { ApiKeysTable } from './tables.ts';

export type ApiKeyRow = ApiKeysTable;

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export type ApiKeyWithOrganisation = ApiKeyRow & {
  organisation_slug: string;
  currency: string;
  locale: string;
  booking_reference_prefix: string;
  catalogue_version: number;
};

/**
 * The key with this hash and the organisation it belongs to, revoked or not (the caller decides what
 * revocation means). One indexed lookup gives a request everything it needs about its caller.
 *
 * This runs on every request, and building and compiling it with Kysely costs twice what SQLite
 * spends answering it, so it is compiled once per database handle and re-run with each hash.
 */
export async function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyWithOrganisation | undefined> {
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
    ])
    .where('api_keys.key_hash', '=', keyHash);
}

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
