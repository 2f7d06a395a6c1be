import { appendEvent, type BookingEvent } from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import { bookingEventType } from '../domain/webhooks.ts';
import { endEntryBookedMeanwhile, endUnprovenEntryOfLapsedOffer } from './waitlist/offer-outcomes.ts';
import { timeFreedBy } from './waitlist/rescans.ts';
import { publishBookingEvent } from './webhooks/events.ts';

/**
 * Every change to a booking after its creation is logged here, in the transaction of the change: its
 * booking_events row, and the webhook event it is (booking.confirmed, .cancelled, .expired...) for
 * the endpoints that want it. One door, so that no face (REST, MCP, pages, console, CLI, import, the
 * sweeper) can change a booking without integrators hearing of it, nor free time without the waitlist
 * hearing of it; the architecture test keeps the service layer from appending to the log by any other.
 * A new booking's first event is written with it (insertNewBooking) and published by the booking service.
 */
export async function logBookingEvent(
  trx: Db,
  event: BookingEvent,
  options: { catalogueVersion?: number | undefined } = {},
): Promise<void> {
  await appendEvent(trx, event);
  const type = bookingEventType(event);
  if (type) {
    await publishBookingEvent(
      trx,
      event.organisationId,
      event.bookingId,
      type,
      event.at,
      options.catalogueVersion,
    );
  }
  // The booking first, then its waitlist entry: the order every change to both keeps.
  await endUnprovenEntryOfLapsedOffer(trx, event);
  await endEntryBookedMeanwhile(trx, event);
  await timeFreedBy(trx, event);
}
