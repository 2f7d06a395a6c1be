import type { Kysely } from 'kysely';

/**
 * Booking pages: the capability behind `GET /p/manage/{token}`, one per booking. The token (32 random
 * bytes, base64url: 256 bits) is what every link to the customer carries (booking_page_url, messages);
 * whoever holds it may see, pay, set up a card for, cancel or reschedule that one booking and nothing
 * else. Kept in its own table so that bookings made before this version simply have no page until one
 * is issued, and so that a page can be re-issued without touching the booking.
 *
 * Organisation data like the rest: the key contains organisation_id (see 0004) and the booking is a
 * composite foreign key inside the organisation.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('booking_pages')
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('booking_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('booking_pages_pk', ['booking_id', 'organisation_id'])
    // Looked up by the token alone; organisation_id is in every key of organisation data (see 0004).
    .addUniqueConstraint('booking_pages_token', ['token', 'organisation_id'])
    .addForeignKeyConstraint('booking_pages_booking', ['organisation_id', 'booking_id'], 'bookings', [
      'organisation_id',
      'id',
    ])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
