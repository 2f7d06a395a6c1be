import type { Db } from '../data/database.ts';
import { bookedServices } from '../data/diary-repository.ts';
import { OFFER_LET_GO } from '../data/hold-expiry.ts';
import { findLocationById } from '../data/location-repository.ts';
import type { Booking } from '../domain/booking/booking.ts';
import { effectiveStatus } from '../domain/booking/state-machine.ts';
import type { Location } from '../domain/catalogue.ts';
import { AppError } from '../domain/errors.ts';
import { getBooking } from './booking-service.ts';
import { type ProofView, proofOfBooking } from './contact-proof.ts';

/**
 * A booking's own page, /p/manage/{token}: the link every message and booking_page_url carry (the
 * token: booking-page-token.ts).
 *
 * Booking Protection's pending_confirmation hold is finished here: the card through the provider's
 * card setup (card-setup-service.ts), the deposit through its checkout; each step is settled by
 * booking-requirements.ts `settleRequirement`, the last one confirming the booking. The link is sent
 * by the outbox (outbox-service.ts) in the hold's transaction and points here (customer-links.ts).
 */

/** Everything a booking's page shows. */
export interface BookingPageView {
  token: string;
  organisation: { id: string; name: string; locale: string; slug: string };
  location: Location;
  /** As of now (lazy expiry applied to `status`). */
  booking: Booking;
  services: { name: string; priceMinor: number }[];
  staffName: string;
  /**
   * The client's name, once on file (contact_proven). Otherwise null: an unproven record's name is
   * whatever a stranger typed, and its page is reached from messages to the contact typed (a waitlist
   * offer, a booking with public_verification none, a code whose link was replaced or expired, which
   * leads on to the booking's page), which, like such messages, name nobody (outbox-delivery.ts).
   */
  clientName: string | null;
  /** A public booking's contact proof: where the code went and whether it is done (null: none asked). */
  proof: ProofView | null;
  /**
   * A waitlist offer that ended unclaimed (the booking expired): whether the customer let it go (else
   * it lapsed) and whether their entry still waits. Null for any other booking.
   */
  endedOffer: EndedOffer | null;
  /**
   * The visits of the booking's series (9.5) that are the same client's, in time order, this one
   * included, each with its own page's token (null: it has none); null for a booking of no series.
   */
  seriesVisits: SeriesVisit[] | null;
}

export interface SeriesVisit {
  reference: string;
  startsAt: number;
  /** As of now (lazy expiry applied). */
  status: Booking['status'];
  token: string | null;
}

export interface EndedOffer {
  letGo: boolean;
  /** Let go from its page (else by the salon or an integrator, taking the entry off the waitlist). */
  byCustomer: boolean;
  stillWaiting: boolean;
}

/** A token can only be 43 base64url characters; anything else is not looked up. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The booking behind a page's token, or 404 not_found. Reads only. */
export async function getBookingPage(db: Db, token: string, now: number): Promise<BookingPageView> {
  const page = TOKEN.test(token)
    ? await db
        .selectFrom('booking_pages as p')
        .innerJoin('bookings as b', (join) =>
          join.onRef('b.organisation_id', '=', 'p.organisation_id').onRef('b.id', '=', 'p.booking_id'),
        )
        .innerJoin('organisations as o', 'o.id', 'p.organisation_id')
        .innerJoin('staff as s', (join) =>
          join.onRef('s.organisation_id', '=', 'b.organisation_id').onRef('s.id', '=', 'b.staff_id'),
        )
        .innerJoin('clients as c', (join) =>
          join.onRef('c.organisation_id', '=', 'b.organisation_id').onRef('c.id', '=', 'b.client_id'),
        )
        .select([
          'b.reference',
          'b.id as booking_id',
          'o.id as organisation_id',
          'o.name as organisation_name',
          'o.locale',
          'o.slug as organisation_slug',
          's.name as staff_name',
          'c.first_name',
          'c.last_name',
          'c.contact_proven',
        ])
        .where('p.token', '=', token)
        .executeTakeFirst()
    : undefined;
  if (!page) throw new AppError('not_found', 'No booking has this link; check the link you were given.');
  const booking = await getBooking(db, page.organisation_id, page.reference);
  const services = await bookedServices(db, page.organisation_id, page.booking_id);
  const status = effectiveStatus(booking, now);
  // The booking's own location, made inactive since or not: its customer still sees and can cancel it.
  const location = await findLocationById(db, page.organisation_id, booking.locationId);
  if (!location) throw new Error(`Booking ${booking.reference} refers to a missing location`);
  return {
    token,
    organisation: {
      id: page.organisation_id,
      name: page.organisation_name,
      locale: page.locale,
      slug: page.organisation_slug,
    },
    location,
    booking: { ...booking, status },
    services: services.map((s) => ({ name: s.name, priceMinor: s.price_minor })),
    staffName: page.staff_name,
    clientName:
      page.contact_proven === 1 ? [page.first_name, page.last_name].filter(Boolean).join(' ') : null,
    proof: await proofOfBooking(
      db,
      { organisationId: page.organisation_id, bookingId: page.booking_id },
      now,
    ),
    endedOffer: status === 'expired' ? await endedOfferOf(db, page.organisation_id, page.booking_id) : null,
    seriesVisits: booking.seriesId ? await seriesVisitsOf(db, page.organisation_id, booking, now) : null,
  };
}

/** The visits of `booking`'s series that are its client's, with their pages' tokens. */
async function seriesVisitsOf(
  db: Db,
  organisationId: string,
  booking: Booking,
  now: number,
): Promise<SeriesVisit[]> {
  const rows = await db
    .selectFrom('bookings as b')
    .leftJoin('booking_pages as p', (join) =>
      join.onRef('p.organisation_id', '=', 'b.organisation_id').onRef('p.booking_id', '=', 'b.id'),
    )
    .select(['b.reference', 'b.starts_at', 'b.status', 'b.hold_expires_at', 'p.token'])
    .where('b.organisation_id', '=', organisationId)
    .where('b.series_id', '=', booking.seriesId)
    .where('b.client_id', '=', booking.clientId)
    .orderBy('b.starts_at')
    .execute();
  return rows.map((row) => ({
    reference: row.reference,
    startsAt: row.starts_at,
    status: effectiveStatus(
      { status: row.status, startsAt: row.starts_at, holdExpiresAt: row.hold_expires_at },
      now,
    ),
    token: row.token ?? null,
  }));
}

/** The actor the booking's page acts as (claims.ts). */
const PAGE_CUSTOMER = 'page:customer';

/** The booking's waitlist offer, ended unclaimed: let go or lapsed, and whether its entry waits on. */
async function endedOfferOf(db: Db, organisationId: string, bookingId: string): Promise<EndedOffer | null> {
  const offer = await db
    .selectFrom('waitlist_offers as o')
    .innerJoin('waitlist_entries as e', (join) =>
      join.onRef('e.organisation_id', '=', 'o.organisation_id').onRef('e.id', '=', 'o.entry_id'),
    )
    .select('e.status')
    .where('o.organisation_id', '=', organisationId)
    .where('o.booking_id', '=', bookingId)
    .executeTakeFirst();
  if (!offer) return null;
  // Let go from its page (or by staff) is logged with its reason; a lapse not yet swept has no event.
  const expiry = await db
    .selectFrom('booking_events')
    .select(['details', 'actor'])
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('to_status', '=', 'expired')
    .orderBy('seq', 'desc')
    .executeTakeFirst();
  const reason = expiry?.details ? (JSON.parse(expiry.details) as { reason?: string }).reason : undefined;
  return {
    letGo: reason === OFFER_LET_GO,
    byCustomer: expiry?.actor === PAGE_CUSTOMER,
    stillWaiting: offer.status === 'waiting',
  };
}

/** The page token of a booking (its booking_pages row). */
export async function pageTokenOf(
  db: Db,
  booking: { organisationId: string; bookingId: string },
): Promise<string> {
  const row = await db
    .selectFrom('booking_pages')
    .select('token')
    .where('organisation_id', '=', booking.organisationId)
    .where('booking_id', '=', booking.bookingId)
    .executeTakeFirstOrThrow();
  return row.token;
}
