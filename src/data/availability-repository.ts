import { sql } from 'kysely';
import type { BusyBooking, Interval, WorkingInterval } from '../domain/availability/types.ts';
import { MAX_BOOKING_SPAN_MS } from '../domain/booking/booking.ts';
import { type BookingStatus, LIVE_STATUSES } from '../domain/booking/state-machine.ts';
import type { OfferedService } from '../domain/catalogue.ts';
import { busyBlocksOf } from './calendar-repository.ts';
import { type Db, dialectOf } from './database.ts';
import { offeredServicesByIds } from './service-repository.ts';
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
 * What the catalogue says of each staff member over a window of instants: hours and time off. The busy
 * times of their external calendars (design.md 9.6) are time off like any other: they come from the
 * last good copy the refresher kept, never from a fetch here.
 */
export interface StaffCalendars {
  workingHours: Map<string, WorkingInterval[]>;
  timeOff: Map<string, Interval[]>;
}

export async function calendarsOf(
  db: Db,
  organisationId: string,
  locationId: string,
  staffIds: readonly string[],
  window: Interval,
): Promise<StaffCalendars> {
  const calendars: StaffCalendars = { workingHours: new Map(), timeOff: new Map() };
  for (const id of staffIds) {
    calendars.workingHours.set(id, []);
    calendars.timeOff.set(id, []);
  }
  if (staffIds.length === 0) return calendars;
  const [hours, timeOff, busy] = await Promise.all([
    db
      .selectFrom('staff_working_hours')
      .select(['staff_id', 'weekday', 'start_minute', 'end_minute'])
      .where('organisation_id', '=', organisationId)
      .where('location_id', '=', locationId)
      .where('staff_id', 'in', staffIds)
      .execute(),
    db
      .selectFrom('staff_time_off')
      .select(['staff_id', 'starts_at', 'ends_at'])
      .where('organisation_id', '=', organisationId)
      .where('staff_id', 'in', staffIds)
      .where('starts_at', '<', window.end)
      .where('ends_at', '>', window.start)
      .execute(),
    busyBlocksOf(db, organisationId, staffIds, window),
  ]);
  for (const h of hours) {
    calendars.workingHours
      .get(h.staff_id)
      ?.push({ weekday: h.weekday, startMinute: h.start_minute, endMinute: h.end_minute });
  }
  for (const t of timeOff) calendars.timeOff.get(t.staff_id)?.push({ start: t.starts_at, end: t.ends_at });
  for (const b of busy) calendars.timeOff.get(b.staff_id)?.push({ start: b.starts_at, end: b.ends_at });
  return calendars;
}

/**
 * The live bookings of each staff member that overlap the window, at any location (a staff member
 * busy elsewhere is busy), except `excludeBookingId`.
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
  const bookings = await liveBookingsQuery(db, organisationId, staffIds, window, excludeBookingId).execute();
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
 * busyBookingsOf, and the pending holds among those bookings with their ids, in the same query: what
 * a booking's re-check needs to write the lapsed holds in its block expired without reading them
 * again (see SlotCheck.lapsedHolds).
 */
export async function busyBookingsAndHoldsOf(
  db: Db,
  organisationId: string,
  staffIds: readonly string[],
  window: Interval,
  excludeBookingId?: string,
  turn?: string,
): Promise<{ busy: Map<string, BusyBooking[]>; holds: ReadHold[] }> {
  const busy = new Map<string, BusyBooking[]>(staffIds.map((id) => [id, []]));
  const holds: ReadHold[] = [];
  if (staffIds.length === 0) {
    if (turn !== undefined) await takeTurn(db, turn);
    return { busy, holds };
  }
  const bookings =
    turn !== undefined && dialectOf(db) === 'postgres'
      ? await liveBookingsAfterTurn(db, turn, organisationId, staffIds, window, excludeBookingId)
      : await (async () => {
          if (turn !== undefined) await takeTurn(db, turn);
          return liveBookingsQuery(db, organisationId, staffIds, window, excludeBookingId)
            .select('id')
            .execute();
        })();
  for (const b of bookings) {
    busy.get(b.staff_id)?.push(busyBooking(b));
    if (b.status !== 'confirmed') holds.push({ ...b, organisation_id: organisationId });
  }
  return { busy, holds };
}

/**
 * liveBookingsQuery's rows, read once the turn is granted, in one statement (one round trip, not two):
 * the function live_bookings_after_turn (2026-11-29-0030) takes the advisory lock and then reads with
 * a snapshot of its own, so it sees what the turn's previous holder committed.
 */
async function liveBookingsAfterTurn(
  db: Db,
  turn: string,
  organisationId: string,
  staffIds: readonly string[],
  window: Interval,
  excludeBookingId: string | undefined,
) {
  const { rows } = await sql<{
    staff_id: string;
    status: BookingStatus;
    starts_at: number;
    ends_at: number;
    blocked_until: number;
    hold_expires_at: number | null;
    id: string;
  }>`SELECT * FROM live_bookings_after_turn(${turn}, ${organisationId}, ${[...staffIds]}::text[], ${[...LIVE_STATUSES]}::text[], ${window.end}::bigint, ${window.start}::bigint, ${window.start - MAX_BOOKING_SPAN_MS}::bigint, ${excludeBookingId ?? null}::text)`.execute(
    db,
  );
  return rows;
}

function liveBookingsQuery(
  db: Db,
  organisationId: string,
  staffIds: readonly string[],
  window: Interval,
  excludeBookingId: string | undefined,
) {
  return (
    db
      .selectFrom('bookings')
      .select(['staff_id', 'status', 'starts_at', 'ends_at', 'blocked_until', 'hold_expires_at'])
      .where('organisation_id', '=', organisationId)
      .where('staff_id', 'in', staffIds)
      .where('status', 'in', LIVE_STATUSES)
      .where('starts_at', '<', window.end)
      .where('blocked_until', '>', window.start)
      // Implied by the line above (no booking spans longer), and what bounds the index range scan.
      .where('starts_at', '>', window.start - MAX_BOOKING_SPAN_MS)
      .$if(excludeBookingId !== undefined, (q) => q.where('id', '<>', excludeBookingId!))
  );
}

function busyBooking(b: {
  status: BookingStatus;
  starts_at: number;
  ends_at: number;
  blocked_until: number;
  hold_expires_at: number | null;
}): BusyBooking {
  return {
    startsAt: b.starts_at,
    endsAt: b.ends_at,
    blockedUntil: b.blocked_until,
    // Only a pending booking is a hold; a confirmed one blocks whatever its old hold said.
    holdExpiresAt: b.status === 'confirmed' ? null : b.hold_expires_at,
  };
}

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
