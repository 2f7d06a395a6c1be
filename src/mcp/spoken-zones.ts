import { wallMidnightOf } from '../domain/availability/zone-calendar.ts';
import { ABBREVIATION_LOCALES, LETTERS_ONLY, zoneCalendar, zoneName, zoneNamesAt } from './repeated-times.ts';
import { skippedClockWords, speakTime } from './speech.ts';
import type { SpeechLocale } from './speech-locale.ts';

/**
 * A time said with a zone other than the location's: "3 pm EST", "10 am UTC+1", "9 am PT". The zone
 * is honoured, as an ISO time's offset is: the time is read on that zone's clock, on the date said
 * (read on the location's calendar), and the instant is then the location's business. The names of
 * the location's own zone say which of a repeated time is meant, or nothing (spoken-starts.ts;
 * carriesOwnName for find_slots' earliest and latest); one said for the other half of the year is
 * read here, as any abbreviation is. A name that could mean two things is asked about, never guessed:
 * - an abbreviation is the offset English gives it (CLDR's short names in the English locales the
 *   engine speaks, as Intl has them: EST is UTC-5, BST UTC+1, CET UTC+1, AEDT UTC+11); said when its
 *   own region is on the other clock ("3 pm EST" in July, when New York keeps EDT; "BST" in a London
 *   winter), the caller may mean either: asked;
 * - "ET", "CT", "MT", "PT" are the American regions' clocks, whichever half of the year;
 * - "UTC", "UTC+1", "GMT-5", "GMT+5:30" are those offsets;
 * - "IST" (India, Ireland or Israel), "CST" (China, the central US or Cuba), "AST" (Arabia or the
 *   Atlantic) and "GST" (the Gulf or South Georgia) are asked about, unless the location's own zone
 *   has the name; so is a name that is one of the location's own without its leading "A" (Australians
 *   say "EST" for AEST, "CST" for ACST, "WST" for AWST); a word that is no zone is refused.
 */

export type ZoneReading = { ok: true; instant: number } | { ok: false; reason: string };

export interface ZoneContext {
  /** The location's zone, whose time the answer is told in. */
  zone: string;
  locale: SpeechLocale;
}

const MINUTE = 60_000;
const OFFSET = /^(?:gmt|utc)([+-])(\d{1,2})(?::(\d{2}))?$/;

/** The American regions by their generic names, which follow daylight saving time. */
const REGION_CLOCKS: ReadonlyMap<string, string> = new Map([
  ['et', 'America/New_York'],
  ['ct', 'America/Chicago'],
  ['mt', 'America/Denver'],
  ['pt', 'America/Los_Angeles'],
]);

/** Letters that name several zones a caller might be in. */
const AMBIGUOUS: ReadonlyMap<string, string> = new Map([
  ['ist', 'India, Ireland or Israel'],
  ['cst', 'China, the central US or Cuba'],
  ['ast', 'Arabia or the Atlantic'],
  ['gst', 'the Gulf or South Georgia'],
]);

/** January and July: summer in one hemisphere, winter in the other. */
const SAMPLES = [Date.UTC(2026, 0, 15, 12), Date.UTC(2026, 6, 15, 12)] as const;

/** The zone's names (lower case) in the English locales, in winter and in summer. */
function ownNames(zone: string): Set<string> {
  return new Set(SAMPLES.flatMap((instant) => [...zoneNamesAt(instant, zone)]));
}

/**
 * Whether `minute` (local minutes) of `date` on the location's own clock carries the name `word`
 * (lower case) at one of its instants: "1:30 am GMT" in London the night the clocks go back (the
 * second 1:30), "3 pm CHADT" in a Chatham summer. Not for the name of the other half of the year, or
 * a name that is not the zone's.
 */
export function carriesOwnName(word: string, date: string, minute: number, zone: string): boolean {
  const calendar = zoneCalendar(zone);
  return calendar.instantsAt(calendar.day(date), minute).some((at) => zoneNamesAt(at, zone).has(word));
}

/**
 * One of the location's own zone names that the abbreviation table lacks (its zone is none of
 * REGIONS: Chatham's CHAST and CHADT), with the offset it names: read as any abbreviation is, so a
 * name of the other half of the year is asked about ("Chatham is on CHADT, not CHAST, then").
 */
function ownAbbreviation(word: string, zone: string): Abbreviation | undefined {
  for (const instant of SAMPLES) {
    for (const locale of ABBREVIATION_LOCALES) {
      if (zoneName(instant, zone, locale).toLowerCase() !== word) continue;
      return { offsetMinutes: zoneCalendar(zone).offsetAt(instant) / MINUTE, region: zone, locale };
    }
  }
  return undefined;
}

/**
 * Whether a word after a time names a zone: one of the location's own names, or one readInNamedZone
 * reads or asks about. A word that is none may be the day's ("3pm today").
 */
export function namesAZone(word: string, zone: string): boolean {
  const readHere =
    OFFSET.test(word) ||
    FIXED.has(word) ||
    REGION_CLOCKS.has(word) ||
    AMBIGUOUS.has(word) ||
    abbreviationTable().has(word);
  if (readHere) return true;
  const own = ownNames(zone);
  return own.has(word) || own.has(`a${word}`);
}

/**
 * Where callers' abbreviations come from, first come first named: each zone's short names in the
 * English locales are taken (EST and EDT from New York, before Cancun's EST), with their offsets.
 */
const REGIONS = [
  'Europe/London',
  'Europe/Dublin',
  'Europe/Lisbon',
  'Europe/Paris',
  'Europe/Athens',
  'America/New_York',
  'America/Chicago',
  'America/Denver',
  'America/Los_Angeles',
  'America/Anchorage',
  'Pacific/Honolulu',
  'America/Halifax',
  'America/St_Johns',
  'Australia/Sydney',
  'Australia/Adelaide',
  'Australia/Perth',
  'Australia/Lord_Howe',
  'Pacific/Auckland',
  'Asia/Dubai',
] as const;

/** Abbreviations English has no CLDR short name for, in zones without daylight saving time. */
const FIXED: ReadonlyMap<string, number> = new Map([
  ['jst', 540],
  ['kst', 540],
  ['hkt', 480],
  ['sgt', 480],
  ['pht', 480],
  ['sast', 120],
  ['wat', 60],
  ['cat', 120],
  ['eat', 180],
  ['utc', 0],
]);

interface Abbreviation {
  offsetMinutes: number;
  /** The zone whose name it is, and the locale that names it so. */
  region: string;
  locale: string;
}

let abbreviations: Map<string, Abbreviation> | undefined;

/** Every region's names in January and July (summer in one hemisphere, winter in the other). */
function abbreviationTable(): Map<string, Abbreviation> {
  if (abbreviations) return abbreviations;
  const table = new Map<string, Abbreviation>();
  for (const region of REGIONS) {
    for (const locale of ABBREVIATION_LOCALES) {
      for (const instant of SAMPLES) {
        const name = zoneName(instant, region, locale);
        const key = name.toLowerCase();
        if (!LETTERS_ONLY.test(name) || table.has(key)) continue;
        table.set(key, { offsetMinutes: zoneCalendar(region).offsetAt(instant) / MINUTE, region, locale });
      }
    }
  }
  abbreviations = table;
  return table;
}

/**
 * The instant of `minute` (local minutes, 0..1439) of `date` on the clock of the zone `word` names
 * (lower case), said as `clock`; not ok with what to ask the caller when the name is ambiguous or
 * no zone at all.
 */
export function readInNamedZone(
  word: string,
  date: string,
  minute: number,
  clock: string,
  context: ZoneContext,
): ZoneReading {
  const wall = wallMidnightOf(date) + minute * MINUTE;
  const here = placeName(context.zone);
  const offset = OFFSET.exec(word);
  if (offset) {
    const [hours, minutes] = [Number(offset[2]), Number(offset[3] ?? 0)];
    if (hours > 14 || minutes > 59) return { ok: false, reason: notAZone(word, here) };
    const sign = offset[1] === '-' ? -1 : 1;
    return { ok: true, instant: wall - sign * (hours * 60 + minutes) * MINUTE };
  }
  const fixed = FIXED.get(word);
  if (fixed !== undefined) return { ok: true, instant: wall - fixed * MINUTE };
  const regionClock = REGION_CLOCKS.get(word);
  if (regionClock) {
    const calendar = zoneCalendar(regionClock);
    const [first] = calendar.instantsAt(calendar.day(date), minute);
    if (first === undefined) {
      return {
        ok: false,
        reason: `${clock} ${word.toUpperCase()} does not exist that day (${skippedClockWords(regionClock, date, minute, context.locale)}); ask the caller for another time`,
      };
    }
    return { ok: true, instant: first };
  }
  const own = ownNames(context.zone);
  if (own.has(`a${word}`)) {
    // "EST" in Sydney: Australians drop the A of AEST; elsewhere it is another zone's.
    const other = abbreviationTable().get(word);
    const elsewhere = other ? ` or the time in ${placeName(other.region)}` : '';
    return {
      ok: false,
      reason: `${word.toUpperCase()} could be ${here}'s A${word.toUpperCase()}${elsewhere}; ask the caller for the time in ${here}`,
    };
  }
  const several = own.has(word) ? undefined : AMBIGUOUS.get(word);
  if (several) {
    return {
      ok: false,
      reason: `${word.toUpperCase()} could be the time in ${several}; ask the caller for the time in ${here}`,
    };
  }
  const named = abbreviationTable().get(word) ?? ownAbbreviation(word, context.zone);
  if (!named) return { ok: false, reason: notAZone(word, here) };
  const instant = wall - named.offsetMinutes * MINUTE;
  const inForce = zoneName(instant, named.region, named.locale);
  if (inForce.toLowerCase() === word || !LETTERS_ONLY.test(inForce)) return { ok: true, instant };
  // Its region keeps the other name then ("EST" said in July, when New York keeps EDT): the caller
  // may mean the name or the region's clock.
  const region = zoneCalendar(named.region);
  const [regional] = region.instantsAt(region.day(date), minute);
  if (regional === undefined) return { ok: true, instant };
  const at = (moment: number) => `${speakTime(moment, context.zone, context.locale)} in ${here}`;
  const said = word.toUpperCase();
  return {
    ok: false,
    reason:
      `${placeName(named.region)} is on ${inForce}, not ${said}, then; ask the caller whether they mean ` +
      `${clock} ${inForce} (${at(regional)}) or ${clock} ${said} (${at(instant)})`,
  };
}

function notAZone(word: string, here: string): string {
  return `"${word}" after the time is not a time zone this reads; ask the caller for the time in ${here} (or name a zone such as EST or UTC+1)`;
}

/** "America/New_York" -> "New York": the place a zone is named after. */
function placeName(zone: string): string {
  return zone.slice(zone.lastIndexOf('/') + 1).replaceAll('_', ' ');
}
