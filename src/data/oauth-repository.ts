import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { OauthConnectorsTable, OauthRecordsTable } from './tables.ts';

/**
 * What the OAuth authorization server stores (migration 0025): its records, keyed by a hash of their
 * id, and the connectors (grants) owners and admins made.
 */
export type OauthRecordRow = OauthRecordsTable;
export type OauthConnectorRow = OauthConnectorsTable;

/** Writes a record, replacing one of the same kind and id. */
export async function upsertRecord(db: Db, row: OauthRecordRow): Promise<void> {
  await db
    .insertInto('oauth_records')
    .values(row)
    .onConflict((c) =>
      c.columns(['kind', 'id_hash']).doUpdateSet({
        organisation_id: row.organisation_id,
        grant_id: row.grant_id,
        uid: row.uid,
        client_id: row.client_id,
        payload: row.payload,
        expires_at: row.expires_at,
        consumed_at: row.consumed_at,
      }),
    )
    .execute();
}

/** Writes a record unless one of its kind and id exists (the first of two racing writers wins). */
export async function insertRecordIfAbsent(db: Db, row: OauthRecordRow): Promise<void> {
  await db
    .insertInto('oauth_records')
    .values(row)
    .onConflict((c) => c.columns(['kind', 'id_hash']).doNothing())
    .execute();
}

export function findRecord(db: Db, kind: string, idHash: string): Promise<OauthRecordRow | undefined> {
  return db
    .selectFrom('oauth_records')
    .selectAll()
    .where('kind', '=', kind)
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
}

export function findRecordByUid(db: Db, kind: string, uid: string): Promise<OauthRecordRow | undefined> {
  return db
    .selectFrom('oauth_records')
    .selectAll()
    .where('kind', '=', kind)
    .where('uid', '=', uid)
    .executeTakeFirst();
}

/** Marks a record spent; whether this call spent it (false: spent already, or gone). */
export async function consumeRecord(db: Db, kind: string, idHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('oauth_records')
    .set({ consumed_at: now })
    .where('kind', '=', kind)
    .where('id_hash', '=', idHash)
    // Spent when first spent: a token exchanged again within its grace does not extend it.
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteRecord(db: Db, kind: string, idHash: string): Promise<void> {
  await db.deleteFrom('oauth_records').where('kind', '=', kind).where('id_hash', '=', idHash).execute();
}

/** Every record of a grant (its codes and tokens, the grant itself): revocation. */
export async function deleteRecordsOfGrant(db: Db, grantId: string): Promise<void> {
  await db.deleteFrom('oauth_records').where('grant_id', '=', grantId).execute();
}

/**
 * Records past their expiry: they are never read again. Not registered clients: their expiry is when
 * they may be removed if unused (removeUnusedClients), and they are read until then.
 */
export async function deleteExpiredRecords(db: Db, now: number): Promise<void> {
  await db.deleteFrom('oauth_records').where('expires_at', '<', now).where('kind', '<>', 'Client').execute();
}

/**
 * The kinds of record that show a client in use: a sign-in under way (its consent page), a code, a
 * grant, a token. Not its registration access token, which lasts as long as the client.
 */
const CLIENT_IN_USE_KINDS = ['Interaction', 'AuthorizationCode', 'Grant', 'AccessToken', 'RefreshToken'];

/** The unexpired records that show the registered client of the row `c` in use. */
function inUseOf(db: Db, now: number) {
  return db
    .selectFrom('oauth_records as r')
    .select('r.kind')
    .where('r.client_id', '=', sql.ref<string>('c.client_id'))
    .where('r.kind', 'in', CLIENT_IN_USE_KINDS)
    .where((eb) => eb.or([eb('r.expires_at', 'is', null), eb('r.expires_at', '>', now)]));
}

/**
 * Deletes the registered clients whose removal time has come and that nothing shows in use (checked
 * in the same statement, so a client given consent just now stays), and the registration access
 * tokens of clients no longer registered.
 */
export async function removeUnusedClients(db: Db, now: number): Promise<void> {
  await db
    .deleteFrom('oauth_records as c')
    .where('c.kind', '=', 'Client')
    .where('c.expires_at', '<=', now)
    .where(({ not, exists }) => not(exists(inUseOf(db, now))))
    .execute();
  await db
    .deleteFrom('oauth_records as t')
    .where('t.kind', '=', 'RegistrationAccessToken')
    .where(({ not, exists }) =>
      not(
        exists(
          db
            .selectFrom('oauth_records as c')
            .select('c.kind')
            .where('c.kind', '=', 'Client')
            .where('c.client_id', '=', sql.ref<string>('t.client_id')),
        ),
      ),
    )
    .execute();
}

/**
 * Moves to `until` the removal time of every registered client in use, and of any registered before
 * clients had one.
 */
export async function keepClientsInUse(db: Db, now: number, until: number): Promise<void> {
  await db
    .updateTable('oauth_records as c')
    .set({ expires_at: until })
    .where('c.kind', '=', 'Client')
    .where((eb) => eb.or([eb('c.expires_at', 'is', null), eb.exists(inUseOf(db, now))]))
    .execute();
}

export async function insertConnector(db: Db, row: OauthConnectorRow): Promise<void> {
  await db.insertInto('oauth_connectors').values(row).execute();
}

export async function deleteConnector(db: Db, organisationId: string, id: string): Promise<void> {
  await db
    .deleteFrom('oauth_connectors')
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .execute();
}

export type ConnectorWithOrganisation = OauthConnectorRow & {
  /** When the account that granted it was disabled, or null. */
  granted_by_disabled_at: number | null;
  organisation_slug: string;
  currency: string;
  locale: string;
  booking_reference_prefix: string;
  catalogue_version: number;
  bookings_version: number;
};

/** The connector and its organisation, as a request's principal needs them (api-key-repository's lookup). */
export function findConnector(
  db: Db,
  organisationId: string,
  id: string,
): Promise<ConnectorWithOrganisation | undefined> {
  return db
    .selectFrom('oauth_connectors')
    .innerJoin('organisations', 'organisations.id', 'oauth_connectors.organisation_id')
    .innerJoin('users', (join) =>
      join
        .onRef('users.organisation_id', '=', 'oauth_connectors.organisation_id')
        .onRef('users.id', '=', 'oauth_connectors.granted_by'),
    )
    .selectAll('oauth_connectors')
    .select([
      'users.disabled_at as granted_by_disabled_at',
      'organisations.slug as organisation_slug',
      'organisations.currency',
      'organisations.locale',
      'organisations.booking_reference_prefix',
      'organisations.catalogue_version',
      'organisations.bookings_version',
    ])
    .where('oauth_connectors.organisation_id', '=', organisationId)
    .where('oauth_connectors.id', '=', id)
    .executeTakeFirst();
}

export function listConnectors(db: Db, organisationId: string): Promise<OauthConnectorRow[]> {
  return db
    .selectFrom('oauth_connectors')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .orderBy('created_at', 'desc')
    .execute();
}

export async function revokeConnector(
  db: Db,
  organisationId: string,
  id: string,
  now: number,
): Promise<void> {
  await db
    .updateTable('oauth_connectors')
    .set({ revoked_at: now })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function recordConnectorUse(
  db: Db,
  organisationId: string,
  id: string,
  now: number,
): Promise<void> {
  await db
    .updateTable('oauth_connectors')
    .set({ last_used_at: now })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .execute();
}

/** The ids of the connectors `userId` granted that are not revoked yet. */
export async function liveConnectorsGrantedBy(
  db: Db,
  organisationId: string,
  userId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('oauth_connectors')
    .select('id')
    .where('organisation_id', '=', organisationId)
    .where('granted_by', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
  return rows.map((row) => row.id);
}

/** revokeConnector by grant id alone: the authorization server revokes a grant without its organisation. */
export async function revokeConnectorById(db: Db, id: string, now: number): Promise<void> {
  await db
    .updateTable('oauth_connectors')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}
