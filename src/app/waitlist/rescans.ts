import type { BookingEvent } from '../../data/booking-repository.ts';
import type { Db } from '../../data/database.ts';
import { anyoneWaitingAt, requestWaitlistRescan } from '../../data/waitlist-repository.ts';

/**
 * When a change to a booking frees time (a cancellation, a lapsed hold, a move), the location's
 * waitlist is looked at again: a rescan is asked in the transaction of the change, so no freed time
 * goes unnoticed whatever face made it, and the worker (offers.ts) offers it off the request's path.
 */
export async function timeFreedBy(trx: Db, event: BookingEvent): Promise<void> {
  const moved = event.from === event.to && event.details !== undefined && 'rescheduled' in event.details;
  if (!moved && event.to !== 'cancelled' && event.to !== 'expired') return;
  const booking = await trx
    .selectFrom('bookings')
    .select('location_id')
    .where('organisation_id', '=', event.organisationId)
    .where('id', '=', event.bookingId)
    .executeTakeFirst();
  if (!booking) return;
  await rescanIfWaiting(trx, event.organisationId, booking.location_id, event.at);
}

/** Asks a rescan of the location when anyone waits there (an import's new hours, a closure removed). */
export async function rescanIfWaiting(
  trx: Db,
  organisationId: string,
  locationId: string,
  now: number,
): Promise<void> {
  if (await anyoneWaitingAt(trx, organisationId, locationId)) {
    await requestWaitlistRescan(trx, organisationId, locationId, now);
  }
}

/** Asks a rescan of every location of the organisation where anyone waits (after a catalogue import). */
export async function rescanWaitlists(trx: Db, organisationId: string, now: number): Promise<void> {
  const waiting = await trx
    .selectFrom('waitlist_entries')
    .select('location_id')
    .distinct()
    .where('organisation_id', '=', organisationId)
    .where('status', '=', 'waiting')
    .execute();
  for (const { location_id } of waiting) {
    await requestWaitlistRescan(trx, organisationId, location_id, now);
  }
}
