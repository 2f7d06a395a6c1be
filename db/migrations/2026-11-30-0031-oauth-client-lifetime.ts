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
    // jsonb refuses some JSON that JSON.stringify writes: a NUL character (\u0000, which anyone can put
    // in a registered client's name or a sign-in's state) and a lone surrogate (\ud800). Such escapes
    // are written only as \u, so a payload without one is read here, and the few with one below.
    await sql`update oauth_records set client_id = payload::jsonb ->> 'client_id'
      where kind = 'Client' and strpos(payload, ${UNICODE_ESCAPE}) = 0`.execute(db);
    await sql`update oauth_records
      set client_id = coalesce(payload::jsonb ->> 'clientId', payload::jsonb -> 'params' ->> 'client_id')
      where kind <> 'Client' and strpos(payload, ${UNICODE_ESCAPE}) = 0`.execute(db);
    const escaped = await db
      .selectFrom('oauth_records')
      .select(['kind', 'id_hash', 'payload'])
      .where(sql<boolean>`strpos(payload, ${UNICODE_ESCAPE}) > 0`)
      .execute();
    for (const row of escaped) {
      const clientId = clientOfPayload(row.kind, JSON.parse(row.payload));
      if (clientId === null) continue;
      await db
        .updateTable('oauth_records')
        .set({ client_id: clientId })
        .where('kind', '=', row.kind)
        .where('id_hash', '=', row.id_hash)
        .execute();
    }
  } else {
    await sql`update oauth_records set client_id = json_extract(payload, '$.client_id') where kind = 'Client'`.execute(
      db,
    );
    await sql`update oauth_records
      set client_id = coalesce(json_extract(payload, '$.clientId'), json_extract(payload, '$.params.client_id'))
      where kind <> 'Client'`.execute(db);
  }
}

const UNICODE_ESCAPE = '\\u';

/** The client a record names, as the SQL above reads it (frozen here, not today's oauth-records.ts). */
function clientOfPayload(kind: string, payload: unknown): string | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const record = payload as Record<string, unknown>;
  const params = record.params as Record<string, unknown> | undefined;
  const found = kind === 'Client' ? record.client_id : (record.clientId ?? params?.client_id);
  return typeof found === 'string' ? found : null;
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
