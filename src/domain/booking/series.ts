import { calendarFor } from '../availability/find-slots.ts';
import { addDays, daysBetween, wallMidnightOf } from '../availability/zone-calendar.ts';
import { localDateAt } from '../time-format.ts';

/**
 * Recurring appointments (design.md 9.5): a series is `count` occurrences `every_weeks` apart, each at
 * the same local wall time as the first, whatever the offset in force on its date (a 10:00 booking in
 * winter stays at 10:00 in summer). Each occurrence is an ordinary booking; this module only says
 * when each one is.
 */

export const REPEAT_LIMITS = { everyWeeks: { min: 1, max: 12 }, count: { min: 2, max: 26 } } as const;

/**
 * How many visits a series booked through a form may have, the first included, and what a count
 * outside them (or none) is told: a form's label, its field's bounds and its refusal say this range.
 */
export interface SeriesVisits {
  min: number;
  max: number;
  refusal(visits: number): string;
}

/** The visits of any series (design.md 9.5): the console's form, REST and MCP. */
export const SERIES_VISITS: SeriesVisits = {
  ...REPEAT_LIMITS.count,
  refusal: () => `A series has ${REPEAT_LIMITS.count.min} to ${REPEAT_LIMITS.count.max} visits.`,
};

export interface Repeat {
  everyWeeks: number;
  count: number;
}

const MINUTE = 60_000;

/** Where on the local calendar an instant is: its date and minute of the day, and its offset. */
export interface WallTime {
  date: string;
  minute: number;
  offsetMs: number;
}

export function wallTimeOf(instant: number, zone: string): WallTime {
  const calendar = calendarFor(zone);
  const date = localDateAt(instant, zone);
  const offsetMs = calendar.offsetAt(instant);
  return { date, minute: Math.round((instant + offsetMs - wallMidnightOf(date)) / MINUTE), offsetMs };
}

/**
 * The instant the wall clock of `zone` reads `minute` on `date`, or null when that time does not
 * exist there (a spring-forward gap). Where it happens twice (a fall-back night), the one with
 * `preferOffsetMs` if it is one of them (the offset the series started with), else the first.
 */
export function instantOfWallTime(
  zone: string,
  date: string,
  minute: number,
  preferOffsetMs?: number,
): number | null {
  const calendar = calendarFor(zone);
  const instants = calendar.instantsAt(calendar.day(date), minute);
  if (instants.length === 0) return null;
  return instants.find((i) => calendar.offsetAt(i) === preferOffsetMs) ?? instants[0]!;
}

/** One occurrence of a series: its position (1-based), local date, and instant (null: no such time). */
export interface Occurrence {
  position: number;
  date: string;
  startsAt: number | null;
}

/**
 * The instant a series wants on `date` at wall minute `minute`: the wall time's own (its first, or
 * the one with `preferOffsetMs`), or, where the clocks skip it, the end of the gap, as availability
 * reads every time in a gap: where the free times nearest a visit that cannot be are looked for.
 */
export function wantedInstant(zone: string, date: string, minute: number, preferOffsetMs?: number): number {
  const calendar = calendarFor(zone);
  return (
    instantOfWallTime(zone, date, minute, preferOffsetMs) ?? calendar.boundary(calendar.day(date), minute)
  );
}

/** The occurrences of a series starting at `firstStart`, in order, the first being `firstStart` itself. */
export function seriesOccurrences(firstStart: number, zone: string, repeat: Repeat): Occurrence[] {
  const first = wallTimeOf(firstStart, zone);
  return Array.from({ length: repeat.count }, (_, k) => {
    const date = addDays(first.date, 7 * repeat.everyWeeks * k);
    const startsAt = k === 0 ? firstStart : instantOfWallTime(zone, date, first.minute, first.offsetMs);
    return { position: k + 1, date, startsAt };
  });
}

/**
 * Where a later occurrence goes when one occurrence moves from `from` to `to` with "this and the
 * following": by the same number of calendar days, to the new wall time of day (null: that time
 * does not exist on its new date).
 */
export function followingMove(
  occurrenceStart: number,
  move: { from: number; to: number },
  zone: string,
): { date: string; startsAt: number | null } {
  const from = wallTimeOf(move.from, zone);
  const to = wallTimeOf(move.to, zone);
  const own = wallTimeOf(occurrenceStart, zone);
  const date = addDays(own.date, daysBetween(from.date, to.date));
  return { date, startsAt: instantOfWallTime(zone, date, to.minute, to.offsetMs) };
}

/**
 * The location as an occurrence of a series sees it: a series is booked when its first occurrence is
 * within max_advance_days, and its later ones may lie beyond by the series' own length (a regular
 * books "every six weeks until summer" in one go). `extraDays` 0 is the location as it is.
 */
export function withSeriesHorizon<L extends { policy: { maxAdvanceDays: number } }>(
  location: L,
  extraDays: number,
): L {
  if (extraDays <= 0) return location;
  return {
    ...location,
    policy: { ...location.policy, maxAdvanceDays: location.policy.maxAdvanceDays + extraDays },
  };
}

/** Days from a series' first occurrence to its last. */
export function seriesSpanDays(repeat: Repeat): number {
  return 7 * repeat.everyWeeks * (repeat.count - 1);
}
