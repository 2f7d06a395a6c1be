import { sql, type Updateable } from 'kysely';
import type { Booking, Fee } from '../domain/booking/booking.ts';
import type { BookingStatus } from '../domain/booking/state-machine.ts';
import type { Visit } from '../domain/booking/usual.ts';
import { insertRows } from './compiled-insert.ts';
import { type Db, dialectOf } from './database.ts';
import { RECORD_COLUMNS, upsertIdempotencyRecord } from './idempotency-records.ts';
import { literalLimit } from './literal-limit.ts';
import { insertOutboxMessages, type NewOutboxRow } from './outbox-repository.ts';
import { THEN_COMMIT } from './postgres-transaction-edges.ts';
import { type PreparedQuery, preparedQuery } from './prepared-query.ts';
import type {
  BookingEventsTable,
  BookingFeesTable,
  BookingPagesTable,
  BookingServicesTable,
  BookingsTable,
  ContactProofsTable,
  Database,
  IdempotencyRecordsTable,
} from './tables.ts';
import { RedoTransaction } from './write-transaction.ts';

/** Bookings with their service segments, fees and event log. Every function is organisation-scoped. */

/**
 * Whether the database refused a write because the booking would overlap a live booking of its staff
 * member: SQLite's overlap triggers raise 'booking_overlap'; PostgreSQL's exclusion constraint, its
 * one guard (it sees concurrent transactions' rows), fails with exclusion_violation (23P01).
 */
export function isOverlapRefusal(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return error.message.includes('booking_overlap') || code === '23P01';
}

export async function insertBooking(
  trx: Db,
  row: BookingsTable,
  segments: BookingServicesTable[],
): Promise<void> {
  await trx.insertInto('bookings').values(row).execute();
  await trx.insertInto('booking_services').values(segments).execute();
}

/** Everything a new booking writes at once: the booking, its segments, first event, page and messages. */
export interface NewBookingRows {
  booking: BookingsTable;
  segments: BookingServicesTable[];
  /** Its first event (seq 1: eventRow). */
  event: BookingEventsTable;
  page: BookingPagesTable;
  outbox: NewOutboxRow[];
  /** A public-page booking's contact and its proof (contact-proof.ts). */
  proof?: ContactProofsTable | undefined;
  /**
   * The response recorded under the request's Idempotency-Key (idempotency.ts), written with the
   * booking: over a record past its window, as idempotency's own store does.
   */
  idempotency?: IdempotencyRecordsTable | undefined;
}

/**
 * Writes a new booking and the rows that come with it, unless its reference is taken already: then
 * nothing is written and the answer is false (the caller draws another). The unique index decides, so
 * two writers that drew one reference at once (at different locations, under different turns) cannot
 * both have it, and no read comes first.
 *
 * On PostgreSQL that is one statement, one round trip under the location's turn instead of five: each
 * INSERT is a data-modifying CTE, the rows travel as one JSON parameter per table
 * (json_populate_record(set), typed by the table itself, the columns named as the rows name them so
 * that any other column keeps its default), and the rows that belong to the booking are inserted only
 * if the booking was (`WHERE EXISTS`). The statement fails whole, as the separate INSERTs would have
 * failed the transaction: an overlap refused by the exclusion constraint or the trigger is the same
 * error (isOverlapRefusal), and the foreign keys of the other rows are checked at its end, when the
 * booking is there. On SQLite (whose WITH takes no INSERT, and where there are no round trips), one
 * INSERT per table.
 *
 * `lastStatement`: nothing follows in the caller's transaction, so on PostgreSQL its COMMIT goes in the
 * same round trip (THEN_COMMIT), and the location's turn is let go with it, a round trip sooner. A
 * taken reference has then ended the transaction with nothing of the booking written: that is thrown
 * as RedoTransaction, for writeTransaction to run the whole unit of work again.
 */
export async function insertNewBooking(
  trx: Db,
  rows: NewBookingRows,
  options: { lastStatement?: boolean } = {},
): Promise<boolean> {
  if (dialectOf(trx) === 'sqlite') {
    const inserted = await insertRows(trx, 'bookings', [rows.booking], ['organisation_id', 'reference']);
    if (inserted === 0n) return false;
    await insertRows(trx, 'booking_services', rows.segments);
    await insertRows(trx, 'booking_events', [rows.event]);
    await insertRows(trx, 'booking_pages', [rows.page]);
    await insertOutboxMessages(trx, rows.outbox);
    if (rows.proof) await insertRows(trx, 'contact_proofs', [rows.proof]);
    if (rows.idempotency) await upsertIdempotencyRecord(trx, rows.idempotency);
    return true;
  }
  const belonging = [
    sql`segments AS (${insertBelonging('booking_services', rows.segments)})`,
    sql`event AS (${insertBelonging('booking_events', [rows.event])})`,
    sql`page AS (${insertBelonging('booking_pages', [rows.page])})`,
    // A client with neither phone nor e-mail gets no messages.
    ...(rows.outbox.length > 0 ? [sql`messages AS (${insertBelonging('outbox', rows.outbox)})`] : []),
    ...(rows.proof ? [sql`proof AS (${insertBelonging('contact_proofs', [rows.proof])})`] : []),
    ...(rows.idempotency
      ? [
          sql`record AS (${insertBelonging('idempotency_records', [rows.idempotency])}
            ON CONFLICT (organisation_id, idempotency_key) DO UPDATE SET ${sql.join(
              RECORD_COLUMNS.map((column) => sql`${sql.ref(column)} = EXCLUDED.${sql.ref(column)}`),
            )})`,
        ]
      : []),
  ];
  const columns = columnsOf(rows.booking);
  const written = await sql<{ id: string }>`
    WITH booking AS (
      INSERT INTO bookings (${columns})
      SELECT ${columns} FROM json_populate_record(NULL::bookings, ${JSON.stringify(rows.booking)}::json)
      ON CONFLICT (organisation_id, reference) DO NOTHING
      RETURNING id
    ), ${sql.join(belonging)}
    SELECT id FROM booking${sql.raw(options.lastStatement ? THEN_COMMIT : '')}`.execute(trx);
  if (written.rows.length > 0) return true;
  if (options.lastStatement) throw new RedoTransaction();
  return false;
}

/** The columns a row names, in its order. */
function columnsOf(row: object) {
  return sql.join(Object.keys(row).map((column) => sql.ref(column)));
}

/** The INSERT of rows of `table` that belong to the booking of the statement's `booking` CTE. */
function insertBelonging(table: keyof Database, rows: readonly object[]) {
  const columns = columnsOf(rows[0]!);
  return sql`INSERT INTO ${sql.table(table)} (${columns})
    SELECT ${columns} FROM json_populate_recordset(NULL::${sql.table(table)}, ${JSON.stringify(rows)}::json)
    WHERE EXISTS (SELECT 1 FROM booking)`;
}

export async function updateBooking(
  trx: Db,
  organisationId: string,
  id: string,
  changes: Updateable<BookingsTable> & { updated_at: number },
): Promise<void> {
  await trx
    .updateTable('bookings')
    .set(changes)
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .execute();
}

/**
 * updateBooking where the booking still has `status` (PostgreSQL checks it again on the row as the
 * last writer committed it); whether it had.
 */
export async function updateBookingIn(
  trx: Db,
  organisationId: string,
  id: string,
  status: BookingsTable['status'],
  changes: Updateable<BookingsTable> & { updated_at: number },
): Promise<boolean> {
  const result = await trx
    .updateTable('bookings')
    .set(changes)
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .where('status', '=', status)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * On PostgreSQL, locks the booking's row to the end of the transaction, as the hold sweeper's writes
 * do (expireHolds), before a write that also touches the booking's other rows (its checkouts): taken
 * first, both wait for each other in one order instead of deadlocking, and what is read after it is
 * the row as the last writer committed it.
 */
export async function lockBookingRow(trx: Db, organisationId: string, id: string): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  await trx
    .selectFrom('bookings')
    .select('id')
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .forNoKeyUpdate()
    .execute();
}

export interface BookingEvent {
  organisationId: string;
  bookingId: string;
  from: BookingStatus | null;
  to: BookingStatus;
  /** Who: `api_key:<id>`, `mcp:<key id>`, `staff`, `system:sweeper`, `payment`, `import`. */
  actor: string;
  at: number;
  details?: Record<string, unknown>;
}

/**
 * Appends to the append-only log; the sequence number is the booking's next, inside the caller's
 * transaction (a new booking's first event is 1 without asking).
 */
export async function appendEvent(
  trx: Db,
  event: BookingEvent,
  options: { first?: boolean } = {},
): Promise<void> {
  const last = options.first
    ? undefined
    : await trx
        .selectFrom('booking_events')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .where('organisation_id', '=', event.organisationId)
        .where('booking_id', '=', event.bookingId)
        .executeTakeFirst();
  await trx
    .insertInto('booking_events')
    .values(eventRow(event, Number(last?.seq ?? 0) + 1))
    .execute();
}

/** The booking_events row of `event` as its booking's `seq`th. */
export function eventRow(event: BookingEvent, seq: number): BookingEventsTable {
  return {
    organisation_id: event.organisationId,
    booking_id: event.bookingId,
    seq,
    from_status: event.from,
    to_status: event.to,
    actor: event.actor,
    occurred_at: event.at,
    details: event.details ? JSON.stringify(event.details) : null,
  };
}

export async function upsertFee(trx: Db, fee: BookingFeesTable): Promise<void> {
  await trx
    .insertInto('booking_fees')
    .values(fee)
    .onConflict((oc) =>
      oc.columns(['organisation_id', 'booking_id', 'kind']).doUpdateSet({
        status: fee.status,
        fee_percentage: fee.fee_percentage,
        amount_minor: fee.amount_minor,
        deposit_credit_minor: fee.deposit_credit_minor,
        charge_amount_minor: fee.charge_amount_minor,
        failure_reason: fee.failure_reason,
        processed_at: fee.processed_at,
        payment_ref: fee.payment_ref ?? null,
      }),
    )
    .execute();
}

/** The booking with this reference (already normalised), with what presenting it needs. */
export async function findBookingByReference(
  db: Db,
  organisationId: string,
  reference: string,
): Promise<Booking | undefined> {
  const row = await bookingsWithLocation(db, organisationId)
    .where('bookings.reference', '=', reference)
    .executeTakeFirst();
  return row && (await withDetails(db, [row]))[0];
}

/** Which of these references (already normalised) the organisation has a booking with. */
export async function existingReferences(
  db: Db,
  organisationId: string,
  references: readonly string[],
): Promise<string[]> {
  if (references.length === 0) return [];
  const rows = await db
    .selectFrom('bookings')
    .select('reference')
    .where('organisation_id', '=', organisationId)
    .where('reference', 'in', references)
    .execute();
  return rows.map((row) => row.reference);
}

/** The booking with this id, with what presenting it needs (a webhook event's data). */
export async function findBookingById(
  db: Db,
  organisationId: string,
  id: string,
): Promise<Booking | undefined> {
  const row = await bookingsWithLocation(db, organisationId).where('bookings.id', '=', id).executeTakeFirst();
  return row && (await withDetails(db, [row]))[0];
}

/** The reference of the booking with this id (what the API addresses it by). */
export async function referenceOfBooking(
  db: Db,
  organisationId: string,
  id: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('bookings')
    .select('reference')
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.reference;
}

/** How a series repeats, as it was booked; undefined for an id the organisation has no series of. */
export async function findSeriesRule(
  db: Db,
  organisationId: string,
  seriesId: string,
): Promise<{ everyWeeks: number; count: number } | undefined> {
  const row = await db
    .selectFrom('booking_series')
    .select(['every_weeks', 'count'])
    .where('organisation_id', '=', organisationId)
    .where('id', '=', seriesId)
    .executeTakeFirst();
  return row && { everyWeeks: Number(row.every_weeks), count: Number(row.count) };
}

/** The occurrences of a series, in time order, whatever their status. */
export async function findBookingsOfSeries(
  db: Db,
  organisationId: string,
  seriesId: string,
): Promise<Booking[]> {
  const rows = await bookingsWithLocation(db, organisationId)
    .where('bookings.series_id', '=', seriesId)
    .orderBy('bookings.starts_at')
    .execute();
  return withDetails(db, rows);
}

/** How many visits booked ahead the usual reads: more than the longest series (26 visits). */
const VISITS_AHEAD_READ = 40;

/**
 * The client's visits that were kept or are booked (completed, confirmed, needs_checkout): the latest
 * `limit` that have started and the soonest VISITS_AHEAD_READ ahead, each with its services in order,
 * its zone and its series' interval: what the client's usual is read from (domain/booking/usual.ts).
 */
export async function findVisitsOfClient(
  db: Db,
  organisationId: string,
  clientId: string,
  limit: number,
  now: number,
): Promise<Visit[]> {
  // The latest that have started, and those booked ahead (soonest first, a whole series of them): a
  // long series ahead must not hide the past, and the next visit falls due only after the last booked.
  const [past, ahead] = await Promise.all([
    visitsQuery(db, organisationId, clientId)
      .where('bookings.starts_at', '<=', now)
      .orderBy('bookings.starts_at', 'desc')
      .limit(limit)
      .execute(),
    visitsQuery(db, organisationId, clientId)
      .where('bookings.starts_at', '>', now)
      .orderBy('bookings.starts_at')
      .limit(VISITS_AHEAD_READ)
      .execute(),
  ]);
  const rows = [...past, ...ahead];
  if (rows.length === 0) return [];
  const segments = await db
    .selectFrom('booking_services')
    .select(['booking_id', 'service_id'])
    .where('organisation_id', '=', organisationId)
    .where(
      'booking_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('booking_id')
    .orderBy('position')
    .execute();
  return rows.map((row) => ({
    startsAt: Number(row.starts_at),
    status: row.status,
    serviceIds: segments.filter((s) => s.booking_id === row.id).map((s) => s.service_id),
    staffId: row.staff_id,
    locationId: row.location_id,
    timezone: row.timezone,
    seriesId: row.series_id,
    seriesEveryWeeks: row.every_weeks === null ? null : Number(row.every_weeks),
  }));
}

function visitsQuery(db: Db, organisationId: string, clientId: string) {
  return db
    .selectFrom('bookings')
    .innerJoin('locations', 'locations.id', 'bookings.location_id')
    .leftJoin('booking_series', (join) =>
      join
        .onRef('booking_series.organisation_id', '=', 'bookings.organisation_id')
        .onRef('booking_series.id', '=', 'bookings.series_id'),
    )
    .select([
      'bookings.id',
      'bookings.starts_at',
      'bookings.status',
      'bookings.staff_id',
      'bookings.location_id',
      'locations.timezone',
      'bookings.series_id',
      'booking_series.every_weeks',
    ])
    .where('bookings.organisation_id', '=', organisationId)
    .where('bookings.client_id', '=', clientId)
    .where('bookings.status', 'in', ['completed', 'confirmed', 'needs_checkout']);
}

/**
 * The client's bookings in the given statuses that start at or after `from` (or exactly `at`),
 * soonest first, at most `limit`: what a receptionist needs to find "my appointment" without its
 * reference, or the one a caller already holds at a given time. With `liveAt`, a hold lapsed by then
 * (effectiveStatus: expired, whether or not the sweeper has written it) is left out in the query, so
 * it takes no place among the `limit`.
 */
export async function findBookingsOfClient(
  db: Db,
  organisationId: string,
  clientId: string,
  options: { statuses: readonly BookingStatus[]; limit: number; liveAt?: number } & (
    | { from: number }
    | { at: number }
  ),
): Promise<Booking[]> {
  const at = 'at' in options;
  const query = clientBookingsQuery(
    at ? '=' : '>=',
    options.statuses,
    options.limit,
    options.liveAt !== undefined,
  );
  const rows = await query.rows(db, {
    organisationId,
    clientId,
    instant: at ? options.at : options.from,
    now: options.liveAt ?? 0,
  });
  return withDetails(db, rows);
}

type ClientBookingsQuery = PreparedQuery<
  { organisationId: string; clientId: string; instant: number; now: number },
  BookingRowWithLocation
>;

/** findBookingsOfClient's queries by their shape: a handful, fixed by the code that asks. */
const clientBookingsQueries = new Map<string, ClientBookingsQuery>();

function clientBookingsQuery(
  startsAtIs: '=' | '>=',
  statuses: readonly BookingStatus[],
  limit: number,
  liveOnly: boolean,
): ClientBookingsQuery {
  const shape = `${startsAtIs} ${statuses.join(',')} ${limit} ${liveOnly}`;
  let query = clientBookingsQueries.get(shape);
  if (query === undefined) {
    query = preparedQuery((db, param) =>
      bookingsWithLocation(db, param('organisationId'))
        .where('bookings.client_id', '=', param('clientId'))
        .where('bookings.starts_at', startsAtIs, param('instant'))
        .where('bookings.status', 'in', statuses)
        // A hold lapses at its hold's end or at its start, whichever comes first (effectiveStatus).
        .$if(liveOnly, (q) =>
          q.where((eb) =>
            eb.or([
              eb('bookings.status', 'not in', ['pending_payment', 'pending_confirmation']),
              eb.and([
                eb('bookings.starts_at', '>', param('now')),
                eb.or([
                  eb('bookings.hold_expires_at', 'is', null),
                  eb('bookings.hold_expires_at', '>', param('now')),
                ]),
              ]),
            ]),
          ),
        )
        .orderBy('bookings.starts_at')
        .limit(literalLimit(limit)),
    );
    clientBookingsQueries.set(shape, query);
  }
  return query;
}

function bookingsWithLocation(db: Db, organisationId: string) {
  return (
    db
      .selectFrom('bookings')
      .innerJoin('locations', 'locations.id', 'bookings.location_id')
      // The booking's page (booking_page_url), when one was issued.
      .leftJoin('booking_pages', (join) =>
        join
          .onRef('booking_pages.organisation_id', '=', 'bookings.organisation_id')
          .onRef('booking_pages.booking_id', '=', 'bookings.id'),
      )
      .selectAll('bookings')
      .select(['locations.slug as location_slug', 'locations.timezone', 'booking_pages.token as page_token'])
      .where('bookings.organisation_id', '=', organisationId)
  );
}

/** Bookings rows made whole with their services (in order) and fees: two queries however many. */
async function withDetails(db: Db, rows: BookingRowWithLocation[]): Promise<Booking[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const organisations = [...new Set(rows.map((r) => r.organisation_id))];
  const pendingPayment = rows
    .filter(
      (r) =>
        r.status === 'pending_payment' ||
        (r.status === 'pending_confirmation' && r.deposit_status === 'pending'),
    )
    .map((r) => r.id);
  const [segments, fees, sessions] = await Promise.all([
    db
      .selectFrom('booking_services')
      .select(['booking_id', 'service_id'])
      .where('organisation_id', 'in', organisations)
      .where('booking_id', 'in', ids)
      .orderBy('booking_id')
      .orderBy('position')
      .execute(),
    db
      .selectFrom('booking_fees')
      .selectAll()
      .where('organisation_id', 'in', organisations)
      .where('booking_id', 'in', ids)
      .execute(),
    // Only a booking waiting for its deposit has a payment link to show.
    pendingPayment.length === 0
      ? []
      : db
          .selectFrom('checkout_sessions')
          .select(['booking_id', 'id'])
          .where('organisation_id', 'in', organisations)
          .where('booking_id', 'in', pendingPayment)
          .where('status', 'in', ['open', 'abandoned'])
          .execute(),
  ]);
  return rows.map((row) =>
    toBooking(
      row,
      segments.filter((s) => s.booking_id === row.id).map((s) => s.service_id),
      fees.filter((f) => f.booking_id === row.id),
      sessions.find((session) => session.booking_id === row.id)?.id ?? null,
    ),
  );
}

/** A bookings row with its location's slug and zone, and its page's token when it has one. */
export type BookingRowWithLocation = BookingsTable & {
  location_slug: string;
  timezone: string;
  page_token?: string | null;
};

/** The one mapper from a bookings row (with its location's slug and zone) to the domain Booking. */
export function toBooking(
  row: BookingRowWithLocation,
  serviceIds: string[],
  fees: BookingFeesTable[],
  checkoutSessionId: string | null,
): Booking {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    reference: row.reference,
    status: row.status,
    locationId: row.location_id,
    locationSlug: row.location_slug,
    timezone: row.timezone,
    staffId: row.staff_id,
    clientId: row.client_id,
    serviceIds,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    blockedUntil: row.blocked_until,
    currency: row.currency,
    totalPriceMinor: row.total_price_minor,
    depositMinor: row.deposit_minor,
    depositStatus: row.deposit_status,
    notes: row.notes,
    holdExpiresAt: row.hold_expires_at,
    checkoutSessionId,
    pageToken: row.page_token ?? null,
    pendingRequirements: row.pending_requirements ? (JSON.parse(row.pending_requirements) as string[]) : [],
    protection: {
      applies: row.protection_applies === 1,
      lateCancellationFeePercentage: row.late_cancellation_fee_percentage,
      noShowFeePercentage: row.no_show_fee_percentage,
      setupStatus: row.protection_setup_status,
      paymentMethodSaved: row.payment_method_saved === 1,
      setupCompletedAt: row.protection_setup_completed_at,
    },
    fees: Object.fromEntries(fees.map((f) => [f.kind, toFee(f)])),
    cancelledAt: row.cancelled_at,
    depositRefunded: row.deposit_refunded === null ? null : row.deposit_refunded === 1,
    seriesId: row.series_id ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toFee(row: BookingFeesTable): Fee {
  return {
    kind: row.kind,
    status: row.status,
    currency: row.currency,
    feePercentage: row.fee_percentage,
    amountMinor: row.amount_minor,
    depositCreditMinor: row.deposit_credit_minor,
    chargeAmountMinor: row.charge_amount_minor,
    failureReason: row.failure_reason,
    processedAt: row.processed_at,
  };
}
