import { calendarFor, findSlotAt, workingIntervals } from './find-slots.ts';
import { feasibleStarts, normalise } from './intervals.ts';
import type { AvailabilityQuery, Slot, StaffSchedule } from './types.ts';
import { addDays, type LocalDay, type ZoneCalendar } from './zone-calendar.ts';

const MINUTE = 60_000;

/** An availability query for the one local day of a start (as findSlotAt takes it). */
export type SlotQuery = Omit<AvailabilityQuery, 'fromDate' | 'days'>;

/** Why a location is closed on a local date: a closure, or nobody (of the staff asked about) works. */
export type DayClosure = 'closure' | 'nobody_works';

/**
 * Whether a start is a slot, and if not, the first rule it breaks, in this order:
 * - too_soon: before now + min notice (the past included);
 * - too_far_ahead: its local date is after today (local) + max_advance_days;
 * - closed: a closure that local date, or none of the query's staff has working time left that date
 *   (working hours of that weekday, less time off);
 * - not_on_grid: not an instant of the local wall-clock grid (a wall time skipped by a DST change is
 *   none, so an instant is never "in the gap"; both instants of a repeated wall time are on the grid);
 * - staff_not_working: the named staff member's working time (hours less time off) that date does
 *   not hold the whole appointment;
 * - slot_unavailable: none of the above, yet no slot: it is taken (by a booking, or by a busy time of
 *   an external calendar, which is no time off: StaffSchedule.busy), blocked by a buffer, outside
 *   everyone's hours (any staff: `outsideHours`, so a caller asking for 8 pm hears that nobody works
 *   then, not that the time was taken), or the buffer meets time off.
 * A start that is a slot breaks none of these rules, so `ok` agrees with findSlotAt exactly.
 */
export type StartDiagnosis =
  | { ok: true; slot: Slot }
  | { ok: false; reason: 'too_soon'; earliest: number }
  | { ok: false; reason: 'too_far_ahead'; lastDate: string }
  | { ok: false; reason: 'closed'; date: string; cause: DayClosure }
  | { ok: false; reason: 'not_on_grid'; date: string }
  | { ok: false; reason: 'staff_not_working'; date: string; staffId: string; onTimeOff: boolean }
  | { ok: false; reason: 'slot_unavailable'; date: string; outsideHours: boolean };

/**
 * Diagnoses `startsAt` against `query`, whose staff are everyone eligible for the services (the
 * any-staff query); `staffId` names the staff member asked for, if any (one not among the query's
 * staff cannot work the appointment). Pure, like the engine it explains.
 */
export function diagnoseStart(query: SlotQuery, startsAt: number, staffId?: string): StartDiagnosis {
  const named = staffId === undefined ? undefined : query.staff.find((s) => s.id === staffId);
  const asked = staffId === undefined ? query : { ...query, staff: named ? [named] : [] };
  const slot = findSlotAt(asked, startsAt);
  if (slot) return { ok: true, slot };

  const calendar = calendarFor(query.timezone);
  const earliest = query.now + query.minNoticeMinutes * MINUTE;
  if (startsAt < earliest) return { ok: false, reason: 'too_soon', earliest };
  const date = calendar.localDateOf(startsAt);
  const lastDate = addDays(calendar.localDateOf(query.now), query.maxAdvanceDays);
  if (date > lastDate) return { ok: false, reason: 'too_far_ahead', lastDate };
  const closed = dayClosure(query, date);
  if (closed) return { ok: false, reason: 'closed', date, cause: closed };
  const day = calendar.day(date);
  if (!calendar.grid(day, query.slotIntervalMinutes).includes(startsAt)) {
    return { ok: false, reason: 'not_on_grid', date };
  }
  const length = query.services.reduce((total, s) => total + s.durationMinutes, 0) * MINUTE;
  const holds = (s: StaffSchedule, withTimeOff: boolean) =>
    workingStarts(calendar, day, s, length, withTimeOff).some((i) => i.start <= startsAt && startsAt < i.end);
  if (staffId !== undefined && (!named || !holds(named, true))) {
    const onTimeOff = named !== undefined && holds(named, false);
    return { ok: false, reason: 'staff_not_working', date, staffId, onTimeOff };
  }
  const outsideHours = !asked.staff.some((s) => holds(s, true));
  return { ok: false, reason: 'slot_unavailable', date, outsideHours };
}

/**
 * Why the location is closed on `date`, or null when it is open: a closure, or none of `staff` has
 * working time left that date (their hours that weekday, less time off).
 */
export function dayClosure(
  input: Pick<SlotQuery, 'timezone' | 'closedDates'> & {
    staff: readonly Pick<StaffSchedule, 'workingHours' | 'timeOff'>[];
  },
  date: string,
): DayClosure | null {
  if (input.closedDates.has(date)) return 'closure';
  const calendar = calendarFor(input.timezone);
  const day = calendar.day(date);
  const works = input.staff.some((s) => workingStarts(calendar, day, s, 1, true).length > 0);
  return works ? null : 'nobody_works';
}

/** The local dates of the query's days on which the location is closed (see dayClosure), and why. */
export function closedDaysOf(query: AvailabilityQuery): { date: string; cause: DayClosure }[] {
  const closed: { date: string; cause: DayClosure }[] = [];
  for (let i = 0; i < query.days; i += 1) {
    const date = addDays(query.fromDate, i);
    const cause = dayClosure(query, date);
    if (cause) closed.push({ date, cause });
  }
  return closed;
}

/** The starts t for which [t, t + length) lies in the staff member's working time on `day`. */
function workingStarts(
  calendar: ZoneCalendar,
  day: LocalDay,
  staff: Pick<StaffSchedule, 'workingHours' | 'timeOff'>,
  length: number,
  withTimeOff: boolean,
) {
  const timeOff = withTimeOff ? normalise(staff.timeOff) : [];
  return feasibleStarts(workingIntervals(calendar, day, staff), timeOff, length, length);
}
