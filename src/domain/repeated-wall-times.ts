import { IANAZone } from 'luxon';
import { offsetAt } from './time-format.ts';

/**
 * Wall-clock times a zone shows twice: when the clocks go back, a stretch of the day happens again,
 * and a time written without more is ambiguous. What tells the two apart, for every face that writes a
 * time a person reads (the pages, the console).
 */

/**
 * When the clocks go back, a stretch of wall-clock time happens twice (an hour; 30 minutes on Lord
 * Howe Island): Sydney's 02:00 on 4 April 2027 is 15:00Z and again 16:00Z. A time in that stretch is
 * written with words telling the two apart (`text` followed by repeatedTimeLabel); every other time is
 * `text` unchanged. The console's times and the hosted pages' times both go through this.
 */
export function withRepeatedLabel(text: string, epochMs: number, zone: string, locale: string): string {
  const label = repeatedTimeLabel(epochMs, zone, locale);
  return label === '' ? text : `${text} ${label}`;
}

/**
 * What tells a repeated wall-clock time apart from its twin (see zoneNamesApart: "AEDT" for the first
 * 02:00 in Sydney, "AEST" for the second), or '' for a time the clock shows once that day.
 */
export function repeatedTimeLabel(epochMs: number, zone: string, locale: string): string {
  const twin = twinInstant(epochMs, zone);
  if (twin === null) return '';
  const [first, second] = zoneNamesApart(Math.min(epochMs, twin), Math.max(epochMs, twin), zone, locale);
  return epochMs < twin ? first : second;
}

const HOUR_MS = 3_600_000;
/**
 * Where another offset is looked for. A wall time repeats only after the clocks went back, and its
 * twin is as far away as they went: 30 minutes to 3 hours for every change in force (±3 h), and a
 * whole day for the few zones that once moved across the date line westwards (±25 h).
 */
const TWIN_PROBES = [-3 * HOUR_MS, 3 * HOUR_MS, -25 * HOUR_MS, 25 * HOUR_MS];

/** The other instant at which the clocks of `zone` show the same wall time as at `epochMs`, or null. */
export function twinInstant(epochMs: number, zone: string): number | null {
  if (!IANAZone.create(zone).isValid) return null;
  // offsetAt remembers the steady hours it was asked about: the outbox worker asks five offsets of every
  // message it renders, and luxon's own (formatToParts each time) were 2 % of a booking's CPU (issue 47).
  const offset = offsetAt(zone, epochMs);
  for (const probe of TWIN_PROBES) {
    const other = offsetAt(zone, epochMs + probe);
    if (other === offset) continue;
    // Same wall time: twin + other = epochMs + offset, and the twin must really be at that offset.
    const twin = epochMs + (offset - other) * 60_000;
    if (offsetAt(zone, twin) === other) return twin;
  }
  return null;
}

/**
 * Names telling apart two instants of a zone at different offsets, earlier first: the locale's short
 * zone names when they are abbreviations ("BST"/"GMT" in en-GB, "AEDT"/"AEST" in en-AU, "MESZ"/"MEZ"
 * in de-DE), else English ones ("EDT"/"EST" for New York, where en-GB says "GMT-4"/"GMT-5"), else the
 * offsets ("GMT+11"/"GMT+10"), else "(first)"/"(second)".
 */
export function zoneNamesApart(
  earlier: number,
  later: number,
  zone: string,
  locale: string,
): [string, string] {
  const short = (tried: string): [string, string] => [
    zoneNameAt(earlier, zone, tried, 'short'),
    zoneNameAt(later, zone, tried, 'short'),
  ];
  const [a, b] = short(locale);
  if (a !== '' && b !== '' && a !== b && LETTERS.test(a) && LETTERS.test(b)) return [a, b];
  // "GMT-4"/"GMT-5" (en-GB for New York) mean little to a customer there; another English locale has
  // the letters they read on their own clocks ("EDT"/"EST"). Other languages keep their own words.
  for (const tried of locale.toLowerCase().startsWith('en') ? ENGLISH_ABBREVIATIONS : []) {
    const [x, y] = short(tried);
    if (x !== y && LETTERS.test(x) && LETTERS.test(y)) return [x, y];
  }
  for (const style of ['short', 'shortOffset'] as const) {
    const c = zoneNameAt(earlier, zone, locale, style);
    const d = zoneNameAt(later, zone, locale, style);
    if (c !== '' && d !== '' && c !== d) return [c, d];
  }
  return ['(first)', '(second)'];
}

/** A zone abbreviation people read ("BST", "EST", "AEDT"), not an offset ("GMT-5"). */
const LETTERS = /^[A-Z]{2,6}$/;
/** The English locales whose short zone names are abbreviations for their own zones. */
const ENGLISH_ABBREVIATIONS = ['en-US', 'en-GB', 'en-AU', 'en-NZ', 'en-CA', 'en-IE'];

function zoneNameAt(epochMs: number, zone: string, locale: string, style: 'short' | 'shortOffset'): string {
  const names = new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: style });
  return names.formatToParts(epochMs).find((p) => p.type === 'timeZoneName')?.value ?? '';
}
