import type { DayHours } from '../domain/availability/opening-hours.ts';
import { formatLocal } from '../domain/time-format.ts';
import { occurrenceNames, zoneCalendar, zoneNamesAt } from './repeated-times.ts';
import { type SpeechLocale, speakClock } from './speech.ts';
import { MAX_PHRASE, normalise, resolveSpokenDate } from './spoken-dates.ts';
import { openSpans, parseSpokenTime, readTimeInHours } from './spoken-times.ts';

/**
 * The start of an appointment, as find_slots gave it or as the tools (or a caller) say it: "Tuesday 8
 * December at 2:30 pm", "tomorrow at noon", "1:30 am BST". Whatever speakDateTime says reads back to
 * the same instant (a property test holds this in several zones, across DST changes).
 */

export interface StartContext {
  zone: string;
  locale: SpeechLocale;
  /** The current instant: "today" and "tomorrow" are the zone's. */
  now: number;
  /** The location's opening hours, to place an hour said without am/pm; without them it is asked. */
  openingHours?: readonly DayHours[] | undefined;
}

export type StartReading =
  | { ok: true; startsAt: string }
  /** needsOpeningHours: an hour without am/pm that the opening hours (not given) might place. */
  | { ok: false; reason: string; needsOpeningHours?: true };

const ISO_WITH_OFFSET = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i;
const LOCAL_ISO = /^(\d{4}-\d\d-\d\d)T(\d\d):(\d\d)(:00)?$/;

/** A clock time that cannot be a day of the month: with minutes, am/pm, or a name. */
const CLOCK = String.raw`(?:\d{1,2}[:.]\d{2}(?: ?[ap]\.? ?m\.?)?|\d{1,2} ?[ap]\.? ?m\.?|noon|midday|midnight)`;
/** After "at", a bare hour is a time too ("tomorrow at 2"). */
const AT_CLOCK = String.raw`(?:${CLOCK}|\d{1,2}(?: ?o'?clock)?)`;
/** "the first" / "the second" before a repeated time, as the tools say it where a zone has no letters. */
const WHICH = `(?:(?:the )?(first|second) )?`;
/** A zone after the time: "bst", "gmt+1". */
const ZONE = String.raw`(?: ((?:gmt|utc)[+-]\d{1,2}(?::\d{2})?|[a-z]{2,5}))?`;
const TIME_LAST = new RegExp(`^(.*?) ?(?:at ${WHICH}(${AT_CLOCK})|${WHICH}(${CLOCK}))${ZONE}$`);
const TIME_FIRST = new RegExp(`^(?:at )?${WHICH}(${CLOCK})${ZONE} (?:on )?(.+)$`);

const UNREADABLE =
  'give starts_at as find_slots returned it, e.g. 2026-11-24T14:30:00+00:00, or as it was spoken, ' +
  'e.g. "Tuesday 24 November at 2:30 pm"';

/**
 * The start as the engine takes it (RFC 3339 with the offset in force), or not ok with what to ask.
 * A local ISO time without an offset is read in the zone. Spoken: a day (anything resolveSpokenDate
 * reads; today when none is said) and a time of day; an hour without am/pm is placed by a part of the
 * day said with it, else inside the opening hours. A wall time the zone shows twice is the one named
 * by its zone abbreviation ("1:30 am BST") or "the first"/"the second", else the first; a time the
 * clocks skip is refused.
 */
export function readSpokenStart(said: string, context: StartContext): StartReading {
  const text = said.trim();
  const { zone } = context;
  if (ISO_WITH_OFFSET.test(text)) {
    const instant = Date.parse(text);
    if (!Number.isNaN(instant)) return { ok: true, startsAt: formatLocal(instant, zone) };
  }
  const local = LOCAL_ISO.exec(text);
  if (local) return atWallTime(local[1]!, Number(local[2]) * 60 + Number(local[3]), {}, text, context);

  const phrase = normalise(text);
  if (phrase.length > MAX_PHRASE) return { ok: false, reason: UNREADABLE };
  const last = TIME_LAST.exec(phrase);
  const first = last ? undefined : TIME_FIRST.exec(phrase);
  if (!last && !first) return { ok: false, reason: UNREADABLE };
  const [dayWords, which, clock, zoneWord] = last
    ? [last[1]!, last[2] ?? last[4], (last[3] ?? last[5])!, last[6]]
    : [first![4]!, first![1], first![2]!, first![3]];

  const day = resolveSpokenDate(dayWords === '' ? 'today' : dayWords, zone, context.now, context.locale);
  if (!day.ok) return day;
  if (day.days !== undefined) return { ok: false, reason: 'name one day for the start, not a span of days' };
  const time = parseSpokenTime(clock);
  if (!time) return { ok: false, reason: UNREADABLE };
  const weekday = zoneCalendar(zone).day(day.date).weekday;
  const open = context.openingHours ? openSpans(context.openingHours, [weekday]) : undefined;
  const placed = readTimeInHours(time, open, day.timeOfDay);
  if (!placed.ok) {
    const [one, other] = placed.readings.map((minute) => speakClock(minute, context.locale));
    const reason = `ask the caller whether ${clock} is ${one} or ${other}`;
    return open === undefined ? { ok: false, reason, needsOpeningHours: true } : { ok: false, reason };
  }
  return atWallTime(day.date, placed.minute, { which, zoneWord }, text, context);
}

/** The instant of a local date and minute, choosing between the two when the clocks go back. */
function atWallTime(
  date: string,
  minute: number,
  named: { which?: string | undefined; zoneWord?: string | undefined },
  said: string,
  context: StartContext,
): StartReading {
  const calendar = zoneCalendar(context.zone);
  const instants = calendar.instantsAt(calendar.day(date), minute);
  if (instants.length === 0) {
    return { ok: false, reason: `${said} does not exist in ${context.zone} (the clocks go forward then)` };
  }
  let chosen = instants[0]!;
  if (instants.length === 2) {
    const pair = instants as [number, number];
    if (named.which) chosen = named.which === 'second' ? pair[1] : pair[0];
    else if (named.zoneWord) {
      const matching = pair.filter((instant) => zoneNamesAt(instant, context.zone).has(named.zoneWord!));
      if (matching.length !== 1) {
        const names = occurrenceNames(pair, context.zone, context.locale) ?? ['the first', 'the second'];
        return {
          ok: false,
          reason: `${said} happens twice that night; ask the caller: ${names[0]} or ${names[1]}`,
        };
      }
      chosen = matching[0]!;
    }
  }
  return { ok: true, startsAt: formatLocal(chosen, context.zone) };
}
