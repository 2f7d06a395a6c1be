import { DateTime, IANAZone } from 'luxon';
import { ZoneCalendar } from '../../../domain/availability/zone-calendar.ts';
import type { CatalogueStaff } from './schema.ts';

/** The file's wall-clock times (local date-times, "HH:MM", weekdays) read as instants in a zone. */

export { WEEKDAY_NAMES as WEEKDAYS } from '../../../domain/availability/opening-hours.ts';

/**
 * The instant of a local date-time in a zone (time off), or undefined when the wall-clock time does not
 * exist there (the clocks go forward over it). A time the clocks show twice is its first instant, as
 * availability reads working hours (luxon picks the later one in some zones and the earlier in others:
 * Havana's Sunday off from 00:00 then began an hour into the Sunday, and Saturday's ran into it).
 * Midnight is the exception to the gap: "T00:00" is the start of its date, and where the clocks skip
 * midnight (Santiago, Havana, Beirut) that date starts when they land, as availability's days do; a day
 * off written from midnight to midnight is no mistake there.
 */
export function localInstant(local: string, zone: string): number | undefined {
  const wall = DateTime.fromISO(local, { zone: 'utc' });
  if (!wall.isValid || !IANAZone.isValidZone(zone)) return undefined;
  const first = firstLocalInstant(local, zone);
  if (first !== undefined) return first;
  if (wall.toFormat('HH:mm:ss') === '00:00:00') return calendarOf(zone).day(wall.toISODate()!).start;
  return undefined;
}

/**
 * The zone a staff member's time off is written in: that of the first location of their working hours
 * (a member working in several zones uses the first one), else the organisation's first location.
 */
export function staffTimeZone(
  staff: Pick<CatalogueStaff, 'working_hours'>,
  zoneByLocationRef: ReadonlyMap<string, string>,
  firstLocationZone: string | undefined,
): string | undefined {
  const firstRef = Object.keys(staff.working_hours)[0];
  return firstRef === undefined ? firstLocationZone : zoneByLocationRef.get(firstRef);
}

/** "HH:MM" (24:00 allowed) to minutes since local midnight. */
export function clockMinutes(time: string): number {
  const [hours, mins] = time.split(':').map(Number);
  return (hours ?? 0) * 60 + (mins ?? 0);
}

const calendars = new Map<string, ZoneCalendar>();

function calendarOf(zone: string): ZoneCalendar {
  let calendar = calendars.get(zone);
  if (calendar === undefined) {
    calendar = new ZoneCalendar(zone);
    calendars.set(zone, calendar);
  }
  return calendar;
}

/**
 * The instant a booking's local start means in a zone: undefined when the wall-clock time does not
 * exist (the clocks go forward over it); the first of the two instants when it happens twice (the
 * clocks go back), the same rule availability applies to its grid.
 */
export function firstLocalInstant(local: string, zone: string): number | undefined {
  const calendar = calendarOf(zone);
  const [date = '', time = ''] = local.split('T');
  const [hours = 0, mins = 0, seconds = 0] = time.split(':').map(Number);
  const first = calendar.instantsAt(calendar.day(date), hours * 60 + mins)[0];
  return first === undefined ? undefined : first + seconds * 1000;
}
