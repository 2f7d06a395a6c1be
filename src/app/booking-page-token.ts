import { randomBytes } from 'node:crypto';
import type { Db } from '../data/database.ts';
import type { BookingPagesTable } from '../data/tables.ts';

/**
 * A booking's page token and its addresses: the token is the customer's capability for that one
 * booking (32 random bytes, base64url: 256 bits, never derived from anything guessable), kept in
 * `booking_pages` and issued in the transaction that writes the booking. Apart from the page itself
 * (booking-pages.ts) so that the booking use case can issue one without importing the page.
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
 * Where the payment provider's pages send the customer back to a booking's page (its success URL):
 * the page, marked as reached from there, so that before the provider's word arrives it does not
 * simply ask again for the step just done.
 */
export function providerReturnUrl(publicBaseUrl: string, token: string): string {
  return `${bookingPageUrl(publicBaseUrl, token)}?${PROVIDER_RETURN}=1`;
}

/** The query flag of providerReturnUrl. */
export const PROVIDER_RETURN = 'back_from_provider';

/** Issues the page of a booking just written (inside its transaction); the token. */
export async function issueBookingPage(
  trx: Db,
  organisationId: string,
  bookingId: string,
  now: number,
): Promise<string> {
  const page = newBookingPage(organisationId, bookingId, now);
  await trx.insertInto('booking_pages').values(page).execute();
  return page.token;
}

/**
 * The booking_pages row of a new page, with a fresh token (or the one a checkout opened before the
 * booking's transaction names), for a caller that writes it itself.
 */
export function newBookingPage(
  organisationId: string,
  bookingId: string,
  now: number,
  token = randomBytes(32).toString('base64url'),
): BookingPagesTable {
  return {
    token,
    organisation_id: organisationId,
    booking_id: bookingId,
    created_at: now,
  };
}
