import { type LocalDay, ZoneCalendar } from '../domain/availability/zone-calendar.ts';
import { localDateAt } from '../domain/time-format.ts';
import type { SpeechLocale } from './speech-locale.ts';

/**
 * When the clocks go back, an hour of wall-clock times happens twice ("1:30 am" in London on the last
 * Sunday of October is 00:30 and 01:30 UTC). Saying such a time must name which one, and reading it
 * back must find the same one: both sides use this module, so they cannot drift apart.
 */

const calendars = new Map<string, ZoneCalendar>();

/** One calendar per zone, kept: a calendar remembers the days it has worked out. */
export function zoneCalendar(zone: string): ZoneCalendar {
  let calendar = calendars.get(zone);
  if (!calendar) {
    calendar = new ZoneCalendar(zone);
    calendars.set(zone, calendar);
  }
  return calendar;
}

/** The local day and minute of the day an instant shows on the zone's wall clock. */
export function wallClockOf(epochMs: number, zone: string): { day: LocalDay; minute: number } {
  const calendar = zoneCalendar(zone);
  const day = calendar.day(localDateAt(epochMs, zone));
  const offset = day.steadyOffset ?? calendar.offsetAt(epochMs);
  const minute = Math.floor((epochMs - day.wallMidnight + offset) / 60_000);
  return { day, minute };
}

/**
 * Which occurrence of its wall-clock time an instant is: null when that time happens once that day,
 * else 0 (the first, before the clocks go back) or 1 (the second), with both instants.
 */
export function occurrenceOf(
  epochMs: number,
  zone: string,
): { index: 0 | 1; instants: readonly [number, number] } | null {
  const { day, minute } = wallClockOf(epochMs, zone);
  // Most days keep one offset all day: no time happens twice in them.
  if (day.steadyOffset !== null) return null;
  const instants = zoneCalendar(zone).instantsAt(day, minute);
  if (instants.length < 2) return null;
  const [first, second] = instants as [number, number];
  // The instant may carry seconds; the occurrence is the one with the same offset.
  const offset = zoneCalendar(zone).offsetAt(epochMs);
  return { index: zoneCalendar(zone).offsetAt(first) === offset ? 0 : 1, instants: [first, second] };
}

/**
 * English locales whose time-zone names are tried, after the location's own, for a real abbreviation:
 * CLDR gives "BST" only in en-GB, "EST" in en-US and en-CA, "AEDT" and "LHDT" in en-AU, "NZDT" in en-NZ,
 * Ireland's "IST" in en-IE, India's "IST" in en-IN (a salon in Kolkata hears "2:30 pm IST" as its own
 * clock); elsewhere only "GMT+11".
 */
export const ABBREVIATION_LOCALES = ['en-GB', 'en-US', 'en-AU', 'en-NZ', 'en-CA', 'en-IE', 'en-IN'] as const;

/**
 * The words that tell the two occurrences of a repeated time apart: the zone's abbreviations ("BST"
 * and "GMT") when some English locale has letters for both, else null (the caller then says "the
 * first" or "the second": "GMT+11" and "GMT+10:30" mean little to someone on the phone).
 */
export function occurrenceNames(
  instants: readonly [number, number],
  zone: string,
  locale: SpeechLocale,
): readonly [string, string] | null {
  for (const tried of new Set([locale, ...ABBREVIATION_LOCALES])) {
    const first = zoneName(instants[0], zone, tried);
    const second = zoneName(instants[1], zone, tried);
    if (first !== second && LETTERS_ONLY.test(first) && LETTERS_ONLY.test(second)) return [first, second];
  }
  return null;
}

/** Every name English gives the zone at that instant, lower-cased ("bst", "gmt+1"), for reading. */
export function zoneNamesAt(epochMs: number, zone: string): Set<string> {
  return new Set(ABBREVIATION_LOCALES.map((locale) => zoneName(epochMs, zone, locale).toLowerCase()));
}

export const LETTERS_ONLY = /^[A-Z]{2,6}$/;
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's short name at that instant in the locale: "BST", "EST", "GMT+11". */
export function zoneName(epochMs: number, zone: string, locale: string): string {
  const key = `${locale}|${zone}`;
  let format = formatters.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: 'short' });
    formatters.set(key, format);
  }
  return format.formatToParts(epochMs).find((part) => part.type === 'timeZoneName')?.value ?? '';
}
