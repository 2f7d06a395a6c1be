import { createRequire } from 'node:module';
import type * as chrono from 'chrono-node/en';
import { wallMidnightOf } from '../domain/availability/zone-calendar.ts';
import { zoneCalendar } from './repeated-times.ts';
import type { SpeechLocale } from './speech.ts';

/**
 * The calendar words of a phrase ("Tuesday 8 December", "8/12", "the 3rd of March 2027", "in 3
 * days", "last friday") read by chrono-node, the natural-language date parser, in the location's
 * locale and zone. Only what chrono is sure of is taken: the rules for what a bare weekday or a date
 * without a year means are the engine's own (spoken-dates.ts), not chrono's.
 */
export interface CalendarWords {
  /** Present when said (or worked out from a relative phrase such as "in 3 days"). */
  year?: number;
  month?: number;
  day?: number;
  /** 0 = Sunday .. 6 = Saturday, when a weekday was said. */
  weekday?: number;
  /** The date chrono settles on, its guesses included ('YYYY-MM-DD'). */
  date: string;
  /** A time of day was said too ("at 2 pm"). */
  hasTime: boolean;
}

/**
 * en-GB reads "8/12" as 8 December; chrono's British configuration also takes "November 24" for
 * November 2024, which no caller means, so a phrase it leaves without a day is read again the American
 * way (which cannot change a numeric date that the British reading already understood).
 */
function parsersFor(locale: SpeechLocale): readonly chrono.Chrono[] {
  const { GB, casual } = loadChrono();
  return locale === 'en-GB' ? [GB, casual] : [casual];
}

let loaded: typeof chrono | undefined;

/**
 * chrono-node, loaded on first use: every `booking` command starts the MCP modules, and most of them
 * (and most tool calls: "tomorrow", a weekday) never need a date parser.
 */
function loadChrono(): typeof chrono {
  loaded ??= createRequire(import.meta.url)('chrono-node/en') as typeof chrono;
  return loaded;
}

/** Words that may stand around a date without changing it. */
const FILLER = /^[\s,]*(?:(?:on|for|the|of)[\s,]+)*$/;

/**
 * The calendar words of the whole phrase, or undefined when chrono finds no single day in it, or
 * leaves words over ("next next tuesday", "24 novembre").
 *
 * chrono computes with JavaScript Dates in the server's zone; it is given, as "now", noon of the
 * location's today with the location's offset, and only its calendar components are read back, so
 * neither the server's zone nor its DST changes (never at noon) can move a date.
 */
export function readCalendarWords(
  phrase: string,
  today: string,
  zone: string,
  locale: SpeechLocale,
): CalendarWords | undefined {
  const noon = wallMidnightOf(today) + 12 * 3_600_000;
  const offsetMs = zoneCalendar(zone).offsetAt(noon - zoneCalendar(zone).offsetAt(noon));
  const reference = { instant: new Date(noon - offsetMs), timezone: offsetMs / 60_000 };
  for (const parser of parsersFor(locale)) {
    const results = parser.parse(phrase, reference);
    if (results.length !== 1) continue;
    const [result] = results as [chrono.ParsedResult];
    const before = phrase.slice(0, result.index);
    const after = phrase.slice(result.index + result.text.length);
    if (!FILLER.test(before) || !FILLER.test(after)) continue;
    const { start } = result;
    if (!start.isCertain('day') && !start.isCertain('weekday')) continue;
    const certain = (component: chrono.Component) =>
      start.isCertain(component) ? (start.get(component) ?? undefined) : undefined;
    const pad = (n: number) => String(n).padStart(2, '0');
    return {
      year: certain('year'),
      month: certain('month'),
      day: certain('day'),
      weekday: certain('weekday'),
      date: `${String(start.get('year')).padStart(4, '0')}-${pad(start.get('month')!)}-${pad(start.get('day')!)}`,
      hasTime: start.isCertain('hour'),
    };
  }
  return undefined;
}
