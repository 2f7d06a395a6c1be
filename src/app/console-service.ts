import { AsYouType, type CountryCode, isSupportedCountry } from 'libphonenumber-js';
import { DateTime } from 'luxon';
import { calendarsOf, closuresBetween } from '../data/availability-repository.ts';
import { findClientById } from '../data/client-repository.ts';
import type { Db } from '../data/database.ts';
import * as diary from '../data/diary-repository.ts';
import { findLocationById, listActiveLocations } from '../data/location-repository.ts';
import { findOrganisationById } from '../data/organisation-repository.ts';
import { activeStaffAt } from '../data/staff-repository.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { type Booking, type CreatedBooking, NOTES_MAX_LENGTH } from '../domain/booking/booking.ts';
import type { Repeat } from '../domain/booking/series.ts';
import { type BookingStatus, effectiveStatus } from '../domain/booking/state-machine.ts';
import type { Location, OfferedService, StaffRef } from '../domain/catalogue.ts';
import { AppError } from '../domain/errors.ts';
import type { OutboxMessage } from '../domain/outbox.ts';
import { searchFold } from '../domain/search-fold.ts';
import { createSeries } from './booking-series.ts';
import {
  type Caller,
  type CheckoutContext,
  createBooking,
  findLiveBookingAt,
  getBooking,
} from './booking-service.ts';
import { withCheckoutsOpenedFirst } from './checkouts-opened-first.ts';
import { findOrRegisterClient, type NewClientDetails, newClientDetails } from './client-service.ts';
import { normalisePhone, phoneAsDialledAt } from './contact.ts';
import { listServicesAt, requireLocation } from './directory-service.ts';
import { checkFreeText } from './free-text.ts';
import { messagesOfBooking } from './outbox-service.ts';

/**
 * What the staff console reads (design.md 8.4): a location's diary for a day or a week, one booking
 * with everything about it, clients by name, phone or e-mail. Reads only; every change the console
 * makes goes through the same use cases as the API and the CLI.
 */
export type DiaryBooking = diary.DiaryBooking;

export interface DiaryDay {
  date: string;
  /** Local midnight of the day, as an instant. */
  start: number;
  end: number;
  closure: { reason: string | null } | null;
  columns: {
    staff: StaffRef;
    /** Working hours that day, in local minutes since midnight. */
    hours: { startMinute: number; endMinute: number }[];
    timeOff: { start: number; end: number }[];
    bookings: DiaryBooking[];
  }[];
}

export interface Diary {
  location: Location;
  locations: Location[];
  days: DiaryDay[];
  /** Changes whenever a booking of the location does: what live updates compare. */
  stamp: string;
}

/**
 * The diary of a location for `days` (1 or 7) local days from `date` (YYYY-MM-DD), each booking's
 * status as of `now` (a hold whose time ran out is expired before the sweeper writes it so).
 */
export async function loadDiary(
  db: Db,
  organisationId: string,
  locationSlug: string | undefined,
  date: string,
  days: number,
  now: number,
): Promise<Diary> {
  const locations = (await listActiveLocations(db, organisationId, null, 100)).items;
  const location =
    locationSlug === undefined
      ? locations[0]
      : await requireLocation(db, organisationId, locationSlug, 'location');
  if (!location) throw new AppError('not_found', 'This organisation has no active location.', 'location');
  const first = DateTime.fromISO(date, { zone: location.timezone });
  if (!first.isValid || !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    throw new AppError('invalid_request', 'A date is YYYY-MM-DD.', 'date');
  }
  const dayStarts = Array.from({ length: days + 1 }, (_, i) => first.plus({ days: i }).startOf('day'));
  const window = { start: dayStarts[0]!.toMillis(), end: dayStarts[days]!.toMillis() };
  const staff = await activeStaffAt(db, organisationId, location.id);
  const ids = staff.map((s) => s.id);
  const lastDate = dayStarts[days - 1]!.toISODate()!;
  const [calendars, closures, bookings, stamp] = await Promise.all([
    calendarsOf(db, organisationId, location.id, ids, window),
    closuresBetween(db, organisationId, location.id, date, lastDate),
    diary.bookingsOfLocation(db, organisationId, location.id, window.start, window.end),
    diary.bookingsStamp(db, organisationId, location.id),
  ]);
  for (const b of bookings) b.status = statusAt(b, now);
  const closureOn = new Map(closures.map((c) => [c.date, c]));
  const result: DiaryDay[] = dayStarts.slice(0, days).map((day, i) => {
    const start = day.toMillis();
    const end = dayStarts[i + 1]!.toMillis();
    const closure = closureOn.get(day.toISODate()!);
    return {
      date: day.toISODate()!,
      start,
      end,
      closure: closure ? { reason: closure.reason } : null,
      columns: staff.map((member) => ({
        staff: member,
        hours: (calendars.workingHours.get(member.id) ?? [])
          .filter((h) => h.weekday === day.weekday)
          .map((h) => ({ startMinute: h.startMinute, endMinute: h.endMinute }))
          .sort((a, b) => a.startMinute - b.startMinute),
        // The diary marks external calendars' busy times as it marks time off: the staff see both.
        timeOff: [
          ...(calendars.timeOff.get(member.id) ?? []),
          ...(calendars.busy.get(member.id) ?? []),
        ].filter((t) => t.start < end && t.end > start),
        bookings: bookings.filter((b) => b.staff_id === member.id && b.starts_at < end && b.ends_at > start),
      })),
    };
  });
  return { location, locations, days: result, stamp };
}

/** The stamp of a location's bookings (see Diary.stamp); 404 for another organisation's location. */
export async function diaryStamp(db: Db, organisationId: string, locationSlug: string): Promise<string> {
  const location = await requireLocation(db, organisationId, locationSlug, 'location');
  return diary.bookingsStamp(db, organisationId, location.id);
}

export interface BookingDetail {
  booking: Booking;
  location: Location;
  client: { id: string; name: string; phone: string | null; email: string | null };
  staffName: string;
  services: { name: string; priceMinor: number }[];
  /** `by` says who in words ("desk@salon.test", "Phone agent (key Voice line)"); details are parsed. */
  events: {
    from: string | null;
    to: string;
    by: string;
    at: number;
    details: Record<string, unknown> | null;
  }[];
  /** The messages to the customer about it: sent, failed, logged, or still to go (the reminder). */
  messages: OutboxMessage[];
  /**
   * The refund of the deposit paid online that the payment provider refused for good (a payment after
   * the hold lapsed, say): staff return it by hand. Null when none was refused.
   */
  refusedRefund: RefusedRefund | null;
}

/** A refund the payment provider refused for good: when (epoch ms), and its reason as it gave it. */
export interface RefusedRefund {
  at: number;
  reason: string;
}

/**
 * What staff are told of a refund the payment provider refused for good, `when` it did in their words
 * (the console's local time, the CLI's UTC): the same sentence wherever they look.
 */
export function refusedRefundWords(refusal: RefusedRefund, when: string): string {
  const reason = refusal.reason.trim();
  const why = reason === '' ? '.' : `: “${reason}”${/[.!?]$/.test(reason) ? '' : '.'}`;
  return `The payment provider refused on ${when} to refund the deposit paid online${why} Return it by hand from the payment provider’s dashboard.`;
}

export async function loadBookingDetail(
  db: Db,
  organisationId: string,
  reference: string,
): Promise<BookingDetail> {
  const booking = await getBooking(db, organisationId, reference);
  const [location, client, services, events, staff, messages, refusedRefund] = await Promise.all([
    findLocationById(db, organisationId, booking.locationId),
    findClientById(db, organisationId, booking.clientId),
    diary.bookedServices(db, organisationId, booking.id),
    diary.eventsOfBooking(db, organisationId, booking.id),
    diary.staffNameOf(db, organisationId, booking.staffId),
    messagesOfBooking(db, organisationId, booking.id),
    diary.refusedRefundOf(db, organisationId, booking.id),
  ]);
  const [names, connectors] = await Promise.all([
    diary.actorNames(db, organisationId, {
      users: idsOfActors(events, ['user']),
      keys: idsOfActors(events, ['api_key', 'mcp']),
    }),
    diary.connectorNames(db, organisationId, idsOfActors(events, ['mcp'])),
  ]);
  return {
    booking,
    location: location!,
    client: {
      id: booking.clientId,
      name: client ? `${client.first_name} ${client.last_name}` : '?',
      phone: client?.phone ?? null,
      email: client?.email ?? null,
    },
    staffName: staff ?? '?',
    services: services.map((s) => ({ name: s.name, priceMinor: s.price_minor })),
    events: events.map((e) => ({
      from: e.from_status,
      to: e.to_status,
      by: actorInWords(e.actor, names, connectors),
      at: e.occurred_at,
      details: parsedDetails(e.details),
    })),
    messages,
    refusedRefund: refusedRefund ?? null,
  };
}

export interface ClientMatch {
  id: string;
  name: string;
  phone: string | null;
  email: string | null;
  /** The next bookings, soonest first. */
  bookings: ClientBooking[];
  /** The last bookings before now, latest first. */
  pastBookings: ClientBooking[];
}

export interface ClientBooking {
  reference: string;
  status: string;
  startsAt: number;
  timezone: string;
  locationName: string;
}

/**
 * Clients matching every word of `query` (name, phone digits or e-mail), each with its next and last bookings. A
 * phone number is found however the desk types it: international ("+44 7911 000111", "0044…"), or
 * national in the country of one of the organisation's locations ("07911 000111"), as lookup_client
 * reads a caller's number; whole, or its beginning once that has 3 digits past the country code and
 * trunk prefix (so "0" or "+44" alone does not find every client).
 */
export async function searchClients(
  db: Db,
  organisationId: string,
  query: string,
  now: number,
): Promise<ClientMatch[]> {
  if (query.trim() === '') return [];
  // A word that folds to nothing (accents alone) would match every client: it is not a word.
  const tokens = query
    .slice(0, 100)
    .toLowerCase()
    .split(/\s+/)
    .filter((token) => searchFold(token) !== '')
    .slice(0, 8);
  if (tokens.length === 0) return [];
  const countries = tokens.some((token) => NUMBER_WORD.test(token))
    ? (await listActiveLocations(db, organisationId, null, 100)).items.map((l) => l.country)
    : [];
  const clients = await diary.searchClients(db, organisationId, searchTerms(tokens, countries), 20);
  return Promise.all(
    clients.map(async (c) => {
      const around = await diary.bookingsOfClientAround(db, organisationId, c.id, now, {
        ahead: 10,
        back: 5,
      });
      const shown = (b: (typeof around.next)[number]): ClientBooking => ({
        reference: b.reference,
        status: statusAt(b, now),
        startsAt: b.starts_at,
        timezone: b.timezone,
        locationName: b.location_name,
      });
      return {
        id: c.id,
        name: `${c.first_name} ${c.last_name}`,
        phone: c.phone,
        email: c.email,
        bookings: around.next.map(shown),
        pastBookings: around.before.map(shown),
      };
    }),
  );
}

/** A word that is a phone number or a group of one as typed: digits, with + ( ) - . / as people write them. */
const NUMBER_WORD = /^\+?[\d().\-/]*\d[\d().\-/]*$/;

/**
 * A search's terms (at most 5): each word on its own, but consecutive number words together, as one
 * number typed in groups ("+44 7911 000111"); a word beginning with "+" begins another number.
 */
function searchTerms(
  tokens: readonly string[],
  countries: readonly (string | null)[],
): diary.ClientSearchTerm[] {
  const groups: { words: string[]; number: boolean }[] = [];
  for (const token of tokens) {
    const number = NUMBER_WORD.test(token);
    const last = groups.at(-1);
    if (number && last?.number && !token.startsWith('+')) last.words.push(token);
    else groups.push({ words: [token], number });
  }
  return groups.slice(0, 5).map(({ words, number }) => ({
    words,
    phonePrefixes: number ? phonePrefixes(words.join(''), countries) : [],
  }));
}

/**
 * What a number as typed reads as in E.164: the whole number when it is valid (normalisePhone, as
 * phones are read everywhere else), and the beginning typed so far (libphonenumber's as-you-type
 * reading, which drops a trunk prefix such as the UK's 0) once it has 3 digits past the country code.
 * International with "+" or "00"; otherwise national, in each country of the organisation's locations.
 */
function phonePrefixes(typed: string, countries: readonly (string | null)[]): string[] {
  const compact = typed.replace(/[^\d+]/g, '').replace(/^00/, '+');
  const regions: (CountryCode | undefined)[] = compact.startsWith('+')
    ? [undefined]
    : [...new Set(countries)].filter((c): c is CountryCode => c !== null && isSupportedCountry(c));
  const prefixes = new Set<string>();
  for (const region of regions) {
    const whole = normalisePhone(compact, region);
    if (whole) prefixes.add(whole);
    const begun = new AsYouType(region);
    begun.input(compact);
    const value = begun.getNumberValue();
    if (value && begun.getNationalNumber().length >= 3) prefixes.add(value);
  }
  return [...prefixes];
}

/** The names of a location's active staff, by id (to say who a free time is with). */
export async function staffNamesAt(
  db: Db,
  organisationId: string,
  locationId: string,
): Promise<Map<string, string>> {
  return new Map((await activeStaffAt(db, organisationId, locationId)).map((s) => [s.id, s.name]));
}

/** The services offered at a location, by name (the console books in person, so all of them). */
export async function servicesOfferedAt(
  db: Db,
  organisationId: string,
  location: Location,
): Promise<OfferedService[]> {
  return (await listServicesAt(db, organisationId, location, { after: null, limit: 100 })).items;
}

export interface CallerBooking {
  locationSlug: string;
  serviceIds: string[];
  staffId: string;
  startsAt: number;
  client: { firstName: string; lastName: string; phone?: string | undefined; email?: string | undefined };
  notes?: string | undefined;
  /** A recurring series (design.md 9.5); absent: one booking. */
  repeat?: Repeat | undefined;
}

/**
 * Books a caller or a walk-in from the desk: the client is found or registered by phone or e-mail as
 * the API does, then the booking is made by the same use case as POST /v1/bookings, logged as the user
 * (at a location with Booking Protection, the hold MCP `book` makes, finished on the booking page).
 * Both in one transaction: a booking refused (the time taken meanwhile) registers nobody. A client on
 * file under another name than the one typed is told (`clientOnFile`): the booking is theirs.
 */
export async function bookForCaller(
  db: Db,
  user: { id: string; organisationId: string },
  input: CallerBooking,
  now: number,
  checkout: CheckoutContext,
): Promise<CreatedBooking & { existing?: true; clientOnFile?: true }> {
  const organisation = await findOrganisationById(db, user.organisationId);
  if (!organisation) throw new AppError('not_found', 'No such organisation.');
  // Checked before anything is written, as createBooking would after the client.
  checkFreeText(input.notes, NOTES_MAX_LENGTH, 'notes');
  const location = await requireLocation(db, user.organisationId, input.locationSlug, 'location');
  const phone = input.client.phone && phoneAsDialledAt(input.client.phone, location.country);
  const details = newClientDetails({ ...input.client, phone });
  const caller: Caller = {
    organisationId: organisation.id,
    currency: organisation.currency,
    referencePrefix: organisation.booking_reference_prefix,
    actor: `user:${user.id}`,
    source: 'staff',
  };
  const { repeat } = input;
  return withCheckoutsOpenedFirst(checkout.payments, (opener) =>
    writeTransaction(db, async (trx) => {
      const { client, created } = await findOrRegisterClient(trx, user.organisationId, details, {}, now);
      const onFile = !created && !sameName(client, details) ? { clientOnFile: true as const } : {};
      // The caller already holds a live booking here at that instant (the same form sent from a
      // second tab, or again): that booking, never a second one, as MCP book answers (design.md 8.2).
      // Asked for a series, only a series they hold is that answer (the series form sent twice); a
      // single visit held there is the series' first clash, as MCP book says.
      const held = await findLiveBookingAt(
        trx,
        user.organisationId,
        { clientId: client.id, locationSlug: location.slug, startsAt: input.startsAt },
        now,
      );
      if (held && (!repeat || held.seriesId !== null)) {
        return { booking: held, deposit: null, paymentUrl: null, notices: [], existing: true, ...onFile };
      }
      const booking = {
        locationSlug: input.locationSlug,
        serviceIds: input.serviceIds,
        staffId: input.staffId,
        clientId: client.id,
        startsAt: input.startsAt,
        notes: input.notes,
      };
      // The desk hands the caller the booking page, as the phone agent does: at a location with
      // Booking Protection the booking is a hold the customer finishes there (its link sent to them),
      // not a refusal that leaves the desk no way to book there at all.
      const own = { ...checkout, opener, hostedFlow: true };
      const made = repeat
        ? (await createSeries(trx, caller, booking, repeat, now, own)).occurrences[0]!
        : await createBooking(trx, caller, booking, now, own);
      opener?.endOfWork();
      return { ...made, ...onFile };
    }),
  );
}

/** Whether the name typed is the client's on file, as a person reads it (case and spacing aside). */
function sameName(client: { firstName: string; lastName: string }, typed: NewClientDetails): boolean {
  const fold = (name: string) => searchFold(name.trim().replace(/\s+/g, ' '));
  return fold(client.firstName) === fold(typed.firstName) && fold(client.lastName) === fold(typed.lastName);
}

const ACTORS: Record<string, string> = {
  staff: 'Staff (command line)',
  import: 'Catalogue import',
  'page:public': 'Customer (public booking page)',
  'page:customer': 'Customer (their booking page)',
  'payment:stripe': 'Stripe',
  'payment:local': 'Test payment',
  'system:sweeper': 'Hold expired',
  'system:lazy-expiry': 'Hold expired',
  'system:waitlist': 'Waitlist (time offered, or offer lapsed)',
};

function idsOfActors(events: readonly { actor: string }[], kinds: readonly string[]): string[] {
  const ids = events
    .map((e) => e.actor.split(':'))
    .filter(([kind, id]) => id !== undefined && kinds.includes(kind!))
    .map(([, id]) => id!);
  return [...new Set(ids)];
}

/**
 * Who made a change, as the desk knows them: an account's e-mail, a key's label, a connected app's
 * name (as the Connectors page shows it), a page.
 */
function actorInWords(
  actor: string,
  names: ReadonlyMap<string, string>,
  connectors: ReadonlyMap<string, string>,
): string {
  const fixed = ACTORS[actor];
  if (fixed) return fixed;
  const [kind, id = ''] = actor.split(':');
  const name = names.get(id);
  if (kind === 'user') return name ?? 'A former staff account';
  const app = kind === 'mcp' ? connectors.get(id) : undefined;
  if (app !== undefined) return `Connected app ${app}`;
  if (kind === 'mcp') return `Phone agent (key ${name ?? id.slice(0, 8)})`;
  if (kind === 'api_key') return `API (key ${name ?? id.slice(0, 8)})`;
  return actor;
}

function parsedDetails(details: string | null): Record<string, unknown> | null {
  if (details === null) return null;
  try {
    const parsed: unknown = JSON.parse(details);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : { note: details };
  } catch {
    return { note: details };
  }
}

/** A booking row's status as of `now`: a hold whose time ran out is expired (effectiveStatus). */
function statusAt(
  b: { status: BookingStatus; starts_at: number; hold_expires_at: number | null },
  now: number,
): BookingStatus {
  return effectiveStatus({ status: b.status, startsAt: b.starts_at, holdExpiresAt: b.hold_expires_at }, now);
}
