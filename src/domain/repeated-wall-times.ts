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

/** The city a time zone is named after, as the pages and messages name its clock ('Europe/London': 'London'). */
export function zoneCity(zone: string): string {
  return zone.split('/').pop()?.replace(/_/g, ' ') ?? zone;
}

/**
 * The abbreviation of the zone at `epochMs` as the locale writes it, when it has one people read
 * ("GMT"/"BST" in en-GB for London, "MEZ" in de-DE for Berlin, "EST" in en-US for New York), or null
 * (en-GB writes New York's as "GMT-5", fr-FR Paris's as "UTC+1"): ICU gives letters only where the
 * locale's readers use them, so they are not another zone's to them.
 */
export function zoneAbbreviation(epochMs: number, zone: string, locale: string): string | null {
  const name = zoneNameAt(epochMs, zone, locale, 'short');
  return LETTERS.test(name) ? name : null;
}

/**
 * The zone at `epochMs` as short as the locale writes it: its abbreviation ("GMT", "MEZ") or its offset
 * ("GMT-5", "UTC+1"), for where the words of a city do not fit (an SMS's two parts).
 */
export function zoneShortName(epochMs: number, zone: string, locale: string): string {
  return zoneNameAt(epochMs, zone, locale, 'short') || zoneNameAt(epochMs, zone, locale, 'shortOffset');
}

/**
 * Where a zone's clock is kept, in `locale`'s words, as ICU names it in its generic location names
 * ("heure : Royaume-Uni", "Moskau (Ortszeit)"): the city where its country keeps several clocks ("New
 * York", "Moscou", "Mexiko-Stadt"), else the country or territory whose one clock it is ("Royaume-Uni",
 * "Indien"; `country`). ICU has no city's own name for the latter (no French "Londres"), so the country
 * says where. Null where the locale names the zone otherwise (an abbreviation such as "MEZ").
 */
export interface ZonePlace {
  name: string;
  country: boolean;
}

export function zonePlace(epochMs: number, zone: string, locale: string): ZonePlace | null {
  const around = locationPattern(locale);
  if (around === null) return null;
  const [before, after] = around;
  const generic = zoneNameAt(epochMs, zone, locale, 'shortGeneric');
  if (
    generic.length <= before.length + after.length ||
    !generic.startsWith(before) ||
    !generic.endsWith(after)
  ) {
    return null;
  }
  const name = generic.slice(before.length, generic.length - after.length);
  return { name, country: regionNames(locale).has(name) };
}

/** An instant at which London keeps GMT, to find the locale's words around a place (locationPattern). */
const PROBE_INSTANT = Date.UTC(2026, 0, 15);

/**
 * The words around the place in the locale's generic location names ("heure : {0}", "{0} (Ortszeit)",
 * "{0} Time"), found where it names London by its country, which keeps one clock; null if it does not.
 */
function locationPattern(locale: string): [string, string] | null {
  const key = `pattern|${locale}`;
  let found = zonePlaceMemo.get(key) as [string, string] | null | undefined;
  if (found === undefined) {
    const country = new Intl.DisplayNames([locale], { type: 'region', fallback: 'none' }).of('GB') ?? '';
    const generic = zoneNameAt(PROBE_INSTANT, 'Europe/London', locale, 'shortGeneric');
    const at = country === '' ? -1 : generic.indexOf(country);
    found = at < 0 ? null : [generic.slice(0, at), generic.slice(at + country.length)];
    remember(key, found);
  }
  return found;
}

/** The names of every country and territory in the locale's words, to tell a country from a city. */
function regionNames(locale: string): ReadonlySet<string> {
  const key = `regions|${locale}`;
  let names = zonePlaceMemo.get(key) as Set<string> | undefined;
  if (names === undefined) {
    const displayed = new Intl.DisplayNames([locale], { type: 'region', fallback: 'none' });
    names = new Set<string>();
    for (let a = 65; a <= 90; a++) {
      for (let b = 65; b <= 90; b++) {
        const name = displayed.of(String.fromCharCode(a, b));
        if (name !== undefined) names.add(name);
      }
    }
    remember(key, names);
  }
  return names;
}

/** What locationPattern and regionNames found, per locale; bounded as zoneNameFormats is. */
const zonePlaceMemo = new Map<string, [string, string] | null | Set<string>>();

function remember(key: string, value: [string, string] | null | Set<string>): void {
  if (zonePlaceMemo.size >= 1_000) zonePlaceMemo.clear();
  zonePlaceMemo.set(key, value);
}

/** A zone abbreviation people read ("BST", "EST", "AEDT"), not an offset ("GMT-5"). */
const LETTERS = /^[A-Z]{2,6}$/;
/** The English locales whose short zone names are abbreviations for their own zones. */
const ENGLISH_ABBREVIATIONS = ['en-US', 'en-GB', 'en-AU', 'en-NZ', 'en-CA', 'en-IE'];

type ZoneNameStyle = 'short' | 'shortOffset' | 'shortGeneric';

function zoneNameAt(epochMs: number, zone: string, locale: string, style: ZoneNameStyle): string {
  return (
    zoneNames(zone, locale, style)
      .formatToParts(epochMs)
      .find((p) => p.type === 'timeZoneName')?.value ?? ''
  );
}

/**
 * The formats of zoneNameAt, made once per zone, locale and style: every message the outbox worker
 * renders names its zone, and making a format costs far more than using one. Bounded, as
 * message-templates.ts's are: a process serves few zones and locales.
 */
const zoneNameFormats = new Map<string, Intl.DateTimeFormat>();

function zoneNames(zone: string, locale: string, style: ZoneNameStyle): Intl.DateTimeFormat {
  const key = `${zone}|${locale}|${style}`;
  let format = zoneNameFormats.get(key);
  if (format === undefined) {
    if (zoneNameFormats.size >= 1_000) zoneNameFormats.clear();
    format = new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: style });
    zoneNameFormats.set(key, format);
  }
  return format;
}
