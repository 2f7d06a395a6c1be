import { addDays, daysBetween } from '../availability/zone-calendar.ts';
import { localDateAt } from '../time-format.ts';
import { REPEAT_LIMITS } from './series.ts';
import type { BookingStatus } from './state-machine.ts';

/**
 * A client's usual (design.md 9.5): what they last had or have booked, with whom and where, and how
 * often they come, so an agent books "my usual" in one call.
 */
export interface Usual {
  serviceIds: string[];
  staffId: string;
  locationId: string;
  /**
   * Weeks between visits: the series' own rule, or the typical gap between their visits; null when
   * unknown or longer than a series repeats (REPEAT_LIMITS: what `book`'s repeat takes).
   */
  everyWeeks: number | null;
  /** The visit it is read from. */
  lastStartsAt: number;
  /**
   * The local date the next visit falls due: the gap between visits after the latest visit of these
   * services (of its series, for a visit of one), the ones already booked included (never a date they
   * are booked up to); null when no gap is known.
   */
  nextDueDate: string | null;
}

/** A past or booked visit, as the usual is read from. */
export interface Visit {
  startsAt: number;
  status: BookingStatus;
  serviceIds: readonly string[];
  staffId: string;
  locationId: string;
  timezone: string;
  /** The series it belongs to, or null. */
  seriesId: string | null;
  /** The every_weeks of the series it belongs to, or null. */
  seriesEveryWeeks: number | null;
}

/** Statuses that say the client came or is coming: what a usual is made of. */
const KEPT: readonly BookingStatus[] = ['completed', 'confirmed', 'needs_checkout'];

/**
 * The usual from a client's visits (any order): the latest one that has started (completed or
 * confirmed), else the soonest one booked; the interval from its series, else the median gap in whole
 * weeks between the days of its visits of the same services, due again that long after the latest of
 * those visits (booked ones included). Null for a client who never came nor booked.
 */
export function usualOf(visits: readonly Visit[], now: number): Usual | null {
  const kept = visits.filter((v) => KEPT.includes(v.status)).sort((a, b) => a.startsAt - b.startsAt);
  const past = kept.filter((v) => v.startsAt <= now);
  const last = past.at(-1) ?? kept[0];
  if (!last) return null;
  // A visit of a series is due by its own series (its interval), not by another series of the same
  // services; whoever its later visits are with (a series booked with anyone may have another
  // stylist on some), they are booked already.
  const same = kept.filter(
    (v) =>
      sameServices(v.serviceIds, last.serviceIds) && (last.seriesId === null || v.seriesId === last.seriesId),
  );
  const gapWeeks = last.seriesEveryWeeks ?? typicalGapWeeks(same);
  // Due after the latest of these visits, booked ones included: not on a date already booked.
  const latest = same.at(-1) ?? last;
  const latestDate = localDateAt(latest.startsAt, latest.timezone);
  return {
    serviceIds: [...last.serviceIds],
    staffId: last.staffId,
    locationId: last.locationId,
    // Never a repeat `book` refuses: a longer gap is told by its due date alone.
    everyWeeks: gapWeeks !== null && gapWeeks <= REPEAT_LIMITS.everyWeeks.max ? gapWeeks : null,
    lastStartsAt: last.startsAt,
    nextDueDate: gapWeeks === null ? null : addDays(latestDate, gapWeeks * 7),
  };
}

function sameServices(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/**
 * The median gap between consecutive days of visits in whole weeks, or null with fewer than two such
 * days or a gap of under half a week: visits of one day (a parent and a child booked under one number)
 * are one visit, and visits days apart tell no rhythm a series could repeat.
 */
function typicalGapWeeks(visits: readonly Visit[]): number | null {
  const days = [...new Set(visits.map((v) => localDateAt(v.startsAt, v.timezone)))].sort();
  if (days.length < 2) return null;
  const gaps = days
    .slice(1)
    .map((day, i) => daysBetween(days[i]!, day))
    .sort((a, b) => a - b);
  const weeks = Math.round(gaps[Math.floor(gaps.length / 2)]! / 7);
  return weeks === 0 ? null : weeks;
}
