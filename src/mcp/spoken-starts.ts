import type { DayHours } from '../domain/availability/opening-hours.ts';
import type { LocalDay } from '../domain/availability/zone-calendar.ts';
import { formatLocal } from '../domain/time-format.ts';
import { occurrenceNames, zoneCalendar, zoneNamesAt } from './repeated-times.ts';
import { type SpeechLocale, skippedClockWords, speakClock } from './speech.ts';
import { refusedInEveryLocale } from './speech-locale.ts';
import { clockWordsAsTimes } from './spoken-clock-words.ts';
import { MAX_PHRASE, normalise, resolveSpokenDate, TIME_IN_DATE } from './spoken-dates.ts';
import { openSpans, parseSpokenTime, readTimeInHours } from './spoken-times.ts';
import { namesAZone, readInNamedZone } from './spoken-zones.ts';

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
  /**
   * needsOpeningHours: an hour without am/pm that the opening hours (not given) might place. `form`:
   * no zone, locale, day or opening hours would read it (startFormProblem).
   */
  | { ok: false; reason: string; needsOpeningHours?: true; form?: true };

const ISO_WITH_OFFSET = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i;
const LOCAL_ISO = /^(\d{4}-\d\d-\d\d)T(\d\d):(\d\d)(:00)?$/;

/**
 * A clock time that cannot be a day of the month: with minutes, am/pm, "o'clock" ("Thursday 2 o'clock",
 * "3 o'clock pm"), or a name ("afternoon" is no noon).
 */
const CLOCK = String.raw`(?:\d{1,2}[:.]\d{2}(?: ?[ap]\.? ?m\.?)?|\d{1,2}(?: ?o'?clock)? ?[ap]\.? ?m\.?|\d{1,2} ?o'?clock|\bnoon|\bmidday|\bmidnight)`;
/** After "at", a bare hour is a time too ("tomorrow at 2"). */
const AT_CLOCK = String.raw`(?:${CLOCK}|\d{1,2}(?: ?o'?clock)?)`;
/** "the first" / "the second" before a repeated time, as the tools say it where a zone has no letters. */
const WHICH = `(?:(?:the )?(first|second) )?`;
/** Words after a time that start the day's words ("3pm on friday", "3pm tue", "3pm dec 8"), not a zone. */
const DAY_WORD = String.raw`(?:on|at|the|this|next|in|for|mon|tues?|wed|thu|thurs?|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)\b`;
/** A zone after the time: "bst", "gmt+1", "est". */
const ZONE = String.raw`(?: ((?:gmt|utc)[+-]\d{1,2}(?::\d{2})?|(?!${DAY_WORD})[a-z]{2,5}))?`;
/** A time said after the day's words (`last`) or before them (`first`), with `zone` after the time. */
function timePatterns(zone: string): { last: RegExp; first: RegExp } {
  return {
    last: new RegExp(`^(.*?) ?(?:at ${WHICH}(${AT_CLOCK})|${WHICH}(${CLOCK}))${zone}$`),
    first: new RegExp(`^(?:at )?${WHICH}(${CLOCK})${zone} (?:on )?(.+)$`),
  };
}
const WITH_ZONE = timePatterns(ZONE);
/**
 * The same without a zone, for a word after the time that names none and is the day's ("3pm today"):
 * its zone group never matches, so both read their groups alike.
 */
const WITHOUT_ZONE = timePatterns('((?!))?');
/** "3pm sharp": a word said with the time that changes nothing. */
const SHARP = / sharp\b/g;

const UNREADABLE =
  'give starts_at as find_slots returned it, e.g. 2026-11-24T14:30:00+00:00, or as it was spoken, ' +
  'e.g. "Tuesday 24 November at 2:30 pm"';

/**
 * The start as the engine takes it (RFC 3339 with the offset in force), or not ok with what to ask.
 * A local ISO time without an offset is read in the zone. Spoken: a day (anything resolveSpokenDate
 * reads; today when none is said) and a time of day; an hour without am/pm is placed by a part of the
 * day said with it, else inside the opening hours. A wall time the zone shows twice is the one named
 * by its zone abbreviation ("1:30 am BST") or "the first"/"the second", else asked about; a time the
 * clocks skip is refused. A time said with another zone ("3 pm EST", "10 am UTC+1") is read on that
 * zone's clock (spoken-zones.ts). A start whose local date cannot be written (past 9999) is refused.
 */
export function readSpokenStart(said: string, context: StartContext): StartReading {
  const text = said.trim();
  const { zone } = context;
  if (ISO_WITH_OFFSET.test(text)) {
    const instant = Date.parse(text);
    if (!Number.isNaN(instant)) return startAt(instant, text, context);
  }
  const local = LOCAL_ISO.exec(text);
  if (local) return atWallTime(local[1]!, Number(local[2]) * 60 + Number(local[3]), {}, text, context);

  const phrase = clockWordsAsTimes(normalise(text).replace(SHARP, ''));
  if (phrase.length > MAX_PHRASE) return { ok: false, reason: UNREADABLE, form: true };
  let parts = splitSpoken(phrase);
  if (!parts) return { ok: false, reason: UNREADABLE, form: true };
  let day = resolveDay(parts.dayWords, context);
  if (parts.zoneWord !== undefined && !namesAZone(parts.zoneWord, zone)) {
    // Not a zone: the word belongs to the day ("3pm today", "3pm march 3"), as before zones were read;
    // when it reads as no day either, the zone reading refuses it as no zone.
    const plain = splitSpoken(phrase, false);
    const plainDay = plain && resolveDay(plain.dayWords, context);
    if (plain && plainDay?.ok) [parts, day] = [plain, plainDay];
  }
  const { which, clock, zoneWord } = parts;
  if (!day.ok) {
    // Words that read as no date on any day, with no zone word that another zone might have taken.
    const form = !day.onToday && zoneWord === undefined;
    // A second time among the day's words ("tomorrow at 3 at 4pm"): find_slots' "a time goes in
    // earliest or latest" is no answer for a start, which takes one time.
    const reason = day.reason === TIME_IN_DATE ? UNREADABLE : day.reason;
    return { ok: false, reason, ...(form && { form: true }) };
  }
  if (day.days !== undefined) {
    return { ok: false, reason: 'name one day for the start, not a span of days', form: true };
  }
  const time = parseSpokenTime(clock);
  if (!time) return { ok: false, reason: UNREADABLE, form: true };
  const localDay = zoneCalendar(zone).day(day.date);
  // A time said on another zone's clock ("3 pm EST") is not placed in the location's opening hours.
  const ownClock = zoneWord === undefined || namesOfDay(localDay, zone).has(zoneWord);
  const open =
    ownClock && context.openingHours ? openSpans(context.openingHours, [localDay.weekday]) : undefined;
  const placed = readTimeInHours(time, open, day.timeOfDay);
  if (!placed.ok) {
    const [one, other] = placed.readings.map((minute) => speakClock(minute, context.locale));
    const reason = `ask the caller whether ${clock} is ${one} or ${other}`;
    return ownClock && open === undefined
      ? { ok: false, reason, needsOpeningHours: true }
      : { ok: false, reason };
  }
  return atWallTime(day.date, placed.minute, { which, zoneWord }, text, context);
}

/**
 * Why no location would read the words as a start, in the words readSpokenStart refuses them with;
 * undefined when some zone, locale, day or opening hours might. For naming every bad argument of a
 * call before the location is known (tool-arguments.ts).
 */
export function startFormProblem(said: string): string | undefined {
  return refusedInEveryLocale((locale, now) => {
    const reading = readSpokenStart(said, { zone: 'UTC', locale, now });
    return reading.ok || !reading.form ? undefined : reading.reason;
  });
}

interface SpokenParts {
  dayWords: string;
  which: string | undefined;
  clock: string;
  zoneWord: string | undefined;
}

/** The day's words, which of a repeated time, the clock time and a zone word after it, if any. */
function splitSpoken(phrase: string, withZone = true): SpokenParts | undefined {
  const patterns = withZone ? WITH_ZONE : WITHOUT_ZONE;
  const last = patterns.last.exec(phrase);
  if (last) {
    return { dayWords: last[1]!, which: last[2] ?? last[4], clock: (last[3] ?? last[5])!, zoneWord: last[6] };
  }
  const first = patterns.first.exec(phrase);
  if (!first) return undefined;
  return { dayWords: first[4]!, which: first[1], clock: first[2]!, zoneWord: first[3] };
}

function resolveDay(dayWords: string, context: StartContext) {
  return resolveSpokenDate(dayWords === '' ? 'today' : dayWords, context.zone, context.now, context.locale);
}

/** Every name of the zone on that local day (both of them on a day the clocks change). */
function namesOfDay(day: LocalDay, zone: string): Set<string> {
  return new Set([...zoneNamesAt(day.start, zone), ...zoneNamesAt(day.end - 1, zone)]);
}

/**
 * The start at an instant, written with the zone's offset then; refused when its local date is not
 * one the engine can write (before the year 0 or after 9999).
 */
function startAt(instant: number, said: string, context: StartContext): StartReading {
  const startsAt = formatLocal(instant, context.zone);
  if (/^\d{4}-/.test(startsAt)) return { ok: true, startsAt };
  return {
    ok: false,
    reason: `${said} is not a date the booking system can take; ask the caller for the date again`,
  };
}

/**
 * A wall time the clocks show twice, said without which: the caller is asked, the answer naming both
 * instants with their offsets, so the agent can pass either as it stands (guessing the first booked
 * people an hour early or late).
 */
function askWhichOccurrence(
  pair: readonly [number, number],
  minute: number,
  context: StartContext,
): StartReading {
  const clock = speakClock(minute, context.locale);
  const names = occurrenceNames(pair, context.zone, context.locale);
  const [first, second] = names
    ? [`${clock} ${names[0]}`, `${clock} ${names[1]}`]
    : [`the first ${clock}`, `the second ${clock}`];
  return {
    ok: false,
    reason:
      `${clock} happens twice that night (the clocks go back); ask the caller which: ${first} ` +
      `(${formatLocal(pair[0], context.zone)}) or ${second} (${formatLocal(pair[1], context.zone)}), and pass that one`,
  };
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
  const { zoneWord } = named;
  if (
    zoneWord !== undefined &&
    !instants.some((instant) => zoneNamesAt(instant, context.zone).has(zoneWord)) &&
    // A time the clocks skip, said with one of the location's names that day, is refused below.
    !(instants.length === 0 && namesOfDay(calendar.day(date), context.zone).has(zoneWord))
  ) {
    // Not the location's clock at that time: read on the clock the caller named.
    const clock = speakClock(minute, context.locale);
    const reading = readInNamedZone(zoneWord, date, minute, clock, context);
    return reading.ok ? startAt(reading.instant, said, context) : reading;
  }
  if (instants.length === 0) {
    const clocks = skippedClockWords(context.zone, date, minute, context.locale);
    return {
      ok: false,
      reason: `${said} does not exist in ${context.zone} (${clocks}); ask the caller for another time`,
    };
  }
  let chosen = instants[0]!;
  if (instants.length === 2) {
    const pair = instants as [number, number];
    if (named.which === undefined && zoneWord === undefined) return askWhichOccurrence(pair, minute, context);
    if (named.which) chosen = named.which === 'second' ? pair[1] : pair[0];
    else if (zoneWord !== undefined) {
      const matching = pair.filter((instant) => zoneNamesAt(instant, context.zone).has(zoneWord));
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
  return startAt(chosen, said, context);
}
