import type { Kysely } from 'kysely';

/**
 * A pending hold ends at its appointment's start at the latest (holdEnd and heldUntil in
 * src/domain/booking/state-machine.ts). Holds stored by earlier versions could end later: an import's
 * hold minutes counted from the import, a hold moved to an earlier start, hold minutes longer than the
 * minimum notice. Lazy expiry already treats such a hold as lapsed from its start, but the sweeper
 * finds holds by hold_expires_at, so it wrote them expired (and sent booking.expired) only when the old
 * expiry came, and the REST Booking's hold_expires_at named a time after the appointment. Capped here,
 * in one statement both dialects run alike; updated_at is left as it was (nobody changed the booking),
 * and the bookings_version triggers drop the availability answers that read the old expiry.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db
    .updateTable('bookings')
    .set((eb) => ({ hold_expires_at: eb.ref('starts_at') }))
    .where('status', 'in', ['pending_payment', 'pending_confirmation'])
    .where((eb) => eb('hold_expires_at', '>', eb.ref('starts_at')))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
