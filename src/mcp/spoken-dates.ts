import { addDays, LAST_CALENDAR_DATE, wallMidnightOf } from '../domain/availability/zone-calendar.ts';
import { localDateAt } from '../domain/time-format.ts';
import { type CalendarWords, readCalendarWords } from './calendar-words.ts';
import { type SpeechLocale, speakDate, YEAR_SPOKEN_BEYOND_DAYS } from './speech.ts';
import { refusedInEveryLocale } from './speech-locale.ts';
import type { TimeOfDay } from './spoken-times.ts';

/**
 * A caller says "next Tuesday", "the 8th", "tomorrow morning" or "Tuesday week", and the agent passes
 * the words on; turning them into dates here, in the location's zone, keeps the model from doing
 * calendar arithmetic (which it gets wrong) and from using its own idea of today (which is the
 * server's, or nobody's). The engine's own rules come first (weekdays, weeks, parts of the day, "the
 * 8th"); any other wording of a date is read by chrono-node in the location's locale (calendar-words.ts),
 * and the tools' own wording ("tomorrow, Tuesday 24 November") always reads back to the date it names.
 */

export type DateResolution =
  | {
      ok: true;
      /** The first day meant. */
      date: string;
      /** How many days were meant, when a span was said ("next week": 7). */
      days?: number;
      /** The part of the day, when one was said ("tomorrow morning"). */
      timeOfDay?: TimeOfDay;
    }
  | DateRefusal;

/**
 * Words not read as a date, and what to ask instead. `onToday`: the refusal depends on the date today
 * ("next weekend" could be either of two dates from today, "Monday 8 December" is not a Monday this
 * year): read on another day the same words might be a date. Without it, no day reads them.
 */
export interface DateRefusal {
  ok: false;
  reason: string;
  onToday?: true;
}

type DayReading = { ok: true; date: string; days?: number } | DateRefusal;

const ACCEPTED_FORMS =
  'say a date as YYYY-MM-DD, today, tomorrow, a weekday, "the 8th", a day and month, or "next week"';

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
/** Values as Date#getUTCDay: 0 = Sunday .. 6 = Saturday; full names and the usual abbreviations. */
const WEEKDAY_WORDS: ReadonlyMap<string, number> = new Map([
  ...WEEKDAYS.map((name, index) => [name, index] as const),
  ...(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const).map(
    (name, index) => [name, index] as const,
  ),
  ['tues', 2],
  ['weds', 3],
  ['thur', 4],
  ['thurs', 4],
]);
/** Short weekdays chrono does not know ("tues 8 december" read as no date at all), as full names. */
const SHORT_WEEKDAYS = /\b(tues|weds|thur|thurs)\b/g;

/** Longer than any date a caller says; the patterns below need not be tried on pages of text. */
export const MAX_PHRASE = 100;
/** Why a date holding a time of day is refused (find_slots' date: the time goes in earliest or latest). */
export const TIME_IN_DATE = 'give the day alone here; a time of day goes in earliest or latest';
/** "2pm", "14:30", "noon", "at 2": a time of day, which a date does not take. */
const CLOCK_TIME = /\d ?[ap]\.? ?m\b|\d:\d\d|\b(?:noon|midday|midnight)\b|\bat \d/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A part of the day as a word of its own: "fortnight" does not end in the night. */
const PART_OF_DAY = /^(?:(.*?) )??(?:(?:in|during) the |this )?(morning|afternoon|evening|night)$/;
/** Parts of the day in everyday words: "Friday after work" the evening, "first thing Tuesday" the morning. */
const EVERYDAY_PARTS: readonly (readonly [RegExp, string])[] = [
  [/^(?:(.+) )?after work$/, '$1 evening'],
  [/^first thing(?: (?:on )?(.+))?$/, '$1 morning'],
  [/^(.+) first thing$/, '$1 morning'],
];
/**
 * Holidays of a fixed date, as the date they name ("christmas eve" is "24 december", then read as any
 * day and month without a year: the next one). Not in a phrase that speaks of weeks: "Christmas week"
 * and "the week before Christmas" are spans around the day, not a day, and are asked. Holidays of
 * moving dates (Easter, Mother's Day, which differ by country) are left for the caller's agent to ask.
 */
const FIXED_HOLIDAYS: readonly (readonly [RegExp, string])[] = [
  [/\b(?:christmas|xmas) eve\b/, '24 december'],
  [/\b(?:christmas|xmas)(?: day)?\b/, '25 december'],
  [/\bboxing day\b/, '26 december'],
  [/\bnew year['\u2019]?s eve\b/, '31 december'],
  [/\bnew year['\u2019]?s day\b/, '1 january'],
  [/\b(?:st |saint )?valentine['\u2019]?s(?: day)?\b/, '14 february'],
  [/\bhallowe['\u2019]?en\b/, '31 october'],
];
const WEEKS = /\b(?:week|fortnight)s?\b/;
/**
 * "tuesday week", "a week on tuesday", "a week today", "tomorrow week": a week after that day; the same
 * with "fortnight" ("monday fortnight", "a fortnight today"), two weeks after it.
 */
const WEEKS_AFTER = [/^an? (week|fortnight) (?:on |from |after )?(.+)$/, /^(.+) (week|fortnight)$/];
const DAYS_IN = { week: 7, fortnight: 14 } as const;
/** "tonight" as a word of a longer phrase ("a week tonight"): today, in the evening. */
const TONIGHT = /\btonight\b/;
/** "this coming tuesday", "coming friday": the next one after today, never today. */
const COMING = /^(?:this )?coming ([a-z]+)$/;
/** "today, Tuesday 24 November", as the tools say it: both halves must name the same day. */
const ANCHORED = /^(today|tomorrow) (.+)$/;
/** "the 8th", "8th", "the 8": a day of the month; a bare "8" could be anything. */
const DAY_OF_MONTH = /^(?:(?:the )?(\d{1,2})(?:st|nd|rd|th)|the (\d{1,2}))$/;
/** "tuesday the 8th", "tuesday 8th". */
const WEEKDAY_DAY_OF_MONTH = /^([a-z]+) (?:the )?(\d{1,2})(?:st|nd|rd|th)?$/;
const MONTH_NAME =
  /\b(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b/;

/**
 * What the words name, where today is the local date of `now` in `zone` (an unknown zone throws: that
 * is a data fault, not something the caller said), read in the location's `locale` ("8/12" is 8
 * December in en-GB, August 12 in en-US). Case, spacing and stray punctuation from speech-to-text do
 * not matter. The rules (docs/decisions/spoken-dates-and-times.md):
 * - a weekday alone or after "this" is the next one from today, today included; "next" skips today;
 * - a day and month without a year is the first such date not before today; with a weekday, the
 *   nearest such date on that weekday, the last one before today included, else not ok;
 * - "this coming Tuesday" is the next one after today (today never);
 * - "the 8th" is the next 8th from today; "Tuesday week" and "a week on Tuesday" a week after Tuesday,
 *   "Tuesday fortnight" and "a fortnight today" two weeks after that day;
 * - "this week" is today to Sunday, "next week" the seven days from next Monday, "the weekend" the
 *   coming Saturday and Sunday (days says how many);
 * - a trailing part of the day ("tomorrow morning", "tonight", "Friday after work", "first thing
 *   Tuesday") is returned as timeOfDay.
 * Dates in the past are resolved, not refused: whether they can be booked is for the caller of this
 * function to say.
 */
export function resolveSpokenDate(
  text: string,
  zone: string,
  now: number,
  locale: SpeechLocale = 'en-GB',
): DateResolution {
  const reader = new DayReader(localDateAt(now, zone), zone, locale);
  // The parts first: "first thing" is no day of the month.
  const phrase = ordinalWordsAsNumbers(
    [...FIXED_HOLIDAYS, ...EVERYDAY_PARTS].reduce(
      (said, [words, meant]) =>
        WEEKS.test(said) && FIXED_HOLIDAYS.some(([holiday]) => holiday === words)
          ? said
          : said.replace(words, meant).trim(),
      normalise(text),
    ),
  );
  if (phrase === '' || phrase.length > MAX_PHRASE) return { ok: false, reason: ACCEPTED_FORMS };
  if (CLOCK_TIME.test(phrase)) return { ok: false, reason: TIME_IN_DATE };
  if (phrase === 'tonight') return { ok: true, date: reader.today, timeOfDay: 'evening' };
  const part = PART_OF_DAY.exec(phrase);
  if (part) {
    const reading = onTheCalendar(reader.span(part[1] ?? 'today', text), text);
    const timeOfDay = part[2] === 'night' ? 'evening' : (part[2] as TimeOfDay);
    return reading.ok ? { ...reading, timeOfDay } : reading;
  }
  // "a week tonight", "tonight week": the day as of today, and its evening, as "tonight" alone is.
  if (TONIGHT.test(phrase)) {
    const reading = onTheCalendar(reader.span(phrase.replace(TONIGHT, 'today'), text), text);
    return reading.ok ? { ...reading, timeOfDay: 'evening' } : reading;
  }
  return onTheCalendar(reader.span(phrase, text), text);
}

export { LAST_CALENDAR_DATE };

/**
 * Why no day would read the words as a date (refusals that depend on today left out), in the words
 * resolveSpokenDate refuses them with; undefined when some locale reads them on some day. For naming
 * every bad argument of a call before the location, its zone and locale are known (tool-arguments.ts).
 */
export function dateFormProblem(text: string): string | undefined {
  return refusedInEveryLocale((locale, now) => {
    const reading = resolveSpokenDate(text, 'UTC', now, locale);
    return reading.ok || reading.onToday ? undefined : reading.reason;
  });
}

/**
 * The reading, if its date is one the engine can write (YYYY-MM-DD, up to 9999-12-31): "a week on
 * 31 December 9999" or "in 3000000 days" lands beyond it, and is refused rather than passed on.
 */
function onTheCalendar(reading: DayReading, said: string): DayReading {
  if (!reading.ok) return reading;
  if (ISO_DATE.test(reading.date) && reading.date <= LAST_CALENDAR_DATE) return reading;
  return { ok: false, reason: `${said.trim()} is beyond the year 9999; ask the caller for the date again` };
}

const ORDINAL_UNITS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth'];
/** "third" 3, "twelfth" 12, "twenty-first" 21, "thirty first" 31: days of the month said in words. */
const ORDINAL_WORDS: ReadonlyMap<string, number> = new Map([
  ...ORDINAL_UNITS.map((word, i) => [word, i + 1] as const),
  ...['tenth', 'eleventh', 'twelfth', 'thirteenth', 'fourteenth', 'fifteenth', 'sixteenth', 'seventeenth']
    .concat(['eighteenth', 'nineteenth', 'twentieth'])
    .map((word, i) => [word, i + 10] as const),
  ...ORDINAL_UNITS.map((word, i) => [`twenty ${word}`, i + 21] as const),
  ['thirtieth', 30],
  ['thirty first', 31],
]);
const ORDINAL =
  /\b(?:(twenty|thirty)[ -])?(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth)\b/g;

/** "the third" as "the 3rd", which the readers below take ("tuesday the twenty-first": "tuesday the 21st"). */
function ordinalWordsAsNumbers(phrase: string): string {
  return phrase.replace(ORDINAL, (whole, tens: string | undefined, unit: string) => {
    const day = ORDINAL_WORDS.get(tens ? `${tens} ${unit}` : unit);
    if (day === undefined) return whole;
    const suffix =
      day % 10 === 1 && day !== 11
        ? 'st'
        : day % 10 === 2 && day !== 12
          ? 'nd'
          : day % 10 === 3 && day !== 13
            ? 'rd'
            : 'th';
    return `${day}${suffix}`;
  });
}

/** Lower case, single spaces, no commas or sentence dots ("Dec. 3, 2027" -> "dec 3 2027"). */
export function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[,;!?]/g, ' ')
    .replace(/\.(?=\s|$)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(?:on|for) /, '');
}

class DayReader {
  readonly today: string;
  readonly #zone: string;
  readonly #locale: SpeechLocale;

  constructor(today: string, zone: string, locale: SpeechLocale) {
    this.today = today;
    this.#zone = zone;
    this.#locale = locale;
  }

  /** A day or a span of days. */
  span(phrase: string, said: string): DayReading {
    const todayIndex = weekdayOf(this.today);
    const daysToMonday = (8 - todayIndex) % 7 || 7;
    switch (phrase) {
      case 'this week':
        return { ok: true, date: this.today, days: daysToMonday };
      case 'next week':
        return { ok: true, date: addDays(this.today, daysToMonday), days: 7 };
      case 'week after next':
      case 'the week after next':
        return { ok: true, date: addDays(this.today, daysToMonday + 7), days: 7 };
      case 'weekend':
      case 'the weekend':
      case 'this weekend':
        // On a Sunday, the weekend is what is left of it.
        if (todayIndex === 0) return { ok: true, date: this.today, days: 1 };
        return { ok: true, date: onOrAfter(this.today, 6), days: 2 };
      case 'next weekend': {
        const saturday = onOrAfter(addDays(this.today, 1), 6);
        return {
          ok: false,
          reason:
            `"next weekend" could be ${this.#say(saturday)} or ${this.#say(addDays(saturday, 7))}; ` +
            'ask the caller which and pass that date',
          onToday: true,
        };
      }
    }
    return this.day(phrase, said);
  }

  /** One day. */
  day(phrase: string, said: string): DayReading {
    const iso = ISO_DATE.exec(phrase);
    if (iso) return dateOrUnreal(calendarDate(Number(iso[1]), Number(iso[2]), Number(iso[3])), said);

    switch (phrase) {
      case 'today':
        return { ok: true, date: this.today };
      case 'tomorrow':
        return { ok: true, date: addDays(this.today, 1) };
      case 'day after tomorrow':
      case 'the day after tomorrow':
        return { ok: true, date: addDays(this.today, 2) };
    }

    for (const [index, form] of WEEKS_AFTER.entries()) {
      const found = form.exec(phrase);
      if (!found) continue;
      const [inner, span] = index === 0 ? [found[2]!, found[1]!] : [found[1]!, found[2]!];
      const reading = this.day(inner, said);
      if (reading.ok) return { ok: true, date: addDays(reading.date, DAYS_IN[span as keyof typeof DAYS_IN]) };
    }

    const coming = WEEKDAY_WORDS.get(COMING.exec(phrase)?.[1] ?? '');
    if (coming !== undefined) return { ok: true, date: onOrAfter(addDays(this.today, 1), coming) };

    const anchored = ANCHORED.exec(phrase);
    if (anchored) return this.#anchored(anchored[1]!, anchored[2]!, said);

    const words = phrase.split(' ');
    const weekday = WEEKDAY_WORDS.get(words.at(-1)!);
    if (weekday !== undefined && words.length <= 2) {
      if (words.length === 1 || words[0] === 'this')
        return { ok: true, date: onOrAfter(this.today, weekday) };
      if (words[0] === 'next') return { ok: true, date: onOrAfter(addDays(this.today, 1), weekday) };
    }

    const dayOfMonth = DAY_OF_MONTH.exec(phrase);
    if (dayOfMonth) return this.#dayOfMonth(Number(dayOfMonth[1] ?? dayOfMonth[2]), undefined, said);
    const weekdayDay = WEEKDAY_DAY_OF_MONTH.exec(phrase);
    const namedWeekday = weekdayDay ? WEEKDAY_WORDS.get(weekdayDay[1]!) : undefined;
    if (weekdayDay && namedWeekday !== undefined) {
      return this.#dayOfMonth(Number(weekdayDay[2]), namedWeekday, said);
    }

    return this.#calendarWords(phrase, said);
  }

  /** "tomorrow, Tuesday 24 November": the date, when both halves agree. */
  #anchored(anchor: string, rest: string, said: string): DayReading {
    const first = this.day(anchor, said);
    const second = this.day(rest, said);
    if (!first.ok || !second.ok || first.date === second.date) return second;
    return {
      ok: false,
      reason: `${anchor} is ${this.#say(first.date)}, not ${this.#say(second.date)}; ask the caller which day they mean`,
      onToday: true,
    };
  }

  /** The next `day` of a month from today, or with a weekday the nearest one on that weekday. */
  #dayOfMonth(day: number, weekday: number | undefined, said: string): DayReading {
    if (day < 1 || day > 31) return unreal(said);
    const [year, month] = this.today.split('-').map(Number) as [number, number];
    const occurrences: string[] = [];
    // A month has every day up to 28; a 31st can be two months away (after 31 January comes 31 March).
    for (let step = -3; step <= 3; step += 1) {
      const date = calendarDate(
        year + Math.floor((month - 1 + step) / 12),
        ((month - 1 + step + 12) % 12) + 1,
        day,
      );
      if (date !== undefined) occurrences.push(date);
    }
    return this.#nearest(occurrences, weekday, said);
  }

  /** What chrono reads, with the engine's rules for a date without a year. */
  #calendarWords(phrase: string, said: string): DayReading {
    // "december the 8th": chrono takes the month and day only without the "the".
    const plain = phrase
      .replace(/\b([a-z]{3,9}) the (?=\d)/, '$1 ')
      .replace(SHORT_WEEKDAYS, (short) => WEEKDAYS[WEEKDAY_WORDS.get(short)!]!);
    const words = readCalendarWords(plain, this.today, this.#zone, this.#locale) ?? this.#leapDay(plain);
    if (!words)
      return MONTH_NAME.test(phrase) && /\d/.test(phrase)
        ? unreal(said)
        : { ok: false, reason: ACCEPTED_FORMS };
    if (words.hasTime) {
      return { ok: false, reason: TIME_IN_DATE };
    }
    if (words.month === undefined || words.day === undefined) return { ok: true, date: words.date };
    if (words.year !== undefined) {
      const date = calendarDate(words.year, words.month, words.day);
      if (date === undefined) return unreal(said);
      const reading = this.#nearest([date], words.weekday, said);
      // With its year said, a date is on that weekday or not whatever the date today.
      return reading.ok ? reading : { ok: false, reason: reading.reason };
    }
    const thisYear = Number(this.today.slice(0, 4));
    const occurrences: string[] = [];
    for (let year = thisYear - 1; year <= thisYear + YEARS_TO_SEARCH; year += 1) {
      const date = calendarDate(year, words.month, words.day);
      if (date !== undefined) occurrences.push(date);
    }
    return this.#nearest(occurrences, words.weekday, said);
  }

  /**
   * chrono checks a day against the year it assumes, so "29 February" without a year fails in a common
   * year: read against a leap year instead, it is taken only as that day and month.
   */
  #leapDay(phrase: string): CalendarWords | undefined {
    let year = Number(this.today.slice(0, 4));
    while (calendarDate(year, 2, 29) === undefined) year += 1;
    const words = readCalendarWords(phrase, `${year}-01-01`, this.#zone, this.#locale);
    const leapDay = words?.year === undefined && words?.month === 2 && words.day === 29;
    return leapDay ? words : undefined;
  }

  /**
   * Of the dates a phrase could mean (in order), the first not before today; with a weekday said, that
   * one or else the last one before today (if within the 180 days the tools speak of without a year),
   * whichever falls on that weekday: a caller who says "Monday 8 December" when the 8th is a Tuesday has
   * one of the two wrong, and the agent must ask which.
   */
  #nearest(dates: readonly string[], weekday: number | undefined, said: string): DayReading {
    const nextIndex = dates.findIndex((date) => date >= this.today);
    const next = nextIndex === -1 ? dates.at(-1) : dates[nextIndex];
    if (next === undefined) return unreal(said);
    if (weekday === undefined || weekdayOf(next) === weekday) return { ok: true, date: next };
    const previous = nextIndex > 0 ? dates[nextIndex - 1] : undefined;
    // Only as far back as the tools speak of dates without their year.
    const recent = previous !== undefined && previous >= addDays(this.today, -YEAR_SPOKEN_BEYOND_DAYS);
    if (recent && weekdayOf(previous) === weekday) return { ok: true, date: previous };
    return {
      ok: false,
      reason: `${this.#say(next)} is not a ${capitalised(WEEKDAYS[weekday]!)}; ask the caller which they mean`,
      onToday: true,
    };
  }

  /** The date as the tools say it, the year included when far off, without "today" or "tomorrow". */
  #say(date: string): string {
    return speakDate(date, this.#locale, this.today).replace(/^(?:today|tomorrow), /, '');
  }
}

/** Leap years are at most eight apart (2096, 2104), so "29 february" always lands within that. */
const YEARS_TO_SEARCH = 8;

function dateOrUnreal(date: string | undefined, said: string): DayReading {
  return date === undefined ? unreal(said) : { ok: true, date };
}

function unreal(said: string): DayReading {
  return { ok: false, reason: `${said.trim()} is not a real date` };
}

const capitalised = (word: string) => word[0]!.toUpperCase() + word.slice(1);

/** 0 = Sunday .. 6 = Saturday. */
function weekdayOf(date: string): number {
  return new Date(wallMidnightOf(date)).getUTCDay();
}

/** The first date from `from` (included) that falls on `weekday` (0 = Sunday .. 6 = Saturday). */
function onOrAfter(from: string, weekday: number): string {
  return addDays(from, (weekday - weekdayOf(from) + 7) % 7);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** 'YYYY-MM-DD' when the date is on the calendar, else undefined. */
export function calendarDate(year: number, month: number, day: number): string | undefined {
  if (month < 1 || month > 12 || day < 1) return undefined;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
  if (day > days) return undefined;
  return `${String(year).padStart(4, '0')}-${pad(month)}-${pad(day)}`;
}

const pad = (n: number) => String(n).padStart(2, '0');
