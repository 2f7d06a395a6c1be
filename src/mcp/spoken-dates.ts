import { addDays, wallMidnightOf } from '../domain/availability/zone-calendar.ts';
import { localDateAt } from '../domain/time-format.ts';

/**
 * A caller says "next Tuesday" or "the 24th of November", and the agent passes the words on; turning
 * them into a date here, in the location's zone, keeps the model from doing calendar arithmetic (which
 * it gets wrong) and from using its own idea of today (which is the server's, or nobody's).
 */

export type DateResolution = { ok: true; date: string } | { ok: false; reason: string };

const ACCEPTED_FORMS = 'say a date as YYYY-MM-DD, today, tomorrow, a weekday or a day and month';

/** Values as Date#getUTCDay: 0 = Sunday .. 6 = Saturday. */
const WEEKDAYS: ReadonlyMap<string, number> = new Map([
  ['sunday', 0],
  ['sun', 0],
  ['monday', 1],
  ['mon', 1],
  ['tuesday', 2],
  ['tue', 2],
  ['tues', 2],
  ['wednesday', 3],
  ['wed', 3],
  ['thursday', 4],
  ['thu', 4],
  ['thur', 4],
  ['thurs', 4],
  ['friday', 5],
  ['fri', 5],
  ['saturday', 6],
  ['sat', 6],
]);

const MONTHS: ReadonlyMap<string, number> = new Map([
  ['january', 1],
  ['jan', 1],
  ['february', 2],
  ['feb', 2],
  ['march', 3],
  ['mar', 3],
  ['april', 4],
  ['apr', 4],
  ['may', 5],
  ['june', 6],
  ['jun', 6],
  ['july', 7],
  ['jul', 7],
  ['august', 8],
  ['aug', 8],
  ['september', 9],
  ['sep', 9],
  ['sept', 9],
  ['october', 10],
  ['oct', 10],
  ['november', 11],
  ['nov', 11],
  ['december', 12],
  ['dec', 12],
]);

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** "24 november", "the 24th of november", "1st jan 2027". */
const DAY_FIRST = /^(?:the )?(\d{1,2})(?:st|nd|rd|th)? (?:of )?([a-z]+)(?: (\d{4}))?$/;
/** "november 24th", "dec 3", "november the 24th 2027". */
const MONTH_FIRST = /^([a-z]+) (?:the )?(\d{1,2})(?:st|nd|rd|th)?(?: (\d{4}))?$/;
/** Leap years are at most eight apart (2096, 2104), so "29 february" always lands within that. */
const YEARS_TO_SEARCH = 8;

/**
 * The date the words name, where today is the local date of `now` in `zone` (an unknown zone throws:
 * that is a data fault, not something the caller said). Case, spacing and stray punctuation from
 * speech-to-text ("Dec. 3, 2027", "tomorrow.") do not matter. A weekday alone or after "this" is the
 * next one from today, today included; "next" skips today, so on a Tuesday "next tuesday" is a week
 * away. A day and month without a year is the first such date not before today. Dates in the past are
 * resolved, not refused: whether they can be booked is for the caller of this function to say.
 */
export function resolveSpokenDate(text: string, zone: string, now: number): DateResolution {
  const today = localDateAt(now, zone);
  const phrase = text
    .toLowerCase()
    .replace(/[,.!?]/g, ' ')
    .trim()
    .replace(/\s+/g, ' ');

  const iso = ISO_DATE.exec(phrase);
  if (iso) return dateOrReason(calendarDate(Number(iso[1]), Number(iso[2]), Number(iso[3])), text);

  switch (phrase) {
    case 'today':
      return { ok: true, date: today };
    case 'tomorrow':
      return { ok: true, date: addDays(today, 1) };
    case 'day after tomorrow':
    case 'the day after tomorrow':
      return { ok: true, date: addDays(today, 2) };
  }

  const words = phrase.split(' ');
  const weekday = WEEKDAYS.get(words.at(-1)!);
  if (weekday !== undefined) {
    if (words.length === 1 || (words.length === 2 && words[0] === 'this')) {
      return { ok: true, date: onOrAfter(today, weekday) };
    }
    if (words.length === 2 && words[0] === 'next') {
      return { ok: true, date: onOrAfter(addDays(today, 1), weekday) };
    }
  }

  const dayFirst = DAY_FIRST.exec(phrase);
  const monthFirst = MONTH_FIRST.exec(phrase);
  const spoken = dayFirst
    ? { day: dayFirst[1]!, month: dayFirst[2]!, year: dayFirst[3] }
    : monthFirst
      ? { day: monthFirst[2]!, month: monthFirst[1]!, year: monthFirst[3] }
      : undefined;
  const month = spoken && MONTHS.get(spoken.month);
  if (spoken && month !== undefined) {
    const day = Number(spoken.day);
    if (spoken.year !== undefined) return dateOrReason(calendarDate(Number(spoken.year), month, day), text);
    return dateOrReason(firstNotBefore(today, month, day), text);
  }

  return { ok: false, reason: ACCEPTED_FORMS };
}

function dateOrReason(date: string | undefined, text: string): DateResolution {
  return date === undefined ? { ok: false, reason: `${text.trim()} is not a real date` } : { ok: true, date };
}

/** The first date from `from` (included) that falls on `weekday` (0 = Sunday .. 6 = Saturday). */
function onOrAfter(from: string, weekday: number): string {
  const fromWeekday = new Date(wallMidnightOf(from)).getUTCDay();
  return addDays(from, (weekday - fromWeekday + 7) % 7);
}

/** The first `day` of `month` on or after `today`, or undefined when the month never has that day. */
function firstNotBefore(today: string, month: number, day: number): string | undefined {
  const thisYear = Number(today.slice(0, 4));
  for (let year = thisYear; year <= thisYear + YEARS_TO_SEARCH; year += 1) {
    const date = calendarDate(year, month, day);
    // 'YYYY-MM-DD' strings sort as the dates do.
    if (date !== undefined && date >= today) return date;
  }
  return undefined;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** 'YYYY-MM-DD' when the date is on the calendar, else undefined. */
function calendarDate(year: number, month: number, day: number): string | undefined {
  if (month < 1 || month > 12 || day < 1) return undefined;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
  if (day > days) return undefined;
  return `${String(year).padStart(4, '0')}-${pad(month)}-${pad(day)}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

export type TimeOfDay = 'morning' | 'afternoon' | 'evening';

/** Local minutes since midnight, half-open [from, to): "in the morning" means before noon, and so on. */
export const TIME_OF_DAY_MINUTES: Record<TimeOfDay, { from: number; to: number }> = {
  morning: { from: 0, to: 720 },
  afternoon: { from: 720, to: 1020 },
  evening: { from: 1020, to: 1440 },
};

const NAMED_TIMES: ReadonlyMap<string, number> = new Map([
  ['noon', 720],
  ['midday', 720],
  ['12 noon', 720],
  ['12 midday', 720],
  ['midnight', 0],
  ['12 midnight', 0],
]);

/** "14:30", "9:05", "14.30": a 24-hour clock needs its minutes, or "0930" and "14" would be guesses. */
const CLOCK = /^(\d{1,2})[:.](\d{2})$/;
/** "2pm", "2 pm", "2:30pm", "2.30 p.m.", "12 am". */
const MERIDIEM = /^(\d{1,2})(?:[:.](\d{2}))? ?([ap])\.? ?m\.?$/;

/**
 * A local time of day as minutes since midnight, or undefined when the words are not one. Hours run
 * 0-23 on a 24-hour clock and 1-12 with am/pm; "12 am" is midnight and "12 pm" noon.
 */
export function parseSpokenTime(text: string): number | undefined {
  const spoken = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const named = NAMED_TIMES.get(spoken);
  if (named !== undefined) return named;

  const clock = CLOCK.exec(spoken);
  if (clock) {
    const hour = Number(clock[1]);
    const minute = Number(clock[2]);
    return hour <= 23 && minute <= 59 ? hour * 60 + minute : undefined;
  }

  const meridiem = MERIDIEM.exec(spoken);
  if (meridiem) {
    const hour = Number(meridiem[1]);
    const minute = meridiem[2] === undefined ? 0 : Number(meridiem[2]);
    if (hour < 1 || hour > 12 || minute > 59) return undefined;
    return ((hour % 12) + (meridiem[3] === 'p' ? 12 : 0)) * 60 + minute;
  }

  return undefined;
}
