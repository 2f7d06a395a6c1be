import type { BookingEvent } from '../../data/booking-repository.ts';
import type { Db } from '../../data/database.ts';
import { requestWaitlistRescan, waitingLocationsSharingStaff } from '../../data/waitlist-repository.ts';

/**
 * When a change to a booking frees time (a cancellation, a lapsed hold, a move), the waitlists of its
 * location and of the others its staff work at are looked at again: a rescan is asked in the transaction of the change, so no freed time
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

/**
 * Asks a rescan of the location, and of every other location sharing a staff member with it, where
 * anyone waits: a booking frees its staff member's time wherever they work, since they are busy
 * everywhere while booked anywhere (whoever it was assigned before a move worked here too).
 */
export async function rescanIfWaiting(
  trx: Db,
  organisationId: string,
  locationId: string,
  now: number,
): Promise<void> {
  for (const waiting of await waitingLocationsSharingStaff(trx, organisationId, locationId)) {
    await requestWaitlistRescan(trx, organisationId, waiting, now);
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
