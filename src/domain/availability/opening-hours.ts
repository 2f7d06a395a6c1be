import { normalise } from './intervals.ts';
import type { ClockInterval, DayHours, WeekdayName, WorkingInterval } from './types.ts';

/**
 * Weekly hours as people read them: per weekday, Monday first, local wall-clock 'HH:MM' intervals.
 * A location's opening hours are the union of its staff's working hours there; a staff member's are
 * their own. Both are told to callers (get_location_info, a refusal naming when someone works).
 */
export const WEEKDAY_NAMES: readonly WeekdayName[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
export type { ClockInterval, DayHours, WeekdayName };

/** The intervals, merged per weekday, as seven days from Monday. */
export function weeklyHours(intervals: readonly WorkingInterval[]): DayHours[] {
  return WEEKDAY_NAMES.map((weekday, index) => ({
    weekday,
    intervals: normalise(
      intervals
        .filter((interval) => interval.weekday === index + 1)
        .map((interval) => ({ start: interval.startMinute, end: interval.endMinute })),
    ).map((interval) => ({ start: clockTime(interval.start), end: clockTime(interval.end) })),
  }));
}

/** Minutes since local midnight (0..1440) as 'HH:MM'. */
export function clockTime(minute: number): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(Math.floor(minute / 60))}:${pad(minute % 60)}`;
}
