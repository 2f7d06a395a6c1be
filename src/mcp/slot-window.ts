import type { DayHours } from '../domain/availability/opening-hours.ts';
import { addDays } from '../domain/availability/zone-calendar.ts';
import { zoneCalendar } from './repeated-times.ts';
import { speakClock } from './speech.ts';
import type { SpeechLocale } from './speech-locale.ts';
import {
  type MinuteSpan,
  openSpans,
  parseSpokenTime,
  readTimeInHours,
  type SpokenTime,
  TIME_OF_DAY_MINUTES,
  type TimeOfDay,
} from './spoken-times.ts';
import { BadArgument } from './tool-kit.ts';

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
  earliest: SaidTime | undefined;
  latest: SaidTime | undefined;
}

export function readTimeArguments(
  part: TimeOfDay | undefined,
  earliest: string | undefined,
  latest: string | undefined,
): TimeArguments {
  const read = (param: SaidTime['param'], said: string | undefined) => {
    if (said === undefined) return undefined;
    const time = parseSpokenTime(said);
    if (!time) throw new BadArgument(param, 'give a time of day such as "2:30pm" or "14:30".');
    return { param, said, time };
  };
  return { part, earliest: read('earliest', earliest), latest: read('latest', latest) };
}

/**
 * The window of starts, the times placed inside the opening hours `open`; a time that is open both
 * in the morning and in the evening is a BadArgument whose hint has the agent ask which.
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
  return { from: Math.max(window.from, from ?? 0), to: Math.min(window.to, to ?? 1439) };
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

/** The local minute of day of an RFC 3339 time with offset: its wall-clock digits. */
function localMinute(startsAt: string): number {
  return Number(startsAt.slice(11, 13)) * 60 + Number(startsAt.slice(14, 16));
}
