import type { Kysely } from 'kysely';

/**
 * The SHA-256 of a busy calendar's last good copy: a server that sends neither ETag nor Last-Modified
 * answers the whole file every 5 minutes, and the same file is not read (on the event loop, a second
 * for a few MB) again while the blocks it gave still cover the window.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('staff_busy_calendars').addColumn('copy_hash', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
