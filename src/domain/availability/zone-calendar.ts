import { IANAZone } from 'luxon';
import { localDateAt } from '../time-format.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Days are asked for again and again (each query covers up to 14); a few years' worth is plenty. */
const MAX_CACHED_DAYS = 2000;

/** A local calendar day of a zone, as instants. */
export interface LocalDay {
  date: string;
  /** 1 = Monday .. 7 = Sunday. */
  weekday: number;
  /** The first instant whose local date is this day (local midnight, unless midnight does not exist). */
  start: number;
  /** The first instant of the next local day. */
  end: number;
  /** Date.UTC of the date at 00:00: wall-clock time written as if it were UTC. */
  wallMidnight: number;
  /** The offset (ms) in force all day, or null on a day near an offset change. */
  steadyOffset: number | null;
  /** Offsets (ms) in force around the day: one on ordinary days, two near a change. */
  offsets: number[];
}

/** A change of a zone's clocks, as ZoneCalendar.clockChangeNear finds it. */
export interface ClockChange {
  /** The instant the offset changes: the first on the new offset. */
  at: number;
  /** The wall minute of the day the clocks had reached as they change ("01:00" in London in March). */
  fromMinute: number;
  /** The wall minute they show instead ("02:00"). */
  toMinute: number;
}

/**
 * Turns local wall-clock times of one IANA zone into instants, exactly, DST included.
 *
 * A wall-clock time W (as ms since the epoch if it were UTC) happens at W - offset for every offset
 * in force around it for which that instant really has that offset: none in a spring-forward gap, two
 * in a fall-back overlap. Days far from an offset change take a shortcut (one offset, plain
 * arithmetic), because asking the time-zone database is slow and most days never change offset.
 */
export class ZoneCalendar {
  readonly #zone: IANAZone;
  readonly #days = new Map<string, LocalDay>();

  constructor(zoneName: string) {
    const zone = IANAZone.create(zoneName);
    if (!zone.isValid) throw new Error(`Unknown time zone: ${zoneName}`);
    this.#zone = zone;
  }

  offsetAt(instant: number): number {
    // Rounded: an offset in seconds (the local mean times of the 1800s) is a fraction of a minute, and
    // 60_000 times it is not always a whole number of milliseconds in floating point.
    return Math.round(this.#zone.offset(instant) * MINUTE);
  }

  day(date: string): LocalDay {
    const cached = this.#days.get(date);
    if (cached) return cached;
    const wallMidnight = wallMidnightOf(date);
    // The day's instants lie within [W - 14 h, W + 24 h + 12 h] whatever the offset; offset changes are
    // months apart, so equal offsets at both ends mean none in between.
    const first = this.offsetAt(wallMidnight - 14 * HOUR);
    const last = this.offsetAt(wallMidnight + 36 * HOUR);
    const offsets = first === last ? [first] : [first, last];
    const steadyOffset = first === last ? first : null;
    const partial = { wallMidnight, offsets, steadyOffset };
    const start =
      steadyOffset === null ? this.#firstInstantAtOrAfter(partial, wallMidnight) : wallMidnight - first;
    const end =
      steadyOffset === null
        ? this.#firstInstantAtOrAfter(partial, wallMidnight + DAY)
        : wallMidnight + DAY - first;
    const day: LocalDay = { date, weekday: weekdayOf(wallMidnight), start, end, ...partial };
    if (this.#days.size >= MAX_CACHED_DAYS) this.#days.clear();
    this.#days.set(date, day);
    return day;
  }

  /** The instants whose local wall clock reads minute `minute` of `day`: none, one, or two (in order). */
  instantsAt(day: LocalDay, minute: number): number[] {
    const wall = day.wallMidnight + minute * MINUTE;
    if (day.steadyOffset !== null) return [wall - day.steadyOffset];
    const instants: number[] = [];
    for (const offset of day.offsets) {
      const instant = wall - offset;
      if (this.offsetAt(instant) === offset) instants.push(instant);
    }
    return instants.sort((a, b) => a - b);
  }

  /**
   * The instant a working-hours boundary means (types.ts): the wall time's first instant, the end of
   * the gap when the wall time does not exist, and the next day's start for minute 1440.
   */
  boundary(day: LocalDay, minute: number): number {
    if (minute >= 1440) return day.end;
    return this.#firstInstantAtOrAfter(day, day.wallMidnight + minute * MINUTE);
  }

  /** Every instant of `day` whose local minute-of-day is a multiple of `interval`, in order. */
  grid(day: LocalDay, interval: number): number[] {
    const starts: number[] = [];
    for (let minute = 0; minute < 1440; minute += interval) {
      for (const instant of this.instantsAt(day, minute)) {
        if (instant >= day.start && instant < day.end) starts.push(instant);
      }
    }
    // Around a fall-back change a later wall time can come before an earlier one's second instant.
    return day.steadyOffset === null ? starts.sort((a, b) => a - b) : starts;
  }

  /**
   * The change of the clocks near `day`, on a day whose offsets differ (null on a steady day): the
   * instant the offset changes, and the wall minutes of `day` the clocks had reached and show instead
   * (1440 for the day's end). Forward, [from, to) is skipped; back, [to, from) happens twice. A day
   * next to the change's day has two offsets too: `at` may lie outside [day.start, day.end), which the
   * caller checks. One search for the pages, the tools' words and the boundaries alike.
   */
  clockChangeNear(day: LocalDay): ClockChange | null {
    if (day.steadyOffset !== null) return null;
    const before = day.offsets[0]!;
    const hi = this.#changeBetween(day.wallMidnight - 14 * HOUR, day.wallMidnight + 36 * HOUR, before);
    const wallMinute = (offset: number) => Math.round((hi + offset - day.wallMidnight) / MINUTE);
    return { at: hi, fromMinute: wallMinute(before), toMinute: wallMinute(this.offsetAt(hi)) };
  }

  localDateOf(instant: number): string {
    return localDateAt(instant, this.#zone.name);
  }

  /** The first instant whose local wall clock reads `wall` or later. */
  #firstInstantAtOrAfter(day: Pick<LocalDay, 'offsets' | 'steadyOffset'>, wall: number): number {
    if (day.steadyOffset !== null) return wall - day.steadyOffset;
    const exact = day.offsets
      .map((offset) => wall - offset)
      .filter((instant, index) => this.offsetAt(instant) === day.offsets[index])
      .sort((a, b) => a - b);
    if (exact.length > 0) return exact[0]!;
    // In a gap: the wall time read with the earlier offset lands after the change, with the later
    // offset before it. The change happens between the two.
    const before = day.offsets[0]!;
    const [lo, hi] = [wall - Math.max(...day.offsets), wall - Math.min(...day.offsets)];
    return this.offsetAt(lo) === before
      ? this.#changeBetween(lo, hi, before)
      : this.#changeBetween(hi, lo, before);
  }

  /**
   * The first instant after `lo` (on offset `before`) and at or before `hi` (on another) whose offset
   * is not `before`. Offsets change on whole minutes, so the search goes by minutes; the local mean
   * times of the 1800s are offsets in seconds (London's -0:01:15), and for those it goes on to the
   * millisecond.
   */
  #changeBetween(lo: number, hi: number, before: number): number {
    const isBefore = (instant: number) => this.offsetAt(instant) === before;
    while (hi - lo > MINUTE) {
      // At least a minute on: between one and two minutes apart, half of it in whole minutes is none.
      const mid = lo + Math.max(MINUTE, Math.floor((hi - lo) / 2 / MINUTE) * MINUTE);
      if (isBefore(mid)) lo = mid;
      else hi = mid;
    }
    if (isBefore(hi - 1)) return hi;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (isBefore(mid)) lo = mid;
      else hi = mid;
    }
    return hi;
  }
}

/** The last date written YYYY-MM-DD: nothing later can be searched, said or booked. */
export const LAST_CALENDAR_DATE = '9999-12-31';

export function wallMidnightOf(date: string): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  if (year >= 100) return Date.UTC(year, month - 1, day);
  // Date.UTC reads the years 0-99 as 1900-1999; setUTCFullYear takes them as written.
  return new Date(0).setUTCFullYear(year, month - 1, day);
}

/** The calendar date `days` after `date` (both 'YYYY-MM-DD'). */
export function addDays(date: string, days: number): string {
  return new Date(wallMidnightOf(date) + days * DAY).toISOString().slice(0, 10);
}

/** Whole days from one calendar date to another (negative when `to` comes first): addDays undone. */
export function daysBetween(from: string, to: string): number {
  return Math.round((wallMidnightOf(to) - wallMidnightOf(from)) / DAY);
}

/**
 * True for a real calendar date written YYYY-MM-DD (2026-02-30 is not one), on the proleptic Gregorian
 * calendar Date counts by (0000 and 2000 leap years, 1900 not). Checked by arithmetic, with nothing
 * allocated: every slot a tool speaks is checked, so a Date and its ISO string for each of them showed
 * in the profile of find_slots.
 */
export function isCalendarDate(value: string): boolean {
  if (!CALENDAR_DATE.test(value)) return false;
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(5, 7));
  const day = Number(value.slice(8, 10));
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}$/;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return MONTH_DAYS[month - 1]!;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return leap ? 29 : 28;
}

function weekdayOf(wallMidnight: number): number {
  const sundayZero = new Date(wallMidnight).getUTCDay();
  return sundayZero === 0 ? 7 : sundayZero;
}

/**
 * Instants that cover `days` local days from `fromDate` in any zone (offsets stay within ±14 h) with
 * room to spare, for loading what can affect them: bookings whose blocks reach in, and time off.
 */
export function searchWindow(fromDate: string, days: number): { start: number; end: number } {
  // Counted in days from the first (not through the date after the last, which after 9999-12-31
  // cannot be written: the window of a search of 9999-12-31 was NaN, which PostgreSQL refuses).
  const midnight = wallMidnightOf(fromDate);
  return { start: midnight - 2 * DAY, end: midnight + (days + 2) * DAY };
}
