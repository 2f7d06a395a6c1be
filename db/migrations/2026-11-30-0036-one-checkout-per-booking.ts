import type { Kysely } from 'kysely';

/**
 * One checkout per booking, enforced: a checkout is opened only with its booking (booking-service.ts,
 * in the booking's own transaction); a move, a waitlist claim or a payment retried keeps it, and no
 * path opens a second. A cancellation refunds the booking's one paid checkout (booking-changes.ts
 * refundDeposit), so a second, were one ever written, would be paid and never refunded: the database
 * now refuses it. A database that somehow holds two for one booking stops here, naming them, for a
 * person to settle (refund the extra payment by hand, then remove its row).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  const doubled = await db
    .selectFrom('checkout_sessions')
    .select(['organisation_id', 'booking_id'])
    .groupBy(['organisation_id', 'booking_id'])
    .having((eb) => eb.fn.countAll(), '>', 1)
    .execute();
  if (doubled.length > 0) {
    const bookings = doubled.map((row) => String(row.booking_id)).join(', ');
    throw new Error(
      `These bookings have more than one checkout, which a cancellation would not all refund: ${bookings}. Settle the extra ones by hand (refund at the provider, remove the row), then migrate again.`,
    );
  }
  await db.schema
    .createIndex('checkout_sessions_one_per_booking')
    .on('checkout_sessions')
    .columns(['organisation_id', 'booking_id'])
    .unique()
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
