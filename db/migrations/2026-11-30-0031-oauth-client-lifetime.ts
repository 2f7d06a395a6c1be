import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * Registered OAuth clients end (docs/security.md): `oauth_records.client_id` names the client a record
 * belongs to (a registered client's own row, and its sign-ins, codes, grants and tokens), so the
 * periodic sweep can tell a client nobody uses from one with a live grant. Filled here from the JSON
 * the rows already hold; a client's own row gets its removal time (expires_at) from the first sweep.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('oauth_records').addColumn('client_id', 'text').execute();
  await db.schema.createIndex('oauth_records_client').on('oauth_records').column('client_id').execute();
  if (isPostgres(db)) {
    await sql`update oauth_records set client_id = payload::jsonb ->> 'client_id' where kind = 'Client'`.execute(
      db,
    );
    await sql`update oauth_records
      set client_id = coalesce(payload::jsonb ->> 'clientId', payload::jsonb -> 'params' ->> 'client_id')
      where kind <> 'Client'`.execute(db);
  } else {
    await sql`update oauth_records set client_id = json_extract(payload, '$.client_id') where kind = 'Client'`.execute(
      db,
    );
    await sql`update oauth_records
      set client_id = coalesce(json_extract(payload, '$.clientId'), json_extract(payload, '$.params.client_id'))
      where kind <> 'Client'`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
