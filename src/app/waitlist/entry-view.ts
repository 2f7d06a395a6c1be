import { referenceOfBooking } from '../../data/booking-repository.ts';
import type { Db } from '../../data/database.ts';
import { findLocationById } from '../../data/location-repository.ts';
import { offersOfEntry, type WaitlistEntryRow } from '../../data/waitlist-repository.ts';
import {
  entryFitsBooking,
  type TimeOfDay,
  type WaitlistEntry,
  type WaitlistOffer,
} from '../../domain/waitlist.ts';

/**
 * A waitlist entry as it reads now, with the offer it holds (a hold not yet lapsed): what
 * GET /v1/waitlist/{id} answers, and so the data of the waitlist events (design.md 9.2), read in the
 * transaction of their change.
 */
export async function entryAsItReads(db: Db, row: WaitlistEntryRow, now: number): Promise<WaitlistEntry> {
  const location = await findLocationById(db, row.organisation_id, row.location_id);
  const offers = row.status === 'waiting' ? await offersOfEntry(db, row.organisation_id, row.id) : [];
  const bookingReference =
    row.booking_id === null ? undefined : await referenceOfBooking(db, row.organisation_id, row.booking_id);
  const open = offers.find(
    (offer) => offer.status === 'pending_confirmation' && (offer.hold_expires_at ?? 0) > now,
  );
  return entryOfRow(
    row,
    location?.slug ?? '',
    open
      ? {
          bookingReference: open.reference,
          staffId: open.staff_id,
          startsAt: open.starts_at,
          timezone: location?.timezone ?? 'UTC',
          expiresAt: open.hold_expires_at!,
        }
      : null,
    bookingReference ?? null,
  );
}

export function entryOfRow(
  row: WaitlistEntryRow,
  locationSlug: string,
  offer: WaitlistOffer | null,
  bookingReference: string | null = null,
): WaitlistEntry {
  return {
    id: row.id,
    locationSlug,
    clientId: row.client_id,
    ...wantsOfRow(row),
    status: row.status,
    bookingId: row.booking_id,
    bookingReference,
    createdAt: row.created_at,
    endedAt: row.ended_at,
    offer,
  };
}

/** What an entry's row waits for, as entryFitsBooking measures it. */
export function wantsOfRow(
  row: WaitlistEntryRow,
): Pick<WaitlistEntry, 'serviceIds' | 'staffId' | 'fromDate' | 'toDate' | 'times'> {
  return {
    serviceIds: JSON.parse(row.service_ids) as string[],
    staffId: row.staff_id,
    fromDate: row.from_date,
    toDate: row.to_date,
    times: row.times === null ? null : (JSON.parse(row.times) as TimeOfDay[]),
  };
}

/** Of a client's waiting entries at a location, those a confirmed booking there gives what they wait for. */
export function entriesFilledBy<T extends WaitlistEntryRow>(
  entries: readonly T[],
  booking: { serviceIds: readonly string[]; staffId: string; startsAt: number },
  timezone: string,
): T[] {
  return entries.filter((entry) => entryFitsBooking(wantsOfRow(entry), booking, timezone));
}
