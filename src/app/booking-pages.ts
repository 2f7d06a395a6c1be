import { randomBytes } from 'node:crypto';
import type { BookingLinks } from '../contract/booking.ts';
import { appendEvent, updateBooking } from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import type { Booking } from '../domain/booking/booking.ts';
import { effectiveStatus, transition } from '../domain/booking/state-machine.ts';
import type { Location } from '../domain/catalogue.ts';
import { AppError } from '../domain/errors.ts';
import { getBooking } from './booking-service.ts';
import { requireLocation } from './directory-service.ts';
import type { PaymentProvider } from './payments.ts';

/**
 * A booking's own page, /p/manage/{token}: the link every message and booking_page_url carry. The
 * token is the customer's capability for that one booking (32 random bytes, base64url: 256 bits, never
 * derived from anything guessable), kept in `booking_pages`.
 *
 * Booking Protection's pending_confirmation hold is finished here: each outstanding requirement
 * (`protection_setup`, `deposit`) is settled by `settleRequirement`, and the last one confirms the
 * booking in the same transaction.
 */

/** The path of a booking's page. */
export function bookingPagePath(token: string): string {
  return `/p/manage/${encodeURIComponent(token)}`;
}

/** The address the customer is given for a booking's page. */
export function bookingPageUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}${bookingPagePath(token)}`;
}

/**
 * A booking's links as a customer reaching this server at `publicBaseUrl` is given them: the
 * provider's checkout of an open deposit (none without a provider), and the booking's page.
 */
export function bookingLinksAt(payments: PaymentProvider | null, publicBaseUrl: string): BookingLinks {
  return {
    paymentUrl: (sessionId) => payments?.checkoutUrl(sessionId, publicBaseUrl) ?? null,
    bookingPageUrl: (token) => bookingPageUrl(publicBaseUrl, token),
  };
}

/** Issues the page of a booking just written (inside its transaction); the token. */
export async function issueBookingPage(
  trx: Db,
  organisationId: string,
  bookingId: string,
  now: number,
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await trx
    .insertInto('booking_pages')
    .values({ token, organisation_id: organisationId, booking_id: bookingId, created_at: now })
    .execute();
  return token;
}

/** Where a booking-page link goes: the booking, and the address it is reached at. */
export interface BookingPageLink {
  organisationId: string;
  bookingId: string;
  clientId: string;
  url: string;
}

/**
 * THE call point where the booking-page link of a pending_confirmation hold is sent to the customer
 * (design 8.3: "booking-page link (pending_confirmation)"), inside the transaction that made the hold.
 * The outbox (issue 18) writes its message here, so that the link is sent exactly when the hold is
 * made; until it lands, the link reaches the customer through the answer of the face that booked
 * (MCP `book` reads it out as booking_page_url).
 */
export async function sendBookingPageLink(_trx: Db, _link: BookingPageLink): Promise<void> {
  // Intentionally empty until the outbox exists: see the comment above.
}

/** Everything a booking's page shows. */
export interface BookingPageView {
  token: string;
  organisation: { id: string; name: string; locale: string; slug: string };
  location: Location;
  /** As of now (lazy expiry applied to `status`). */
  booking: Booking;
  services: { name: string; priceMinor: number }[];
  staffName: string;
  clientName: string;
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
        .innerJoin('locations as l', (join) =>
          join.onRef('l.organisation_id', '=', 'b.organisation_id').onRef('l.id', '=', 'b.location_id'),
        )
        .select([
          'b.reference',
          'b.id as booking_id',
          'l.slug as location_slug',
          'o.id as organisation_id',
          'o.name as organisation_name',
          'o.locale',
          'o.slug as organisation_slug',
          's.name as staff_name',
          'c.first_name',
          'c.last_name',
        ])
        .where('p.token', '=', token)
        .executeTakeFirst()
    : undefined;
  if (!page) throw new AppError('not_found', 'No booking has this link; check the link you were given.');
  const booking = await getBooking(db, page.organisation_id, page.reference);
  const services = await db
    .selectFrom('booking_services')
    .innerJoin('services', (join) =>
      join
        .onRef('services.organisation_id', '=', 'booking_services.organisation_id')
        .onRef('services.id', '=', 'booking_services.service_id'),
    )
    .select(['services.name', 'booking_services.price_minor'])
    .where('booking_services.organisation_id', '=', page.organisation_id)
    .where('booking_services.booking_id', '=', page.booking_id)
    .orderBy('booking_services.position')
    .execute();
  return {
    token,
    organisation: {
      id: page.organisation_id,
      name: page.organisation_name,
      locale: page.locale,
      slug: page.organisation_slug,
    },
    location: await requireLocation(db, page.organisation_id, page.location_slug),
    booking: { ...booking, status: effectiveStatus(booking, now) },
    services: services.map((s) => ({ name: s.name, priceMinor: s.price_minor })),
    staffName: page.staff_name,
    clientName: [page.first_name, page.last_name].filter(Boolean).join(' '),
  };
}

export type Requirement = 'deposit' | 'protection_setup';

/**
 * One outstanding step of a pending_confirmation hold is done (inside the caller's transaction): it
 * leaves the requirements, and when it was the last the booking is confirmed (the hold cleared, the
 * event logged). 409 conflict when the booking is not waiting for it (finished already, or the hold
 * lapsed).
 */
export async function settleRequirement(
  trx: Db,
  booking: Booking,
  requirement: Requirement,
  now: number,
  actor: string,
): Promise<void> {
  const status = effectiveStatus(booking, now);
  if (status === 'expired') {
    throw new AppError(
      'conflict',
      'This booking was not finished in time and has been released; please book again.',
    );
  }
  if (status !== 'pending_confirmation' || !booking.pendingRequirements.includes(requirement)) {
    throw new AppError('conflict', 'This step of the booking is already done.');
  }
  const left = booking.pendingRequirements.filter((r) => r !== requirement);
  const changes =
    requirement === 'deposit'
      ? { deposit_status: 'paid' as const }
      : {
          protection_setup_status: 'succeeded' as const,
          payment_method_saved: 1 as const,
          protection_setup_completed_at: now,
        };
  if (requirement === 'deposit') {
    await trx
      .updateTable('checkout_sessions')
      .set({ status: 'paid', completed_at: now })
      .where('organisation_id', '=', booking.organisationId)
      .where('booking_id', '=', booking.id)
      .where('status', 'in', ['open', 'abandoned'])
      .execute();
  }
  if (left.length > 0) {
    await updateBooking(trx, booking.organisationId, booking.id, {
      ...changes,
      pending_requirements: JSON.stringify(left),
      updated_at: now,
    });
    return;
  }
  const moved = transition(booking, 'requirements_completed', now);
  if (!moved.ok) throw new AppError('conflict', `This booking cannot be confirmed: ${moved.reason}.`);
  await updateBooking(trx, booking.organisationId, booking.id, {
    ...changes,
    status: moved.to,
    pending_requirements: null,
    hold_expires_at: null,
    updated_at: now,
  });
  await appendEvent(trx, {
    organisationId: booking.organisationId,
    bookingId: booking.id,
    from: moved.from,
    to: moved.to,
    actor,
    at: now,
    details: { completed: requirement },
  });
}

/**
 * The local test provider's card setup: the customer confirms on the page and the card counts as saved
 * (no card is asked for). A real provider reports its setup back through settleRequirement the same way.
 */
export function saveTestCard(db: Db, token: string, now: number): Promise<void> {
  return writeTransaction(db, async (trx) => {
    const view = await getBookingPage(trx, token, now);
    await settleRequirement(trx, view.booking, 'protection_setup', now, 'payment:local');
  });
}
