import { createHash, randomBytes } from 'node:crypto';
import { countLivePublicHolds, countPublicBookingsSince } from '../data/contact-proof-repository.ts';
import type { Db } from '../data/database.ts';
import { storedCountries } from '../data/location-repository.ts';
import { findOrganisationBySlug } from '../data/organisation-repository.ts';
import { idempotencyKeyTurn, publicContactTurns, takeTurn } from '../data/write-locks.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { NOTES_MAX_LENGTH } from '../domain/booking/booking.ts';
import { REPEAT_LIMITS, type Repeat, type SeriesVisits } from '../domain/booking/series.ts';
import type { Location, ServiceWithStaff } from '../domain/catalogue.ts';
import { counted } from '../domain/counted.ts';
import { AppError } from '../domain/errors.ts';
import {
  asciiDigits,
  CONTACT_DAY_MS,
  type PublicBookingPolicy,
  proofChannel,
  TAKES_NO_BOOKINGS,
} from '../domain/public-booking-policy.ts';
import { createSeries } from './booking-series.ts';
import { type Caller, createBooking } from './booking-service.ts';
import { withCheckoutsOpenedFirst } from './checkouts-opened-first.ts';
import { insertUnprovenClient, newClientDetails } from './client-service.ts';
import { phoneAsDialledAt } from './contact.ts';
import type { PublicContact } from './contact-proof.ts';
import type { AppDeps } from './deps.ts';
import { listLocations, listServicesAt, requireLocation } from './directory-service.ts';
import { checkFreeText } from './free-text.ts';
import { madeOnce, recordMadeOnce } from './idempotency.ts';
import { clientOfAddress, FixedWindowRateLimiter } from './rate-limiter.ts';
import { reachableContactsOf } from './reachable-contacts.ts';
import { publishClientCreated } from './webhooks/events.ts';

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
  policy: PublicBookingPolicy;
  /** As read with it: the catalogue reads of a booking made now reuse what is kept for it. */
  catalogueVersion: number;
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
    catalogueVersion: row.catalogue_version,
    policy: {
      verification: row.public_verification,
      holdsPerContact: row.public_holds_per_contact,
      bookingsPerContactPerDay: row.public_bookings_per_contact_per_day,
      attemptsPerAddressPerHour: row.public_attempts_per_address_per_hour,
      bookingsPerOrganisationPerHour: row.public_bookings_per_organisation_per_hour,
      smsCountries: storedCountries(row.sms_countries),
    },
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

export interface PublicBookingRequest {
  locationSlug: string;
  serviceIds: string[];
  startsAt: number;
  firstName: string;
  lastName: string;
  phone?: string | undefined;
  email?: string | undefined;
  notes?: string | undefined;
  /** The client address the form came from (the attempts cap). */
  address: string;
  /** A recurring series (design.md 9.5); absent: one booking. */
  repeat?: Repeat | undefined;
  /** The stylist chosen; absent: anyone free. */
  staffId?: string | undefined;
  /**
   * The form's own key (formKey()): a form makes one booking. Sent again (Back, then Confirm once
   * more), it leads to the booking it made instead of booking the same person twice.
   */
  formKey?: string | undefined;
}

/** A fresh key for one booking form (128 random bits). */
export function formKey(): string {
  return randomBytes(16).toString('base64url');
}

/** A form key as formKey() writes it; anything else is no key. */
export function isFormKey(value: string | undefined): value is string {
  return value !== undefined && /^[A-Za-z0-9_-]{22}$/.test(value);
}

/** The idempotency record's key of a booking form (apart from any API caller's Idempotency-Key). */
const formRecordKey = (key: string) => `public-form:${key}`;

/** What a form's key made: the booking's page token, and who sent the form (senderOf). */
interface FormRecord {
  token: string;
  sender?: string;
}

/**
 * Who sent a form, as a digest of the contact it gave (digits of the phone, whatever their script,
 * the e-mail in lower case): a form sent again leads to the booking it made only for the same contact.
 * On a shared device, Back then another customer's details must not open the last customer's booking
 * (full-width or Arabic-Indic digits are digits here too, as the number they make is read with them).
 */
function senderOf(request: Pick<PublicBookingRequest, 'phone' | 'email'>): string {
  const phone = asciiDigits(request.phone ?? '').replace(/\D/g, '');
  const contact = `${phone}|${(request.email ?? '').trim().toLowerCase()}`;
  return createHash('sha256').update(contact).digest('base64url');
}

/** The booking a form made, for its sender; anybody else is told the form is spent. */
function tokenFor(record: FormRecord, sender: string): string {
  if (record.sender === undefined || record.sender === sender) return record.token;
  throw new AppError(
    'conflict',
    'This form has already made a booking. Start again from the booking page to make another.',
    'form_key',
  );
}

/**
 * Books as a customer would, as a stranger on the open internet may (design.md 9.1):
 * - each client address may try `attemptsPerAddressPerHour` times an hour (429 past it);
 * - a phone that is no person's own is refused (newClientDetails); the proof goes by SMS to a phone in
 *   a country the organisation texts, else to the e-mail (400 when neither can carry it and a proof
 *   is asked; with `none` the contact is only recorded, for the caps);
 * - under the contact's turn: at most `holdsPerContact` unconfirmed public holds and
 *   `bookingsPerContactPerDay` public bookings in 24 hours per phone or e-mail (429 past either), a
 *   Gmail address counted by its inbox, whatever its dots and tags (inboxOfEmail);
 * - the booking gets a client record of its own (never an existing client's, whatever it typed) and,
 *   with `public_verification: code`, waits as a pending_confirmation hold for the code sent to that
 *   contact (contact-proof.ts), the only message it sends until then.
 * The booking's page token, where the customer goes on.
 */
export async function bookOnPublicPage(
  deps: AppDeps,
  publicBaseUrl: string,
  organisation: PublicOrganisation,
  request: PublicBookingRequest,
): Promise<string> {
  const now = deps.clock.nowMs();
  const { policy } = organisation;
  const once = request.formKey === undefined ? undefined : formRecordKey(request.formKey);
  const sender = senderOf(request);
  const made = once && (await madeOnce(deps.db, organisation.id, once, now));
  if (made) return tokenFor(made as FormRecord, sender);
  await takeAttempt(deps, organisation, request.address, now);
  if (!request.phone && !request.email) {
    throw new AppError(
      'invalid_request',
      'Give a phone number or an e-mail address, so we can reach you.',
      'phone',
    );
  }
  // Checked before anything is written, as createBooking would after it.
  checkFreeText(request.notes, NOTES_MAX_LENGTH, 'notes');
  if (request.repeat) checkPublicSeries(organisation, request.repeat);
  const location = await requireLocation(
    deps.db,
    organisation.id,
    request.locationSlug,
    'location',
    organisation.catalogueVersion,
  );
  const details = newClientDetails({
    firstName: request.firstName,
    lastName: request.lastName,
    phone: request.phone && phoneAsDialledAt(request.phone, location.country),
    email: request.email,
  });
  const contact = await publicContactOf(deps, organisation, details.contact);
  return withCheckoutsOpenedFirst(deps.payments, (opener) =>
    writeTransaction(deps.db, async (trx) => {
      if (once) {
        // The form sent twice at once: the second waits for the first, and finds its booking.
        await takeTurn(trx, idempotencyKeyTurn(organisation.id, once));
        const first = await madeOnce(trx, organisation.id, once, now);
        if (first) return tokenFor(first as FormRecord, sender);
      }
      for (const turn of publicContactTurns(organisation.id, details.contact)) await takeTurn(trx, turn);
      await checkContactCaps(trx, organisation, details.contact, now);
      const client = await insertUnprovenClient(trx, organisation.id, details, now);
      // Without the code step the record is the booking's client for good, never adopted by a proof
      // later: integrators hear of it now (with the step, when the contact is proven and it goes on file).
      if (policy.verification === 'none') await publishClientCreated(trx, organisation.id, client, now);
      const caller: Caller = {
        organisationId: organisation.id,
        currency: organisation.currency,
        referencePrefix: organisation.referencePrefix,
        catalogueVersion: organisation.catalogueVersion,
        actor: 'page:public',
        // The bookings table knows the API, MCP, import and staff; the page books through the API's use case.
        source: 'api',
      };
      const booking = {
        locationSlug: request.locationSlug,
        serviceIds: request.serviceIds,
        staffId: request.staffId,
        clientId: client.id,
        startsAt: request.startsAt,
        notes: request.notes,
      };
      const checkout = {
        payments: deps.payments,
        opener,
        publicBaseUrl,
        hostedFlow: true,
        publicContact: { contact, askProof: policy.verification === 'code' },
      };
      // A series is one booking for the caps, with one proof: its first visit's (createSeries).
      const created = request.repeat
        ? (await createSeries(trx, caller, booking, request.repeat, now, checkout)).occurrences[0]!
        : await createBooking(trx, caller, booking, now, checkout);
      // Counted once the time is secured: a booking refused (a time taken) takes no place of the hour.
      await takeOrganisationPlace(deps, organisation, now, BOOKING_PLACES);
      opener?.endOfWork();
      const token = created.booking.pageToken!;
      if (once) await recordMadeOnce(trx, organisation.id, once, now, { token, sender } satisfies FormRecord);
      return token;
    }),
  );
}

/**
 * The most visits a series booked on the public page may have, the first included: a series counts as
 * one booking for the caps, and its visits are held until the first one's code is typed (a stranger's
 * unproven series holds at most this many times, for the hold's minutes); longer series (REPEAT_LIMITS
 * allows 26) are booked by the salon.
 */
const PUBLIC_SERIES_MAX_VISITS = 6;
/** The visits of a series booked on the public page: its label, its field's bounds and its refusals. */
export const PUBLIC_SERIES_VISITS: SeriesVisits = {
  min: REPEAT_LIMITS.count.min,
  max: PUBLIC_SERIES_MAX_VISITS,
  refusal(visits) {
    const range = `Online, a series has ${REPEAT_LIMITS.count.min} to ${PUBLIC_SERIES_MAX_VISITS} visits.`;
    return visits > PUBLIC_SERIES_MAX_VISITS ? `${range} Call the salon for more.` : range;
  },
};

/**
 * A series is taken on the public page only where its contact is proven first (policy code): with
 * none, each visit would be confirmed for whoever typed the contact, past the per-day cap.
 */
function checkPublicSeries(organisation: PublicOrganisation, repeat: Repeat): void {
  if (organisation.policy.verification !== 'code') {
    throw new AppError(
      'invalid_request',
      'Repeat bookings are made by phone or at the salon.',
      'repeat_every_weeks',
    );
  }
  const visits = PUBLIC_SERIES_VISITS;
  if (repeat.count < visits.min || repeat.count > visits.max) {
    throw new AppError('invalid_request', visits.refusal(repeat.count), 'repeat_count');
  }
}

/**
 * Where a public booking's proof goes: its phone by SMS when the organisation may text it, otherwise
 * its e-mail, of the contacts a message can reach (reachable-contacts.ts). With no proof asked
 * (policy none) a contact is still recorded, for the caps.
 */
async function publicContactOf(
  deps: AppDeps,
  organisation: PublicOrganisation,
  given: { phone: string | null; email: string | null },
): Promise<PublicContact> {
  const reachable = await reachableContactsOf(deps, organisation, given);
  const proof = proofChannel(reachable);
  if (proof) return { ...given, proof };
  if (organisation.policy.verification === 'none') {
    if (given.phone !== null) return { ...given, proof: { channel: 'sms', to: given.phone } };
    if (given.email !== null) return { ...given, proof: { channel: 'email', to: given.email } };
  }
  throw reachable.refusal('so we can send you the code that confirms your booking');
}

/**
 * The address's attempts this hour: a form post that reaches the booking counts whatever becomes of it
 * (a replay of a form that booked is no new attempt, nor a post refused for its form alone, no time
 * chosen or a series' length out of range, which reads and writes nothing). A salon that allows none
 * has turned its page's form off: `closed` says so, with no time to try again after.
 */
export async function takeAttempt(
  deps: AppDeps,
  organisation: PublicOrganisation,
  address: string,
  now: number,
  closed: string = TAKES_NO_BOOKINGS,
): Promise<void> {
  if (organisation.policy.attemptsPerAddressPerHour === 0) throw new AppError('rate_limited', closed);
  const hours = new FixedWindowRateLimiter(deps.rateLimitStore, 3_600_000);
  const windowEnd = hours.windowEnd(now);
  const taken = await deps.rateLimitStore.incrementBelow(
    { organisationId: organisation.id, name: `public-attempts:${clientOfAddress(address)}` },
    organisation.policy.attemptsPerAddressPerHour,
    windowEnd,
  );
  if (taken === null) {
    const minutes = Math.max(1, Math.ceil((windowEnd - now) / 60_000));
    throw new AppError(
      'rate_limited',
      `Too many booking attempts from your connection this hour. Try again in ${counted(minutes, 'minute')}, or call the salon.`,
      undefined,
      { retryAfterSeconds: (windowEnd - now) / 1000 },
    );
  }
}

/** The per-contact caps, read under the contact's turn: 429 rate_limited past either. */
async function checkContactCaps(
  trx: Db,
  organisation: PublicOrganisation,
  contact: { phone: string | null; email: string | null },
  now: number,
): Promise<void> {
  const { policy } = organisation;
  if (policy.holdsPerContact === 0 || policy.bookingsPerContactPerDay === 0) {
    throw new AppError('rate_limited', TAKES_NO_BOOKINGS);
  }
  if ((await countLivePublicHolds(trx, organisation.id, contact, now)) >= policy.holdsPerContact) {
    const one = policy.holdsPerContact === 1;
    const them = one ? 'it' : 'them';
    // With the code turned off no code was sent: what such a booking waits for is its deposit.
    const finish =
      policy.verification === 'none'
        ? `Pay the deposit from ${one ? 'its' : 'each one’s'} page`
        : `Confirm ${them} with the code we sent`;
    throw new AppError(
      'rate_limited',
      `You already have ${one ? 'a booking' : `${policy.holdsPerContact} bookings`} waiting to be confirmed with this phone number or e-mail address. ${finish} (or let ${them} lapse) before booking again.`,
    );
  }
  const today = await countPublicBookingsSince(trx, organisation.id, contact, now - CONTACT_DAY_MS);
  if (today >= policy.bookingsPerContactPerDay) {
    throw new AppError(
      'rate_limited',
      `This phone number or e-mail address has made ${policy.bookingsPerContactPerDay} bookings on this page in the last 24 hours, the most it may; to book more, call the salon.`,
    );
  }
}

/** What the organisation's places of the hour on its public page are counted for, and how a refusal says it. */
export interface OrganisationPlaces {
  /** The rate-limit store's counter (per organisation). */
  counter: string;
  /** What is taken ("bookings"), in "This salon takes 30 bookings an hour on this page". */
  things: string;
}

/** The booking form's places. */
const BOOKING_PLACES: OrganisationPlaces = { counter: 'public-bookings', things: 'bookings' };

/**
 * One of the organisation's `bookingsPerOrganisationPerHour` places of the clock hour for `places`
 * (the booking form's bookings, or the waitlist form's requests: each its own counter), across every
 * contact and address, or 429 (the booking or entry, made in the caller's transaction, is then rolled
 * back): whoever has many addresses and a mail domain of their own, each passing the caps per contact
 * and per address, can neither hold the whole diary nor have a code or an offer sent for every time in it.
 */
export async function takeOrganisationPlace(
  deps: AppDeps,
  organisation: PublicOrganisation,
  now: number,
  places: OrganisationPlaces,
): Promise<void> {
  const limit = organisation.policy.bookingsPerOrganisationPerHour;
  const hours = new FixedWindowRateLimiter(deps.rateLimitStore, 3_600_000);
  const windowEnd = hours.windowEnd(now);
  const counter = { organisationId: organisation.id, name: places.counter };
  if ((await deps.rateLimitStore.incrementBelow(counter, limit, windowEnd)) === null) {
    const minutes = Math.max(1, Math.ceil((windowEnd - now) / 60_000));
    throw new AppError(
      'rate_limited',
      `This salon takes ${limit} ${places.things} an hour on this page, and this hour's are taken. Try again in ${counted(minutes, 'minute')}, or call the salon.`,
      undefined,
      { retryAfterSeconds: (windowEnd - now) / 1000 },
    );
  }
}
