import type { Db } from '../data/database.ts';
import { findOrganisationBySlug } from '../data/organisation-repository.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { NOTES_MAX_LENGTH } from '../domain/booking/booking.ts';
import type { Location, ServiceWithStaff } from '../domain/catalogue.ts';
import { AppError } from '../domain/errors.ts';
import { getAvailability } from './availability-service.ts';
import { createBooking } from './booking-service.ts';
import { registerClient } from './client-service.ts';
import { phoneAsDialledAt } from './contact.ts';
import type { AppDeps } from './deps.ts';
import { listLocations, listServicesAt, requireLocation } from './directory-service.ts';
import { checkFreeText } from './free-text.ts';

/**
 * The public booking page's use cases (GET /p/{organisation_slug}): what an organisation offers, the
 * free times of the same availability engine the API uses, and a booking made as a customer would
 * make it, by name and phone or e-mail. No API key: the organisation is the one the address names.
 */

export interface PublicOrganisation {
  id: string;
  slug: string;
  name: string;
  locale: string;
  currency: string;
  referencePrefix: string;
}

/** The organisation with this slug, or 404 not_found. */
export async function publicOrganisation(db: Db, slug: string): Promise<PublicOrganisation> {
  const row = await findOrganisationBySlug(db, slug);
  if (!row) throw new AppError('not_found', 'No salon has this address; check the link you were given.');
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    locale: row.locale,
    currency: row.currency,
    referencePrefix: row.booking_reference_prefix,
  };
}

/** A page of a listing is at most this long; an organisation with more has them on further pages. */
const LISTING_LIMIT = 100;

export async function publicLocations(db: Db, organisationId: string): Promise<Location[]> {
  return (await listLocations(db, organisationId, { after: null, limit: LISTING_LIMIT })).items;
}

/** The location and the services a customer may book there online. */
export async function publicServices(
  db: Db,
  organisationId: string,
  locationSlug: string,
): Promise<{ location: Location; services: ServiceWithStaff[] }> {
  const location = await requireLocation(db, organisationId, locationSlug, 'location');
  const page = await listServicesAt(db, organisationId, location, { after: null, limit: LISTING_LIMIT });
  return { location, services: page.items.filter((s) => s.onlineBookable !== false && s.staff.length > 0) };
}

/** The free starts of one local day for these services (any staff). */
export async function publicSlots(
  db: Db,
  organisationId: string,
  location: Location,
  serviceIds: string[],
  date: string,
  now: number,
): Promise<number[]> {
  const availability = await getAvailability(
    db,
    organisationId,
    { location, serviceIds, fromDate: date, days: 1 },
    now,
  );
  return [...new Set(availability.slots.map((s) => s.startsAt))];
}

export interface PublicBookingRequest {
  locationSlug: string;
  serviceIds: string[];
  startsAt: number;
  firstName: string;
  lastName: string;
  phone?: string | undefined;
  email?: string | undefined;
  notes?: string | undefined;
}

/**
 * Books as the customer: the client found by their phone or e-mail (or registered), then the booking,
 * made by the same use case as the API's. A deposit makes it pending_payment; a Booking Protection
 * location a pending_confirmation hold; either is finished on the booking's page. The page's token.
 */
export async function bookOnPublicPage(
  deps: AppDeps,
  publicBaseUrl: string,
  organisation: PublicOrganisation,
  request: PublicBookingRequest,
): Promise<string> {
  if (!request.phone && !request.email) {
    throw new AppError(
      'invalid_request',
      'Give a phone number or an e-mail address, so we can reach you.',
      'phone',
    );
  }
  // Checked before the client is registered, as createBooking would after it.
  checkFreeText(request.notes, NOTES_MAX_LENGTH, 'notes');
  const now = deps.clock.nowMs();
  const location = await requireLocation(deps.db, organisation.id, request.locationSlug, 'location');
  const phone = request.phone && phoneAsDialledAt(request.phone, location.country);
  const { client } = await registerClient(
    deps.db,
    organisation.id,
    { firstName: request.firstName, lastName: request.lastName, phone, email: request.email },
    now,
  );
  const created = await writeTransaction(deps.db, (trx) =>
    createBooking(
      trx,
      {
        organisationId: organisation.id,
        currency: organisation.currency,
        referencePrefix: organisation.referencePrefix,
        actor: 'page:public',
        // The bookings table knows the API, MCP, import and staff; the page books through the API's use case.
        source: 'api',
      },
      {
        locationSlug: request.locationSlug,
        serviceIds: request.serviceIds,
        clientId: client.id,
        startsAt: request.startsAt,
        notes: request.notes,
      },
      now,
      { payments: deps.payments, publicBaseUrl, hostedFlow: true },
    ),
  );
  return created.booking.pageToken!;
}
