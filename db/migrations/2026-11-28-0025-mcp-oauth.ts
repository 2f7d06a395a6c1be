import { type Kysely, sql } from 'kysely';

/**
 * OAuth sign-in for hosted MCP connectors (design.md 9.3).
 *
 * - `oauth_records`: what the authorization server (oidc-provider) keeps between requests: its
 *   interactions and sessions, registered clients, authorization codes, grants, access and refresh
 *   tokens. Keyed by a SHA-256 of the record's id, never the id itself: an access or refresh token's
 *   id is the token, so a copy of the database holds no usable token (as api_keys holds no key).
 *   Read before any organisation is known (a token is presented, a client id is looked up), so it is a
 *   reference table like api_keys; organisation_id is the organisation a grant's records belong to,
 *   '' for records that belong to none yet (a sign-in in progress, a registered client).
 * - `oauth_connectors`: one row per grant an owner or admin made on the consent page: which client
 *   acts for which organisation with which scope. The console lists and revokes them; a revoked
 *   connector's tokens are deleted and refused from then on.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('oauth_records')
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`length(kind) between 1 and 64`))
    .addColumn('id_hash', 'text', (c) => c.notNull().check(sql`length(id_hash) = 64`))
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('uid', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('consumed_at', 'bigint')
    .addPrimaryKeyConstraint('oauth_records_pk', ['kind', 'id_hash'])
    .execute();
  await db.schema.createIndex('oauth_records_grant').on('oauth_records').column('grant_id').execute();
  await db.schema.createIndex('oauth_records_uid').on('oauth_records').columns(['kind', 'uid']).execute();
  await db.schema.createIndex('oauth_records_expiry').on('oauth_records').column('expires_at').execute();

  await db.schema
    .createTable('oauth_connectors')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('client_id', 'text', (c) => c.notNull().check(sql`length(client_id) between 1 and 2000`))
    .addColumn('client_name', 'text', (c) => c.check(sql`client_name is null or length(client_name) <= 200`))
    .addColumn('scope', 'text', (c) => c.notNull().check(sql`scope in ('bookings:read', 'bookings:write')`))
    .addColumn('granted_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addPrimaryKeyConstraint('oauth_connectors_pk', ['id', 'organisation_id'])
    .execute();
  await db.schema
    .createIndex('oauth_connectors_organisation')
    .on('oauth_connectors')
    .columns(['organisation_id', 'created_at'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
