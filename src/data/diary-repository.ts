import { type RawBuilder, sql } from 'kysely';
import { MAX_BOOKING_SPAN_MS } from '../domain/booking/booking.ts';
import { COMBINING_ACCENTS_PATTERN, PLAIN_LATIN } from '../domain/search-fold.ts';
import { type Db, dialectOf } from './database.ts';
import { literalLimit } from './literal-limit.ts';
import type { BookingEventsTable, BookingStatus, ClientsTable } from './tables.ts';

/** What the console's diary and pages read, always inside one organisation. */
export interface DiaryBooking {
  reference: string;
  staff_id: string;
  status: BookingStatus;
  starts_at: number;
  ends_at: number;
  hold_expires_at: number | null;
  first_name: string;
  last_name: string;
  services: string;
  source: string;
}

/** The bookings of a location that overlap [start, end), with client names and service names. */
export async function bookingsOfLocation(
  db: Db,
  organisationId: string,
  locationId: string,
  start: number,
  end: number,
): Promise<DiaryBooking[]> {
  const rows = await db
    .selectFrom('bookings')
    .innerJoin('clients', (join) =>
      join
        .onRef('clients.id', '=', 'bookings.client_id')
        .onRef('clients.organisation_id', '=', 'bookings.organisation_id'),
    )
    .select([
      'bookings.id',
      'bookings.reference',
      'bookings.staff_id',
      'bookings.status',
      'bookings.starts_at',
      'bookings.ends_at',
      'bookings.hold_expires_at',
      'bookings.source',
      'clients.first_name',
      'clients.last_name',
    ])
    .where('bookings.organisation_id', '=', organisationId)
    .where('bookings.location_id', '=', locationId)
    .where('bookings.starts_at', '<', end)
    .where('bookings.ends_at', '>', start)
    .where('bookings.starts_at', '>', start - MAX_BOOKING_SPAN_MS)
    .orderBy('bookings.starts_at')
    .execute();
  if (rows.length === 0) return [];
  const names = await db
    .selectFrom('booking_services')
    .innerJoin('services', (join) =>
      join
        .onRef('services.id', '=', 'booking_services.service_id')
        .onRef('services.organisation_id', '=', 'booking_services.organisation_id'),
    )
    .select(['booking_services.booking_id', 'services.name'])
    .where('booking_services.organisation_id', '=', organisationId)
    .where(
      'booking_services.booking_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('booking_services.booking_id')
    .orderBy('booking_services.position')
    .execute();
  const byBooking = new Map<string, string[]>();
  for (const n of names) {
    const list = byBooking.get(n.booking_id) ?? [];
    list.push(n.name);
    byBooking.set(n.booking_id, list);
  }
  return rows.map(({ id, ...row }) => ({ ...row, services: (byBooking.get(id) ?? []).join(', ') }));
}

/**
 * A stamp that changes whenever a booking of the location does (made, moved, changed status): the
 * latest update and the count, which together catch inserts, updates and lapsed holds.
 */
export async function bookingsStamp(db: Db, organisationId: string, locationId: string): Promise<string> {
  const row = await db
    .selectFrom('bookings')
    .select([
      sql<number | string | null>`max(updated_at)`.as('latest'),
      sql<number | string>`count(*)`.as('count'),
    ])
    .where('organisation_id', '=', organisationId)
    .where('location_id', '=', locationId)
    .executeTakeFirstOrThrow();
  return `${row.latest ?? 0}-${row.count}`;
}

export function eventsOfBooking(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<BookingEventsTable[]> {
  return db
    .selectFrom('booking_events')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .orderBy('seq')
    .execute();
}

/**
 * The refund of a payment of the booking's deposit (its checkout's) that the payment provider refused
 * for good (migration 0037): when, and the provider's reason; undefined when none was refused.
 */
export async function refusedRefundOf(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<{ at: number; reason: string } | undefined> {
  const row = await db
    .selectFrom('checkout_sessions')
    .select(['refund_refused_at', 'refund_refusal'])
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('refund_refused_at', 'is not', null)
    .orderBy('refund_refused_at', 'desc')
    .executeTakeFirst();
  if (row?.refund_refused_at == null) return undefined;
  return { at: Number(row.refund_refused_at), reason: row.refund_refusal ?? '' };
}

/** The e-mails of the organisation's staff accounts and the labels of its keys among `ids` (event actors). */
export async function actorNames(
  db: Db,
  organisationId: string,
  ids: { users: readonly string[]; keys: readonly string[] },
): Promise<Map<string, string>> {
  const [users, keys] = await Promise.all([
    ids.users.length === 0
      ? []
      : db
          .selectFrom('users')
          .select(['id', 'email as name'])
          .where('organisation_id', '=', organisationId)
          .where('id', 'in', ids.users)
          .execute(),
    ids.keys.length === 0
      ? []
      : db
          .selectFrom('api_keys')
          .select(['id', 'label as name'])
          .where('organisation_id', '=', organisationId)
          .where('id', 'in', ids.keys)
          .execute(),
  ]);
  return new Map([...users, ...keys].map((row) => [row.id, row.name]));
}

/**
 * The names of the apps connected through the OAuth consent page among `ids` (design.md 9.3): their
 * changes are written as `mcp:<connector id>`, as an MCP key's are, and are told apart by this.
 */
export async function connectorNames(
  db: Db,
  organisationId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('oauth_connectors')
    .select(['id', 'client_name', 'client_id'])
    .where('organisation_id', '=', organisationId)
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((row) => [row.id, row.client_name ?? row.client_id]));
}

/**
 * A booking's services with the prices it was booked at (booking_services, in booking order): a
 * location's own price, not the catalogue's base price, so the lines add up to the booking's total.
 */
export function bookedServices(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<{ name: string; price_minor: number }[]> {
  return db
    .selectFrom('booking_services')
    .innerJoin('services', (join) =>
      join
        .onRef('services.organisation_id', '=', 'booking_services.organisation_id')
        .onRef('services.id', '=', 'booking_services.service_id'),
    )
    .select(['services.name', 'booking_services.price_minor'])
    .where('booking_services.organisation_id', '=', organisationId)
    .where('booking_services.booking_id', '=', bookingId)
    .orderBy('booking_services.position')
    .execute();
}

/** One part of a client search (a word, or the words of a phone number as typed: "07911 000111"). */
export interface ClientSearchTerm {
  /** Lower-cased words, each in a first or last name or the e-mail, or (3 digits or more) in the phone. */
  words: readonly string[];
  /** Or the stored phone (E.164) begins with one of these: the words read as a number, whole or begun. */
  phonePrefixes: readonly string[];
}

/** Clients matching every term, by name, at most `limit`. */
export function searchClients(
  db: Db,
  organisationId: string,
  terms: readonly ClientSearchTerm[],
  limit: number,
): Promise<ClientsTable[]> {
  let q = db.selectFrom('clients').selectAll().where('organisation_id', '=', organisationId);
  for (const term of terms) {
    q = q.where((eb) =>
      eb.or([
        eb.and(
          term.words.map((word) => {
            const pattern = searchFolded(db, sql`${`%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`);
            const digits = word.replace(/[^\d]/g, '');
            return eb.or([
              eb(searchFolded(db, sql.ref('first_name')), 'like', sql`${pattern} escape '\\'`),
              eb(searchFolded(db, sql.ref('last_name')), 'like', sql`${pattern} escape '\\'`),
              eb(searchFolded(db, sql.ref('email')), 'like', sql`${pattern} escape '\\'`),
              ...(digits.length >= 3 ? [eb('phone', 'like', `%${digits}%`)] : []),
            ]);
          }),
        ),
        // Only "+" and digits: nothing LIKE would read as a wildcard.
        ...term.phonePrefixes
          .filter((prefix) => /^\+\d+$/.test(prefix))
          .map((prefix) => eb('phone', 'like', `${prefix}%`)),
      ]),
    );
  }
  return q.orderBy('last_name').orderBy('first_name').orderBy('id').limit(literalLimit(limit)).execute();
}

/**
 * A client column, or a LIKE pattern, as the search compares it (searchFold), both sides folded in
 * the database alike: SQLite's search_fold (database.ts); on PostgreSQL the same steps in SQL. In a
 * PostgreSQL database whose encoding is not UTF8, where normalize() fails, both sides are lower()ed
 * only, as before there was a fold. Escaping before the fold is safe: no character folds into
 * `\`, `%` or `_`.
 */
function searchFolded(db: Db, value: RawBuilder<unknown>) {
  if (dialectOf(db) === 'sqlite') return sql`search_fold(${value})`;
  let folded = sql`translate(lower(regexp_replace(normalize(${value}, NFD), ${COMBINING_ACCENTS_PATTERN}, '', 'g')), '\u03c2', '\u03c3')`;
  for (const [letter, written] of PLAIN_LATIN) folded = sql`replace(${folded}, ${letter}, ${written})`;
  return sql`CASE WHEN current_setting('server_encoding') = 'UTF8' THEN ${folded} ELSE lower(${value}) END`;
}

/**
 * The client's bookings around `now`: the next `ahead` from it, soonest first, then the last `back`
 * before it, latest first. Not simply the latest starts: a weekly series booked months ahead would
 * fill those and hide the next visit, which is what the desk is asked for.
 */
export async function bookingsOfClientAround(
  db: Db,
  organisationId: string,
  clientId: string,
  now: number,
  counts: { ahead: number; back: number },
) {
  const ofClient = () =>
    db
      .selectFrom('bookings')
      .innerJoin('locations', 'locations.id', 'bookings.location_id')
      .select([
        'bookings.reference',
        'bookings.status',
        'bookings.starts_at',
        'bookings.hold_expires_at',
        'locations.timezone',
        'locations.name as location_name',
      ])
      .where('bookings.organisation_id', '=', organisationId)
      .where('bookings.client_id', '=', clientId);
  const [next, before] = await Promise.all([
    ofClient()
      .where('bookings.starts_at', '>=', now)
      .orderBy('bookings.starts_at', 'asc')
      .orderBy('bookings.id', 'asc')
      .limit(literalLimit(counts.ahead))
      .execute(),
    ofClient()
      .where('bookings.starts_at', '<', now)
      .orderBy('bookings.starts_at', 'desc')
      .orderBy('bookings.id', 'desc')
      .limit(literalLimit(counts.back))
      .execute(),
  ]);
  return { next, before };
}

export async function staffNameOf(
  db: Db,
  organisationId: string,
  staffId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('staff')
    .select('name')
    .where('organisation_id', '=', organisationId)
    .where('id', '=', staffId)
    .executeTakeFirst();
  return row?.name;
}
