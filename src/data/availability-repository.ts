import { sql } from 'kysely';
import type { BusyBooking, Interval, WorkingInterval } from '../domain/availability/types.ts';
import { MAX_BOOKING_SPAN_MS } from '../domain/booking/booking.ts';
import { type BookingStatus, LIVE_STATUSES } from '../domain/booking/state-machine.ts';
import type { OfferedService } from '../domain/catalogue.ts';
import { busyBlocksOf } from './calendar-repository.ts';
import { type ClientRow, findClientById } from './client-repository.ts';
import { type Db, dialectOf } from './database.ts';
import { type KeyRecordAsk, keyRecordAfterTurn, keyRecordAfterTurnStatement } from './idempotency-records.ts';
import { type PreparedQuery, preparedQuery } from './prepared-query.ts';
import { offeredServicesByIds } from './service-repository.ts';
import type { IdempotencyRecordsTable } from './tables.ts';
import { clientWaitingEntriesAt, type WaitlistEntryRow } from './waitlist-repository.ts';
import { takeTurn } from './write-locks.ts';

export interface StaffCandidate {
  id: string;
  name: string;
}

export type { OfferedService };
export { offeredServicesByIds };

/**
 * Active staff working at the location who deliver every one of the services: the only staff who
 * can take a booking of them there (or just the one asked about, if eligible). One query, however many
 * services.
 */
export async function eligibleStaff(
  db: Db,
  organisationId: string,
  locationId: string,
  serviceIds: readonly string[],
  onlyStaffId?: string,
): Promise<StaffCandidate[]> {
  if (serviceIds.length === 0) return [];
  return db
    .selectFrom('staff')
    .innerJoin('staff_locations', 'staff_locations.staff_id', 'staff.id')
    .innerJoin('staff_services', 'staff_services.staff_id', 'staff.id')
    .select(['staff.id', 'staff.name'])
    .where('staff.organisation_id', '=', organisationId)
    .where('staff.active', '=', 1)
    .where('staff_locations.location_id', '=', locationId)
    .where('staff_services.service_id', 'in', serviceIds)
    .$if(onlyStaffId !== undefined, (q) => q.where('staff.id', '=', onlyStaffId!))
    .groupBy(['staff.id', 'staff.name'])
    .having((eb) => eb.fn.count('staff_services.service_id'), '=', serviceIds.length)
    .orderBy('staff.name')
    .orderBy('staff.id')
    .execute();
}

/**
 * What the catalogue says of each staff member over a window of instants: hours, time off, and the
 * busy times of their external calendars (design.md 9.6), which come from the last good copy the
 * refresher kept, never from a fetch here. Busy times block like time off but are kept apart from it:
 * the staff member works then and is taken (StaffSchedule.busy), which is what a customer is told.
 */
export interface StaffCalendars {
  workingHours: Map<string, WorkingInterval[]>;
  timeOff: Map<string, Interval[]>;
  busy: Map<string, Interval[]>;
}

export async function calendarsOf(
  db: Db,
  organisationId: string,
  locationId: string,
  staffIds: readonly string[],
  window: Interval,
): Promise<StaffCalendars> {
  const calendars: StaffCalendars = { workingHours: new Map(), timeOff: new Map(), busy: new Map() };
  for (const id of staffIds) {
    calendars.workingHours.set(id, []);
    calendars.timeOff.set(id, []);
    calendars.busy.set(id, []);
  }
  if (staffIds.length === 0) return calendars;
  const [hours, timeOff, busy] = await Promise.all([
    workingHoursOf.rows(db, { organisationId, locationId, staffIds }),
    timeOffOf.rows(db, { organisationId, staffIds, windowStart: window.start, windowEnd: window.end }),
    busyBlocksOf(db, organisationId, staffIds, window),
  ]);
  for (const h of hours) {
    calendars.workingHours
      .get(h.staff_id)
      ?.push({ weekday: h.weekday, startMinute: h.start_minute, endMinute: h.end_minute });
  }
  for (const t of timeOff) calendars.timeOff.get(t.staff_id)?.push({ start: t.starts_at, end: t.ends_at });
  for (const b of busy) calendars.busy.get(b.staff_id)?.push({ start: b.starts_at, end: b.ends_at });
  return calendars;
}

/** calendarsOf's queries (prepared-query.ts), read whenever a location's calendars are not cached. */
const workingHoursOf = preparedQuery<
  { organisationId: string; locationId: string; staffIds: readonly string[] },
  { staff_id: string; weekday: number; start_minute: number; end_minute: number }
>((db, param, list) =>
  db
    .selectFrom('staff_working_hours')
    .select(['staff_id', 'weekday', 'start_minute', 'end_minute'])
    .where('organisation_id', '=', param('organisationId'))
    .where('location_id', '=', param('locationId'))
    .where('staff_id', 'in', list('staffIds')),
);

const timeOffOf = preparedQuery<
  { organisationId: string; staffIds: readonly string[]; windowStart: number; windowEnd: number },
  { staff_id: string; starts_at: number; ends_at: number }
>((db, param, list) =>
  db
    .selectFrom('staff_time_off')
    .select(['staff_id', 'starts_at', 'ends_at'])
    .where('organisation_id', '=', param('organisationId'))
    .where('staff_id', 'in', list('staffIds'))
    .where('starts_at', '<', param('windowEnd'))
    .where('ends_at', '>', param('windowStart')),
);

/**
 * The live bookings of each staff member that overlap the window, at any location (a staff member
 * busy elsewhere is busy), except `excludeBookingId`; with them the done ones (DONE_STATUSES), which
 * block nothing but count towards the any-staff rule's booked minutes.
 */
export async function busyBookingsOf(
  db: Db,
  organisationId: string,
  staffIds: readonly string[],
  window: Interval,
  excludeBookingId?: string,
): Promise<Map<string, BusyBooking[]>> {
  const busy = new Map<string, BusyBooking[]>(staffIds.map((id) => [id, []]));
  if (staffIds.length === 0) return busy;
  const bookings = await liveBookings(excludeBookingId).rows(
    db,
    liveBookingsParams(organisationId, staffIds, window, excludeBookingId),
  );
  for (const b of bookings) busy.get(b.staff_id)?.push(busyBooking(b));
  return busy;
}

/** A pending hold among the bookings a slot check read: its identity, staff and block. */
export interface ReadHold {
  id: string;
  organisation_id: string;
  status: BookingStatus;
  staff_id: string;
  starts_at: number;
  blocked_until: number;
  hold_expires_at: number | null;
}

/**
 * What a booking's re-check reads with the staff's bookings, in one statement on PostgreSQL
 * (busyBookingsAndHoldsOf): the app's SlotCheckReads, as the data layer takes it.
 */
export interface AfterTurn {
  /** The location's turn (takeTurn), taken first and held to the end of the transaction. */
  turn?: string;
  /** The booking's client, read with the bookings (its row, or undefined when there is none). */
  clientId?: string;
  /**
   * With clientId: the location (its id) whose waitlist entries of that client still waiting are read
   * with the bookings too (a booking that fits one ends it: design.md 9.4).
   */
  waitingAt?: WaitingAt;
  /**
   * An idempotency key's record, read under the key's own turn, taken just before the location's: so
   * a booking with an Idempotency-Key checks its record in the statement that reads its bookings (on
   * PostgreSQL; a round trip fewer), where it would otherwise read it first. A replay then waits for
   * the location's turn too, behind the bookings being made there.
   */
  keyRecord?: KeyRecordAsk;
}

/**
 * Where a client's waiting entries are read (a location's id), and the instant an offer's hold is
 * judged lapsed at: an entry whose offer's hold is past its end holds nothing, though nobody wrote it
 * expired yet.
 */
export interface WaitingAt {
  locationId: string;
  now: number;
}

/** What busyBookingsAndHoldsOf read besides the bookings, for what AfterTurn asked. */
export interface ReadAfterTurn {
  client?: ClientRow | undefined;
  /** The client's waiting entries at waitingAt, when asked. */
  waiting?: WaitlistEntryRow[];
  keyRecord?: IdempotencyRecordsTable | undefined;
}

/**
 * busyBookingsOf, and the pending holds among those bookings with their ids, in the same query: what
 * a booking's re-check needs to write the lapsed holds in its block expired without reading them
 * again (see SlotCheck.lapsedHolds); with `afterTurn`, what it asks read with them.
 */
export async function busyBookingsAndHoldsOf(
  db: Db,
  organisationId: string,
  staffIds: readonly string[],
  window: Interval,
  excludeBookingId?: string,
  afterTurn: AfterTurn = {},
): Promise<{ busy: Map<string, BusyBooking[]>; holds: ReadHold[] } & ReadAfterTurn> {
  const busy = new Map<string, BusyBooking[]>(staffIds.map((id) => [id, []]));
  const holds: ReadHold[] = [];
  const { turn, clientId, keyRecord, waitingAt } = afterTurn;
  let bookings: LiveBookingRow[] = [];
  let read: ReadAfterTurn;
  const params = liveBookingsParams(organisationId, staffIds, window, excludeBookingId);
  if (staffIds.length > 0 && turn !== undefined && dialectOf(db) === 'postgres') {
    ({ bookings, ...read } = await liveBookingsAfterTurn(db, turn, params, clientId, keyRecord, waitingAt));
  } else {
    read = await readAfterTurns(db, organisationId, afterTurn);
    if (staffIds.length > 0) bookings = await liveBookings(excludeBookingId).rows(db, params);
  }
  for (const b of bookings) {
    busy.get(b.staff_id)?.push(busyBooking(b));
    if (b.status === 'pending_payment' || b.status === 'pending_confirmation') {
      holds.push({ ...b, organisation_id: organisationId });
    }
  }
  return { busy, holds, ...read };
}

/**
 * What `afterTurn` asks besides the bookings, a statement at a time (SQLite, or no staff to read): the
 * key's turn and its record, then the location's turn (the key's before the location's, as every
 * writer takes them), then the client.
 */
export async function readAfterTurns(
  db: Db,
  organisationId: string,
  { turn, clientId, keyRecord, waitingAt }: AfterTurn,
): Promise<ReadAfterTurn> {
  const read: ReadAfterTurn =
    keyRecord === undefined ? {} : { keyRecord: await keyRecordAfterTurn(db, keyRecord) };
  if (turn !== undefined) await takeTurn(db, turn);
  if (clientId !== undefined) read.client = await findClientById(db, organisationId, clientId);
  if (clientId !== undefined && waitingAt !== undefined) {
    read.waiting = await clientWaitingEntriesAt(
      db,
      organisationId,
      waitingAt.locationId,
      clientId,
      waitingAt.now,
    );
  }
  return read;
}

/**
 * The live bookings' rows, read once the turn is granted, in one statement (one round trip, not two):
 * the function live_bookings_after_turn (2026-11-29-0030) takes the advisory lock and then reads with
 * a snapshot of its own, so it sees what the turn's previous holder committed. PostgreSQL only. The
 * client and a key's record ride along, each a row of its own with its columns as JSON.
 */
async function liveBookingsAfterTurn(
  db: Db,
  turn: string,
  params: LiveBookingsParams,
  clientId: string | undefined,
  keyRecord: KeyRecordAsk | undefined,
  waitingAt: WaitingAt | undefined,
): Promise<{ bookings: LiveBookingRow[] } & ReadAfterTurn> {
  const { organisationId, staffIds, windowEnd, windowStart, startsAfter, excludeBookingId } = params;
  const live = sql`SELECT * FROM live_bookings_after_turn(${turn}, ${organisationId}, ${[...staffIds]}::text[], ${[...BOOKED_STATUSES]}::text[], ${windowEnd}::bigint, ${windowStart}::bigint, ${startsAfter}::bigint, ${excludeBookingId ?? null}::text)`;
  if (clientId === undefined && keyRecord === undefined) {
    const { rows } = await sql<LiveBookingRow>`${live}`.execute(db);
    return { bookings: rows };
  }
  // The branches of a UNION ALL run in their order: the key's turn (and its record) first, then the
  // location's turn and its bookings, then the client. The client is no part of what the turns guard:
  // read with the statement's snapshot, as a separate read before the turn was. A round trip fewer
  // for each (issue 47). The client's waiting entries likewise, each a row (as clientWaitingEntriesAt).
  const none = sql`NULL, NULL, NULL, NULL, NULL, NULL, NULL`;
  const waiting = clientId !== undefined && waitingAt !== undefined;
  const branches = [
    ...(keyRecord === undefined
      ? []
      : [
          sql`SELECT ${none}, NULL::json, row_to_json(r), NULL::json FROM (${keyRecordAfterTurnStatement(keyRecord)}) r`,
        ]),
    sql`SELECT *, NULL::json, NULL::json, NULL::json FROM (${live}) live`,
    ...(clientId === undefined
      ? []
      : [
          sql`SELECT ${none}, row_to_json(c), NULL::json, NULL::json FROM clients c
              WHERE c.organisation_id = ${organisationId} AND c.id = ${clientId}`,
        ]),
    ...(clientId !== undefined && waitingAt !== undefined
      ? [
          sql`SELECT ${none}, NULL::json, NULL::json, row_to_json(e) FROM waitlist_entries e
              WHERE e.organisation_id = ${organisationId} AND e.location_id = ${waitingAt.locationId}
              AND e.status = 'waiting' AND e.client_id = ${clientId}
              AND NOT EXISTS (SELECT 1 FROM waitlist_offers o JOIN bookings b
                ON b.organisation_id = o.organisation_id AND b.id = o.booking_id
                WHERE o.organisation_id = e.organisation_id AND o.entry_id = e.id
                AND b.status = 'pending_confirmation'
                AND (b.hold_expires_at IS NULL OR b.hold_expires_at > ${waitingAt.now}::bigint))`,
        ]
      : []),
  ];
  const { rows } = await sql<
    LiveBookingRow & {
      client: ClientRow | null;
      key_record: IdempotencyRecordsTable | null;
      entry: WaitlistEntryRow | null;
    }
  >`SELECT * FROM (${sql.join(branches, sql` UNION ALL `)}) AS read (staff_id, status, starts_at, ends_at, blocked_until, hold_expires_at, id, client, key_record, entry)`.execute(
    db,
  );
  const read: { bookings: LiveBookingRow[] } & ReadAfterTurn = {
    bookings: [],
    ...(waiting && { waiting: [] }),
  };
  for (const { client, key_record, entry, ...booking } of rows) {
    if (client !== null) read.client = client;
    else if (key_record !== null) read.keyRecord = key_record;
    else if (entry !== null) read.waiting?.push(entry);
    else read.bookings.push(booking);
  }
  return read;
}

type LiveBookingsParams = {
  organisationId: string;
  staffIds: readonly string[];
  windowStart: number;
  windowEnd: number;
  /** Implied by the window (no booking spans longer), and what bounds the index range scan. */
  startsAfter: number;
  excludeBookingId: string | undefined;
};

interface LiveBookingRow {
  id: string;
  staff_id: string;
  status: BookingStatus;
  starts_at: number;
  ends_at: number;
  blocked_until: number;
  hold_expires_at: number | null;
}

function liveBookingsParams(
  organisationId: string,
  staffIds: readonly string[],
  window: Interval,
  excludeBookingId: string | undefined,
): LiveBookingsParams {
  return {
    organisationId,
    staffIds,
    windowStart: window.start,
    windowEnd: window.end,
    startsAfter: window.start - MAX_BOOKING_SPAN_MS,
    excludeBookingId,
  };
}

/**
 * The live bookings of the staff overlapping the window, but the one excluded if any: read on every
 * slot check (each `book`), so built once (prepared-query.ts), with and without the exclusion.
 */
const liveBookingsQueries = new Map<boolean, PreparedQuery<LiveBookingsParams, LiveBookingRow>>();

function liveBookings(
  excludeBookingId: string | undefined,
): PreparedQuery<LiveBookingsParams, LiveBookingRow> {
  const excluding = excludeBookingId !== undefined;
  let query = liveBookingsQueries.get(excluding);
  if (query === undefined) {
    query = preparedQuery<LiveBookingsParams, LiveBookingRow>((db, param, list) =>
      db
        .selectFrom('bookings')
        .select(['id', 'staff_id', 'status', 'starts_at', 'ends_at', 'blocked_until', 'hold_expires_at'])
        .where('organisation_id', '=', param('organisationId'))
        .where('staff_id', 'in', list('staffIds'))
        .where('status', 'in', BOOKED_STATUSES)
        .where('starts_at', '<', param('windowEnd'))
        .where('blocked_until', '>', param('windowStart'))
        .where('starts_at', '>', param('startsAfter'))
        .$if(excluding, (q) => q.where('id', '<>', param('excludeBookingId') as string)),
    );
    liveBookingsQueries.set(excluding, query);
  }
  return query;
}

function busyBooking(b: {
  status: BookingStatus;
  starts_at: number;
  ends_at: number;
  blocked_until: number;
  hold_expires_at: number | null;
}): BusyBooking {
  const done = DONE_STATUSES.includes(b.status);
  const pending = b.status === 'pending_payment' || b.status === 'pending_confirmation';
  return {
    startsAt: b.starts_at,
    endsAt: b.ends_at,
    blockedUntil: b.blocked_until,
    // Only a pending booking is a hold; a confirmed one blocks whatever its old hold said.
    holdExpiresAt: pending ? b.hold_expires_at : null,
    ...(done && { done }),
  };
}

/**
 * Appointments whose time came and that staff then marked (design.md section 6): they block nothing
 * (only live bookings do), but their minutes were booked that day, so the any-staff rule ("fewest
 * booked minutes that local day") still counts them; read with the live ones (BOOKED_STATUSES).
 */
const DONE_STATUSES: readonly BookingStatus[] = ['needs_checkout', 'completed', 'no_show'];
const BOOKED_STATUSES: readonly BookingStatus[] = [...LIVE_STATUSES, ...DONE_STATUSES];

/** The local dates in [from, to] on which the location is closed. */
export async function closedDatesBetween(
  db: Db,
  organisationId: string,
  locationId: string,
  from: string,
  to: string,
): Promise<Set<string>> {
  const rows = await db
    .selectFrom('location_closures')
    .select('date')
    .where('organisation_id', '=', organisationId)
    .where('location_id', '=', locationId)
    .where('date', '>=', from)
    .where('date', '<=', to)
    .execute();
  return new Set(rows.map((r) => r.date));
}

/** The location's closures in [from, to] (local dates), with their reasons, by date. */
export async function closuresBetween(
  db: Db,
  organisationId: string,
  locationId: string,
  from: string,
  to: string,
): Promise<{ date: string; reason: string | null }[]> {
  return db
    .selectFrom('location_closures')
    .select(['date', 'reason'])
    .where('organisation_id', '=', organisationId)
    .where('location_id', '=', locationId)
    .where('date', '>=', from)
    .where('date', '<=', to)
    .orderBy('date')
    .execute();
}
