import { phoneAsWrittenAt } from '../app/contact.ts';
import { isCalendarDate, wallMidnightOf } from '../domain/availability/zone-calendar.ts';
import { possessive } from '../domain/counted.ts';
import { describeDuration } from '../domain/duration.ts';
import { localDateAt } from '../domain/time-format.ts';
import { occurrenceNames, occurrenceOf, wallClockOf, zoneCalendar } from './repeated-times.ts';
import type { SpeechLocale } from './speech-locale.ts';

/**
 * Wording a voice receptionist reads aloud on a phone line. A text-to-speech voice reads what it is
 * given, so the words are chosen for the ear: "2:30 pm" rather than "14:30", "55 pounds" rather than
 * "£55.00", a booking reference letter by letter. Everything here is pure: the current instant is
 * always passed in, so a call's wording is reproducible in tests and in logs.
 */

export { type SpeechLocale, speechLocaleFor } from './speech-locale.ts';
export { speakPrice } from './spoken-prices.ts';

/**
 * The 12-hour clock a caller expects to hear, in the zone's local time at that instant: "2:30 pm",
 * "9 am", "noon", "midnight" (see speakClock). A wall time the zone shows twice that day (the clocks
 * going back) says which of the two it is: by the zone's abbreviation where English has one for both
 * ("1:30 am BST", "1:30 am GMT"), else "the first 1:30 am" / "the second 1:30 am".
 */
export function speakTime(epochMs: number, zone: string, locale: SpeechLocale): string {
  const clock = speakClock(wallClockOf(epochMs, zone).minute, locale);
  const occurrence = occurrenceOf(epochMs, zone);
  if (!occurrence) return clock;
  const names = occurrenceNames(occurrence.instants, zone, locale);
  if (names) return `${clock} ${names[occurrence.index]}`;
  return `the ${occurrence.index === 0 ? 'first' : 'second'} ${clock}`;
}

/**
 * A local minute of the day (0..1440) on the 12-hour clock: "2:30 pm", "9 am" (":00" is noise when
 * spoken), and "noon" and "midnight" for 12:00 and 00:00, which "12 pm" and "12 am" leave callers
 * unsure of. British English writes the suffix lower-case, American English upper-case; either reads
 * aloud the same. Midnight is the start of the day it is said with ("Saturday 5 December at
 * midnight" is 00:00 on the 5th), as "12 am" was.
 */
export function speakClock(minuteOfDay: number, locale: SpeechLocale): string {
  if (minuteOfDay === 720) return 'noon';
  // 1440: the end of the day, as opening hours write it ("24:00").
  if (minuteOfDay === 0 || minuteOfDay === 1440) return 'midnight';
  const hour = Math.floor(minuteOfDay / 60);
  const minute = minuteOfDay % 60;
  const suffix = hour < 12 ? 'am' : 'pm';
  const clockHour = hour % 12 === 0 ? 12 : hour % 12;
  const clock = minute === 0 ? String(clockHour) : `${clockHour}:${String(minute).padStart(2, '0')}`;
  return `${clock} ${locale === 'en-US' ? suffix.toUpperCase() : suffix}`;
}

/** Far enough away that a caller could mistake which year is meant. */
export const YEAR_SPOKEN_BEYOND_DAYS = 180;

/**
 * A local calendar date as a caller would say it: "Tuesday 24 November" (en-GB) or "Tuesday,
 * November 24" (en-US). Given today's local date, a date that is today or tomorrow says so first,
 * since callers anchor on those words (unless `relative` is false, for a sentence that puts "on"
 * before the date), and a date more than 180 days away carries its year, since "January" alone is
 * ambiguous then. Any date from 0000-01-01 to 9999-12-31 can be said.
 */
export function speakDate(
  date: string,
  locale: SpeechLocale,
  today?: string,
  options: { relative?: boolean } = {},
): string {
  const day = parseCalendarDate(date);
  const weekday = WEEKDAYS[new Date(day.utcMs).getUTCDay()]!;
  const month = MONTHS[day.month - 1]!;
  let prefix = '';
  let withYear = false;
  if (today !== undefined) {
    const daysAway = Math.round((day.utcMs - parseCalendarDate(today).utcMs) / DAY_MS);
    if (options.relative !== false) {
      if (daysAway === 0) prefix = 'today, ';
      else if (daysAway === 1) prefix = 'tomorrow, ';
    }
    withYear = Math.abs(daysAway) > YEAR_SPOKEN_BEYOND_DAYS;
  }
  // A year before 1000 as it is written ("0099"): "99" alone would be taken for 1999.
  const year = String(day.year).padStart(4, '0');
  const spoken =
    locale === 'en-US'
      ? `${weekday}, ${month} ${day.day}${withYear ? `, ${year}` : ''}`
      : `${weekday} ${day.day} ${month}${withYear ? ` ${year}` : ''}`;
  return prefix + spoken;
}

/**
 * A date as the time of something in a sentence: "on Friday 4 December", but "tomorrow, Friday 4
 * December" and "today, ..." without the "on", which those words do not take.
 */
export function speakOnDate(date: string, locale: SpeechLocale, today: string): string {
  const spoken = speakDate(date, locale, today);
  return /^(?:today|tomorrow), /.test(spoken) ? spoken : `on ${spoken}`;
}

/**
 * An instant as a date and time in the zone: "tomorrow, Tuesday 24 November at 2:30 pm". "Today"
 * and "tomorrow" are the zone's calendar days, not UTC's, so 00:15 after a caller's 23:30 is tomorrow.
 */
export function speakDateTime(epochMs: number, zone: string, locale: SpeechLocale, now: number): string {
  const date = speakDate(localDateAt(epochMs, zone), locale, localDateAt(now, zone));
  return `${date} at ${speakTime(epochMs, zone, locale)}`;
}

/**
 * A booking reference read back one character at a time, so "NHC-7KQ2MX" is not read as a word:
 * "N H C dash 7 K Q 2 M X". Letters are upper-cased (a voice reads a lone capital as its letter name)
 * and whitespace is skipped.
 */
export function spellReference(reference: string): string {
  return [...reference.trim().toUpperCase()]
    .filter((char) => !/\s/.test(char))
    .map((char) => (char === '-' ? 'dash' : char))
    .join(' ');
}

/**
 * A phone number read digit by digit in the groups it is written in, the groups separated by ", " so
 * the voice pauses between them: "0 7 9 1 1, 1 2 3 4 5 6". A number in the location's own numbering
 * plan is given in national form, as a local caller would dial it; any other in international form
 * with "plus". Input that is not a phone number has its digits (and a leading plus) read as one group.
 */
export function speakPhone(e164: string, country?: string | null): string {
  const formatted = phoneAsWrittenAt(e164, country);
  if (formatted === undefined) {
    const trimmed = e164.trim();
    const digits = trimmed.replace(/\D/g, '');
    return spellGroup(trimmed.startsWith('+') ? `+${digits}` : digits);
  }
  return formatted
    .split(/[^\d+]+/)
    .filter((group) => group !== '')
    .map(spellGroup)
    .join(', ');
}

/** "+44" → "plus 4 4". */
function spellGroup(group: string): string {
  return [...group].map((char) => (char === '+' ? 'plus' : char)).join(' ');
}

/** "45 minutes", "1 hour 15 minutes": the same wording the rest of the engine uses, fit for speech. */
export function speakDuration(minutes: number): string {
  return describeDuration(minutes);
}

/**
 * The notice a booking needs, with the possessive English puts on it: "1 hour's notice", "2 hours'
 * notice", "45 minutes' notice", "1 hour 30 minutes' notice"; "no notice" for none.
 */
export function speakNotice(minutes: number): string {
  if (minutes <= 0) return 'no notice';
  return `${possessive(describeDuration(minutes))} notice`;
}

const DAY_MS = 86_400_000;
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

interface CalendarDate {
  year: number;
  month: number;
  day: number;
  /** Midnight UTC of that date: a day count for differences and a weekday, with no zone involved. */
  utcMs: number;
}

function parseCalendarDate(date: string): CalendarDate {
  if (!isCalendarDate(date)) throw new RangeError(`Not a calendar date (YYYY-MM-DD): ${date}`);
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return { year, month, day, utcMs: wallMidnightOf(date) };
}

/**
 * What the clocks do over a wall time they skip, for the agent to tell the caller: "the clocks go
 * forward from 1:00 am to 2:00 am" (London), "from 2:00 am to 2:30 am" (Lord Howe). `minute` is a
 * minute of `date` that does not exist in `zone`.
 */
export function skippedClockWords(zone: string, date: string, minute: number, locale: SpeechLocale): string {
  const calendar = zoneCalendar(zone);
  const day = calendar.day(date);
  // A minute the clocks skip lies in the gap of the change near its day.
  const change = calendar.clockChangeNear(day);
  if (change === null || change.toMinute <= minute || change.fromMinute > minute) {
    return 'the clocks go forward then';
  }
  return `the clocks go forward from ${speakClock(change.fromMinute, locale)} to ${speakClock(change.toMinute, locale)}`;
}
