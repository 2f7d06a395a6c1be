import { presentWaitlistEntry } from '../../contract/waitlist.ts';
import { type BookingEvent, findBookingsOfClient } from '../../data/booking-repository.ts';
import type { Db } from '../../data/database.ts';
import { HOLD_LAPSED } from '../../data/hold-expiry.ts';
import { findLocationById } from '../../data/location-repository.ts';
import {
  clientWaitingEntriesAt,
  endWaitlistEntry,
  findWaitlistEntry,
  offerOfBooking,
} from '../../data/waitlist-repository.ts';
import { bookedWhileOffered } from '../../domain/waitlist.ts';
import { publishEvent } from '../webhooks/events.ts';
import { entriesFilledBy, entryAsItReads, wantsOfRow } from './entry-view.ts';

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
  await publishWaitlistEvent(trx, 'waitlist.claimed', organisationId, offer.entry_id, bookingId, now);
}

/**
 * A hold confirmed later (its deposit paid, its card saved, its contact proven, its offer claimed):
 * the client's other waiting entries it gives what they wait for end as booked, as they do when a
 * booking is confirmed at once (booking-service.ts). Never an entry whose own offer still holds a time.
 */
export async function bookEntriesFilledBy(trx: Db, organisationId: string, bookingId: string, now: number) {
  const booking = await trx
    .selectFrom('bookings as b')
    .innerJoin('locations as l', (join) =>
      join.onRef('l.organisation_id', '=', 'b.organisation_id').onRef('l.id', '=', 'b.location_id'),
    )
    .select(['b.location_id', 'b.client_id', 'b.staff_id', 'b.starts_at', 'l.timezone'])
    .where('b.organisation_id', '=', organisationId)
    .where('b.id', '=', bookingId)
    .executeTakeFirst();
  if (!booking) return;
  const waiting = await clientWaitingEntriesAt(
    trx,
    organisationId,
    booking.location_id,
    booking.client_id,
    now,
  );
  if (waiting.length === 0) return;
  const services = await trx
    .selectFrom('booking_services')
    .select('service_id')
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .orderBy('position')
    .execute();
  const filled = entriesFilledBy(
    waiting,
    { serviceIds: services.map((s) => s.service_id), staffId: booking.staff_id, startsAt: booking.starts_at },
    booking.timezone,
  );
  for (const entry of filled) {
    await endWaitlistEntry(trx, organisationId, entry.id, { status: 'booked', bookingId }, now);
  }
}

/**
 * A hold lapsed unanswered (booking-event-log.ts hears every expiry, whoever records it: the waitlist
 * worker, the hold sweeper, another booking's lazy expiry): if it was a waitlist offer to an entry whose
 * contact nobody has proven (made on the public page, design.md 9.1), that entry ends. Whoever typed
 * someone else's phone or e-mail there gets that person one offer at most, not one for every time that
 * frees up until the last date. An offer let go ("Not this time") keeps the entry waiting.
 */
export async function endUnprovenEntryOfLapsedOffer(trx: Db, event: BookingEvent): Promise<void> {
  if (event.to !== 'expired' || event.details?.reason !== HOLD_LAPSED) return;
  const unproven = await trx
    .selectFrom('waitlist_offers as o')
    .innerJoin('waitlist_entries as e', (join) =>
      join.onRef('e.organisation_id', '=', 'o.organisation_id').onRef('e.id', '=', 'o.entry_id'),
    )
    .innerJoin('clients as c', (join) =>
      join.onRef('c.organisation_id', '=', 'e.organisation_id').onRef('c.id', '=', 'e.client_id'),
    )
    .select('e.id')
    .where('o.organisation_id', '=', event.organisationId)
    .where('o.booking_id', '=', event.bookingId)
    .where('e.status', '=', 'waiting')
    .where('c.contact_proven', '=', 0)
    .executeTakeFirst();
  if (unproven) {
    await endWaitlistEntry(trx, event.organisationId, unproven.id, { status: 'ended' }, event.at);
  }
}

/** How many of a client's coming confirmed bookings an offer that ended unclaimed looks through. */
const BOOKINGS_READ_FOR_ENDED_OFFER = 50;

/**
 * An offer that ended unclaimed (lapsed, let go, withdrawn: expired; cancelled through REST or MCP):
 * if its client booked, while it held its time, a confirmed time its entry waits for (a booking made
 * then leaves the entry waiting, its hold still claimable: clientWaitingEntriesAt), the entry ends as
 * booked with that booking now (bookedWhileOffered). Otherwise the next time that frees would be held
 * and sent to a client who needs none. MCP `cancel` says so, and its dry run foresees it.
 */
export async function endEntryBookedMeanwhile(trx: Db, event: BookingEvent): Promise<void> {
  if (event.to !== 'expired' && event.to !== 'cancelled') return;
  const offer = await offerOfBooking(trx, event.organisationId, event.bookingId);
  if (!offer) return;
  const entry = await findWaitlistEntry(trx, event.organisationId, offer.entry_id);
  if (entry?.status !== 'waiting') return;
  const location = await findLocationById(trx, event.organisationId, entry.location_id);
  if (!location) return;
  const coming = await findBookingsOfClient(trx, event.organisationId, entry.client_id, {
    statuses: ['confirmed'],
    limit: BOOKINGS_READ_FOR_ENDED_OFFER,
    from: event.at,
  });
  const filling = bookedWhileOffered(
    wantsOfRow(entry),
    offer.created_at,
    coming.filter((booking) => booking.locationId === entry.location_id),
    location.timezone,
  );
  if (filling) {
    await endWaitlistEntry(
      trx,
      event.organisationId,
      entry.id,
      { status: 'booked', bookingId: filling.id },
      event.at,
    );
  }
}

/**
 * waitlist.offered and waitlist.claimed (design.md 9.2): the data is the WaitlistEntry after the
 * change, as GET /v1/waitlist/{id} answers it (waiting with its offer; booked with its booking_id),
 * ordered with the events of the booking that holds its time.
 */
export function publishWaitlistEvent(
  trx: Db,
  type: 'waitlist.offered' | 'waitlist.claimed',
  organisationId: string,
  entryId: string,
  bookingId: string,
  now: number,
) {
  return publishEvent(
    trx,
    organisationId,
    {
      type,
      orderingKey: bookingId,
      data: async () => {
        const row = await findWaitlistEntry(trx, organisationId, entryId);
        return row && presentWaitlistEntry(await entryAsItReads(trx, row, now));
      },
    },
    now,
  );
}
