import type { Kysely } from 'kysely';

/**
 * A client's waiting entries, found by the client: every booking reads them (one that fits an entry
 * ends it, design.md 9.4) and joining checks them for a duplicate. By location alone
 * (waitlist_entries_location) each read went through every entry waiting at the location.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createIndex('waitlist_entries_client')
    .on('waitlist_entries')
    .columns(['organisation_id', 'client_id', 'status', 'location_id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
