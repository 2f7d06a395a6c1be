import type { Kysely } from 'kysely';

/**
 * An organisation's messages by status, newest last: the console's Messages page reads the open ones
 * and the latest done ones. By organisation and time alone (messages_organisation) each view read
 * every message the organisation ever had.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createIndex('messages_organisation_status')
    .on('messages')
    .columns(['organisation_id', 'status', 'created_at'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
