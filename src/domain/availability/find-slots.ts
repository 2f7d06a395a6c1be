import { feasibleStarts, normalise } from './intervals.ts';
import type { AvailabilityQuery, BusyBooking, Interval, Slot, StaffSchedule } from './types.ts';
import { addDays, type LocalDay, ZoneCalendar } from './zone-calendar.ts';

const MINUTE = 60_000;

/**
 * The availability engine: every bookable slot of a query, by the rules in types.ts. Pure: no clock,
 * no database; `now` is part of the query.
 *
 * Per local day, each staff member's feasible starts are computed as intervals (working hours minus
 * time off and booking blocks, shrunk by the slot's length), then the day's wall-clock grid is swept
 * against them; with several staff, each start goes to the first free one in the any-staff order.
 */
export function findSlots(query: AvailabilityQuery): Slot[] {
  const calendar = calendarFor(query.timezone);
  const length = query.services.reduce((total, s) => total + s.durationMinutes, 0) * MINUTE;
  const buffer = (query.services[query.services.length - 1]?.bufferAfterMinutes ?? 0) * MINUTE;
  if (length <= 0 || query.staff.length === 0) return [];
  const earliest = query.now + query.minNoticeMinutes * MINUTE;
  const lastDate = addDays(calendar.localDateOf(query.now), query.maxAdvanceDays);
  const schedules = query.staff.map((staff) => prepare(staff, query.now));

  const slots: Slot[] = [];
  for (let offset = 0; offset < query.days; offset++) {
    const date = addDays(query.fromDate, offset);
    if (date > lastDate) break;
    if (query.closedDates.has(date)) continue;
    const day = calendar.day(date);
    if (day.end <= earliest) continue;

    const candidates = schedules
      .map((staff) => ({
        staff,
        bookedMinutes: bookedMinutesOn(staff.booked, day),
        starts: feasibleStarts(
          workingIntervals(calendar, day, staff.source),
          staff.busy,
          length,
          length + buffer,
        ),
        cursor: 0,
      }))
      .filter((c) => c.starts.length > 0)
      .sort(
        (a, b) =>
          a.bookedMinutes - b.bookedMinutes ||
          compare(a.staff.source.name, b.staff.source.name) ||
          compare(a.staff.source.id, b.staff.source.id),
      );
    if (candidates.length === 0) continue;

    for (const start of calendar.grid(day, query.slotIntervalMinutes)) {
      if (start < earliest) continue;
      for (const candidate of candidates) {
        const { starts } = candidate;
        while (candidate.cursor < starts.length && starts[candidate.cursor]!.end <= start) candidate.cursor++;
        const window = starts[candidate.cursor];
        if (window && window.start <= start) {
          slots.push({ startsAt: start, endsAt: start + length, staffId: candidate.staff.source.id });
          break;
        }
      }
    }
  }
  return slots;
}

/**
 * The instant until which findSlots gives `slots` again for this query at any later `now`: for every t
 * in [query.now, the result), findSlots({ ...query, now: t }) equals `slots`. So an answer can be reused
 * while the clock stays in that span, and no slot is served after its notice has run out or once a
 * hold has lapsed. `now` enters the rules three ways, and each bounds the span:
 * - min notice only drops starts as `now` grows (the any-staff choice of a start does not depend on
 *   it), so the answer first changes when the first slot offered falls inside the notice;
 * - max advance counts local dates from today, so the answer may change at the next local midnight,
 *   unless today's horizon already reaches the last date searched;
 * - a pending hold stops blocking (and counting towards booked minutes) when it lapses.
 */
export function slotsStableUntil(query: AvailabilityQuery, slots: readonly Slot[]): number {
  const notice = query.minNoticeMinutes * MINUTE;
  let until = Number.POSITIVE_INFINITY;
  const first = slots[0];
  if (first) until = first.startsAt - notice + 1;
  const calendar = calendarFor(query.timezone);
  const today = calendar.localDateOf(query.now);
  if (addDays(today, query.maxAdvanceDays) < addDays(query.fromDate, query.days - 1)) {
    until = Math.min(until, calendar.day(today).end);
  }
  for (const staff of query.staff) {
    for (const b of staff.bookings) {
      if (b.holdExpiresAt !== null && b.holdExpiresAt > query.now) until = Math.min(until, b.holdExpiresAt);
    }
  }
  return until;
}

/**
 * The slot starting exactly at `startsAt`, as findSlots would offer it, or null. Booking and
 * rescheduling ask this, so they can never disagree with what availability offered: with one staff
 * member in the query it says whether they are free then; with several it applies the any-staff rule.
 */
export function findSlotAt(
  query: Omit<AvailabilityQuery, 'fromDate' | 'days'>,
  startsAt: number,
): Slot | null {
  const fromDate = calendarFor(query.timezone).localDateOf(startsAt);
  return findSlots({ ...query, fromDate, days: 1 }).find((slot) => slot.startsAt === startsAt) ?? null;
}

interface PreparedStaff {
  source: StaffSchedule;
  /** Bookings whose minutes count: the live ones (below) and the done ones. */
  booked: BusyBooking[];
  /** Time off, external busy times and live booking blocks, normalised. */
  busy: Interval[];
}

function prepare(staff: StaffSchedule, now: number): PreparedStaff {
  const booked = staff.bookings.filter(
    (b) => b.done === true || b.holdExpiresAt === null || b.holdExpiresAt > now,
  );
  // Bookings that block: confirmed ones and holds that have not lapsed (a done one no longer does).
  const live = booked.filter((b) => b.done !== true);
  const busy = normalise([
    ...staff.timeOff,
    ...(staff.busy ?? []),
    ...live.map((b) => ({ start: b.startsAt, end: b.blockedUntil })),
  ]);
  return { source: staff, booked, busy };
}

/** The staff member's working intervals on `day` as instants, touching ones merged. */
export function workingIntervals(
  calendar: ZoneCalendar,
  day: LocalDay,
  staff: Pick<StaffSchedule, 'workingHours'>,
): Interval[] {
  const intervals: Interval[] = [];
  for (const hours of staff.workingHours) {
    if (hours.weekday !== day.weekday) continue;
    intervals.push({
      start: calendar.boundary(day, hours.startMinute),
      end: calendar.boundary(day, hours.endMinute),
    });
  }
  return normalise(intervals);
}

/** Minutes of appointments (buffers excluded) starting on `day`. */
function bookedMinutesOn(bookings: readonly BusyBooking[], day: LocalDay): number {
  let total = 0;
  for (const b of bookings)
    if (b.startsAt >= day.start && b.startsAt < day.end) total += b.endsAt - b.startsAt;
  return total / MINUTE;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Calendars cache their days; one per zone is kept for the life of the process (a pure memo). */
const calendars = new Map<string, ZoneCalendar>();

export function calendarFor(zone: string): ZoneCalendar {
  let calendar = calendars.get(zone);
  if (!calendar) {
    calendar = new ZoneCalendar(zone);
    calendars.set(zone, calendar);
  }
  return calendar;
}
