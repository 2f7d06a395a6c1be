import type { DayHours } from '../domain/availability/opening-hours.ts';
import { addDays, daysBetween } from '../domain/availability/zone-calendar.ts';
import { zoneCalendar } from './repeated-times.ts';
import { speakClock } from './speech.ts';
import type { SpeechLocale } from './speech-locale.ts';
import { LAST_CALENDAR_DATE } from './spoken-dates.ts';
import {
  type MinuteSpan,
  openSpans,
  parseSpokenTime,
  readTimeInHours,
  type SpokenTime,
  TIME_OF_DAY_MINUTES,
  type TimeOfDay,
} from './spoken-times.ts';
import { BadArgument, readAll } from './tool-kit.ts';

/**
 * The starts find_slots offers within a day: a part of the day, an earliest and a latest start, as
 * local minutes. A time said without am/pm is placed inside the opening hours of the days searched.
 */

export interface MinutesWindow {
  from: number;
  /** Inclusive: the latest start accepted. */
  to: number;
}

/** The starts a part of the day allows (the whole day without one), latest start inclusive. */
export function partOfDay(part: TimeOfDay | undefined): MinutesWindow {
  return part
    ? { from: TIME_OF_DAY_MINUTES[part].from, to: TIME_OF_DAY_MINUTES[part].to - 1 }
    : { from: 0, to: 1439 };
}

interface SaidTime {
  param: 'earliest' | 'latest';
  said: string;
  time: SpokenTime;
}

/** The time arguments as said, read (or refused) before anything is searched. */
export interface TimeArguments {
  part: TimeOfDay | undefined;
  /** The argument the part of the day was said in: time_of_day, or the date ("tomorrow morning"). */
  partSaidIn?: 'time_of_day' | 'date';
  earliest: SaidTime | undefined;
  latest: SaidTime | undefined;
}

export function readTimeArguments(
  part: TimeOfDay | undefined,
  earliest: string | undefined,
  latest: string | undefined,
  /**
   * A time given with a zone ("10am EST"), when it can be read: the time when it is the location's
   * clock there, else what to say of it (find_slots's reader).
   */
  zoned?: (param: SaidTime['param'], said: string) => SpokenTime | string | undefined,
): TimeArguments {
  const read = (param: SaidTime['param'], said: string | undefined) => {
    if (said === undefined) return undefined;
    const plain = parseSpokenTime(said);
    const withZone = plain ? undefined : zoned?.(param, said);
    const time = plain ?? (typeof withZone === 'object' ? withZone : undefined);
    if (!time) {
      const reason =
        typeof withZone === 'string' ? withZone : 'give a time of day such as "2:30pm" or "14:30".';
      throw new BadArgument(param, reason);
    }
    return { param, said, time };
  };
  // Both read, so that two unreadable times are both named (readAll).
  const [from, to] = readAll(
    () => read('earliest', earliest),
    () => read('latest', latest),
  );
  return { part, earliest: from, latest: to };
}

/**
 * The window of starts, the times placed inside the opening hours `open`; a time that is open both
 * in the morning and in the evening is a BadArgument whose hint has the agent ask which, and so is a
 * latest start before the earliest, and an earliest start after the part of the day asked for or a
 * latest start before it (nothing could be found: "nothing free" would mislead the caller).
 */
export function minutesWindow(
  args: TimeArguments,
  open: readonly MinuteSpan[],
  locale: SpeechLocale,
): MinutesWindow {
  const window = partOfDay(args.part);
  const place = (spoken: SaidTime | undefined) => {
    if (spoken === undefined) return undefined;
    const reading = readTimeInHours(spoken.time, open, args.part);
    if (reading.ok) return reading.minute;
    const [one, other] = reading.readings.map((minute) => speakClock(minute, locale));
    throw new BadArgument(
      spoken.param,
      `${spoken.said.trim()} could be ${one} or ${other}, both within opening hours; ask the caller which.`,
    );
  };
  const from = place(args.earliest);
  const to = place(args.latest);
  // "Until midnight" runs to the end of the day: as the latest start, 00:00 is the day's last
  // minute, not its first (which would leave nothing to find).
  const until = to === undefined || to === 0 ? 1439 : to;
  if (from !== undefined && to !== undefined) {
    const crossed = crossedTimes(from, to, speakClock(from, locale), speakClock(to, locale));
    if (crossed) throw crossed;
  }
  if (args.part) outsidePart(args, from, to === undefined ? undefined : until, locale);
  return { from: Math.max(window.from, from ?? 0), to: Math.min(window.to, until) };
}

/**
 * A latest start before the earliest (minutes of the day, as said): nothing could be found, so the
 * agent swapped them or misheard one, and should know it. "Until midnight" runs to the end of the
 * day: as the latest start, 00:00 is the day's last minute, not its first.
 */
export function crossedTimes(from: number, to: number, earliest: string, latest: string): BadArgument | null {
  const until = to === 0 ? 1439 : to;
  if (until >= from) return null;
  return new BadArgument(
    'earliest and latest',
    `latest (${latest}) is before earliest (${earliest}); latest is the last start wanted, so ask the caller which times they mean.`,
  );
}

/** Throws when the earliest start is after the part of the day, or the latest before it. */
function outsidePart(
  args: TimeArguments,
  from: number | undefined,
  until: number | undefined,
  locale: SpeechLocale,
): void {
  const part = args.part!;
  const window = partOfDay(part);
  const said = args.partSaidIn ?? 'time_of_day';
  const clock = (minute: number) => speakClock(minute, locale);
  if (from !== undefined && from > window.to) {
    throw new BadArgument(
      `${said} and earliest`,
      `earliest (${clock(from)}) is after the ${part}, which ends at ${clock(window.to + 1)}; ask the caller whether they mean the ${part} or from ${clock(from)}.`,
    );
  }
  if (until !== undefined && until < window.from) {
    throw new BadArgument(
      `${said} and latest`,
      `latest (${clock(until)}) is before the ${part}, which starts at ${clock(window.from)}; ask the caller whether they mean the ${part} or until ${clock(until)}.`,
    );
  }
}

export function inWindow(startsAt: string, window: MinutesWindow): boolean {
  const minute = localMinute(startsAt);
  return minute >= window.from && minute <= window.to;
}

/** The opening hours of the `days` local days from `date`, as minute spans. */
export function openDuring(
  hours: readonly DayHours[],
  zone: string,
  date: string,
  days: number,
): MinuteSpan[] {
  const weekdays = Array.from({ length: days }, (_, i) => zoneCalendar(zone).day(addDays(date, i)).weekday);
  return openSpans(hours, weekdays);
}

/** Whether placing the time arguments needs the opening hours: a time said without am/pm does. */
export function needsOpeningHours(args: TimeArguments): boolean {
  return args.earliest?.time.halfDay === true || args.latest?.time.halfDay === true;
}

/** The days find_slots searches: `days` local dates from `from`. */
export interface DaySpan {
  from: string;
  days: number;
}

/**
 * The days asked for (`days` from `date`) as they can be searched, given the location's `today`:
 * `passed` when every one of them is over (nothing can be found in them, and the caller should hear
 * why); otherwise from today when they start earlier, since the days gone by hold nothing to offer.
 * Either way they stop at the last date on the calendar (9999-12-31), so no later date is made.
 */
export function searchableDays(date: string, days: number, today: string): DaySpan & { passed: boolean } {
  const span = { from: date, days: daysUpTo(date, days) };
  const last = addDays(span.from, span.days - 1);
  if (last < today) return { ...span, passed: true };
  if (date >= today) return { ...span, passed: false };
  return { from: today, days: daysBetween(today, last) + 1, passed: false };
}

/**
 * How the days searched meet the last date the location takes bookings for (today plus its
 * max_advance_days): all beyond it (`tooFarAhead`), or how many of them are bookable and whether the
 * span was cut short by it.
 */
export function bookableDays(
  span: DaySpan,
  lastBookable: string,
): { tooFarAhead: true } | { tooFarAhead: false; days: number; cut: boolean } {
  if (span.from > lastBookable) return { tooFarAhead: true };
  const last = addDays(span.from, span.days - 1);
  if (last <= lastBookable) return { tooFarAhead: false, days: span.days, cut: false };
  return { tooFarAhead: false, days: daysBetween(span.from, lastBookable) + 1, cut: true };
}

/** The last date bookable `maxAdvanceDays` after `today` (never past 9999-12-31). */
export function lastBookableDate(today: string, maxAdvanceDays: number): string {
  return addDays(today, daysUpTo(today, maxAdvanceDays + 1) - 1);
}

/** `days`, or fewer when the span from `date` would run past 9999-12-31. */
export function daysUpTo(date: string, days: number): number {
  return Math.max(1, Math.min(days, daysBetween(date, LAST_CALENDAR_DATE) + 1));
}

/** The local minute of day of an RFC 3339 time with offset: its wall-clock digits. */
export function localMinute(startsAt: string): number {
  return Number(startsAt.slice(11, 13)) * 60 + Number(startsAt.slice(14, 16));
}
