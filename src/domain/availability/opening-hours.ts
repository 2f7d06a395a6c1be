import { normalise } from './intervals.ts';
import type { WorkingInterval } from './types.ts';

/**
 * Weekly hours as people read them: per weekday, Monday first, local wall-clock 'HH:MM' intervals.
 * A location's opening hours are the union of its staff's working hours there; a staff member's are
 * their own. Both are told to callers (get_location_info, a refusal naming when someone works).
 */
export const WEEKDAY_NAMES = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type WeekdayName = (typeof WEEKDAY_NAMES)[number];

/** From 'HH:MM' to 'HH:MM' local time; `end` may be '24:00' (the end of the day). */
export interface ClockInterval {
  start: string;
  end: string;
}

export interface DayHours {
  weekday: WeekdayName;
  /** Sorted; overlapping or touching intervals merged (split shifts stay apart); empty when closed. */
  intervals: ClockInterval[];
}

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
