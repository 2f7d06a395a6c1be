import type { Db } from '../../data/database.ts';
import { endWaitlistEntry, findWaitlistEntry, offerOfBooking } from '../../data/waitlist-repository.ts';
import { formatUtc } from '../../domain/time-format.ts';
import { publishEvent } from '../webhooks/events.ts';

/**
 * A waitlist offer confirmed, by whichever step came last (the claim, the deposit, Booking
 * Protection's card: booking-requirements.ts): its entry ends as booked, and waitlist.claimed is sent,
 * once. Nothing for a booking that is no offer. An offer claimed but not yet paid keeps its entry
 * waiting: should the hold lapse, the entry is offered the next time that frees.
 */
export async function bookEntryOfOffer(trx: Db, organisationId: string, bookingId: string, now: number) {
  const offer = await offerOfBooking(trx, organisationId, bookingId);
  if (!offer) return;
  const booked = { status: 'booked' as const, bookingId };
  if (!(await endWaitlistEntry(trx, organisationId, offer.entry_id, booked, now))) return;
  const [entry, booking] = await Promise.all([
    findWaitlistEntry(trx, organisationId, offer.entry_id),
    trx
      .selectFrom('bookings')
      .select('reference')
      .where('organisation_id', '=', organisationId)
      .where('id', '=', bookingId)
      .executeTakeFirstOrThrow(),
  ]);
  if (!entry) return;
  const claimed = {
    id: bookingId,
    reference: booking.reference,
    startsAt: offer.starts_at,
    staffId: offer.staff_id,
  };
  await publishWaitlistEvent(trx, 'waitlist.claimed', organisationId, entry, claimed, now);
}

/** waitlist.offered and waitlist.claimed (design.md 9.2): the entry and the booking that holds its time. */
export function publishWaitlistEvent(
  trx: Db,
  type: 'waitlist.offered' | 'waitlist.claimed',
  organisationId: string,
  entry: { id: string; client_id: string; location_id: string },
  booking: {
    id: string;
    reference: string;
    startsAt: number;
    staffId: string;
    holdExpiresAt?: number | null;
  },
  now: number,
) {
  return publishEvent(
    trx,
    organisationId,
    {
      type,
      orderingKey: booking.id,
      data: () => ({
        waitlist_entry_id: entry.id,
        client_id: entry.client_id,
        booking_id: booking.id,
        booking_reference: booking.reference,
        staff_id: booking.staffId,
        starts_at: formatUtc(booking.startsAt),
        ...(type === 'waitlist.offered' && booking.holdExpiresAt
          ? { expires_at: formatUtc(booking.holdExpiresAt) }
          : {}),
      }),
    },
    now,
  );
}
