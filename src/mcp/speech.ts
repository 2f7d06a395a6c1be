import { getCountryCallingCode, isSupportedCountry, parsePhoneNumberWithError } from 'libphonenumber-js';
import { describeDuration } from '../domain/duration.ts';
import { formatLocal, localDateAt } from '../domain/time-format.ts';

/**
 * Wording a voice receptionist reads aloud on a phone line. A text-to-speech voice reads what it is
 * given, so the words are chosen for the ear: "2:30 pm" rather than "14:30", "55 pounds" rather than
 * "£55.00", a booking reference letter by letter. Everything here is pure: the current instant is
 * always passed in, so a call's wording is reproducible in tests and in logs.
 */

export type SpeechLocale = 'en-GB' | 'en-US';

/** American English for a location in the United States, British English everywhere else. */
export function speechLocaleFor(country: string | null | undefined): SpeechLocale {
  return country?.trim().toUpperCase() === 'US' ? 'en-US' : 'en-GB';
}

/**
 * The 12-hour clock a caller expects to hear, in the zone's local time at that instant: "2:30 pm",
 * "9 am" (":00" is noise when spoken), "12 pm" for noon and "12 am" for midnight. British English
 * writes the suffix lower-case, American English upper-case; either reads aloud the same.
 */
export function speakTime(epochMs: number, zone: string, locale: SpeechLocale): string {
  // formatLocal carries the exact offset in force, so the hour and minute are read off its text.
  const local = formatLocal(epochMs, zone);
  const hour = Number(local.slice(11, 13));
  const minute = local.slice(14, 16);
  const suffix = hour < 12 ? 'am' : 'pm';
  const clockHour = hour % 12 === 0 ? 12 : hour % 12;
  const clock = minute === '00' ? String(clockHour) : `${clockHour}:${minute}`;
  return `${clock} ${locale === 'en-US' ? suffix.toUpperCase() : suffix}`;
}

/** Far enough away that a caller could mistake which year is meant. */
const YEAR_SPOKEN_BEYOND_DAYS = 180;

/**
 * A local calendar date as a caller would say it: "Tuesday 24 November" (en-GB) or "Tuesday,
 * November 24" (en-US). Given today's local date, a date that is today or tomorrow says so first,
 * since callers anchor on those words, and a date more than 180 days away carries its year, since
 * "January" alone is ambiguous then.
 */
export function speakDate(date: string, locale: SpeechLocale, today?: string): string {
  const day = parseCalendarDate(date);
  const weekday = WEEKDAYS[new Date(day.utcMs).getUTCDay()]!;
  const month = MONTHS[day.month - 1]!;
  let prefix = '';
  let withYear = false;
  if (today !== undefined) {
    const daysAway = Math.round((day.utcMs - parseCalendarDate(today).utcMs) / DAY_MS);
    if (daysAway === 0) prefix = 'today, ';
    else if (daysAway === 1) prefix = 'tomorrow, ';
    withYear = Math.abs(daysAway) > YEAR_SPOKEN_BEYOND_DAYS;
  }
  const spoken =
    locale === 'en-US'
      ? `${weekday}, ${month} ${day.day}${withYear ? `, ${day.year}` : ''}`
      : `${weekday} ${day.day} ${month}${withYear ? ` ${day.year}` : ''}`;
  return prefix + spoken;
}

/**
 * An instant as a date and time in the zone: "tomorrow, Tuesday 24 November at 2:30 pm". "Today"
 * and "tomorrow" are the zone's calendar days, not UTC's, so 00:15 after a caller's 23:30 is tomorrow.
 */
export function speakDateTime(epochMs: number, zone: string, locale: SpeechLocale, now: number): string {
  const date = speakDate(localDateAt(epochMs, zone), locale, localDateAt(now, zone));
  return `${date} at ${speakTime(epochMs, zone, locale)}`;
}

interface CurrencyWords {
  major: readonly [one: string, many: string];
  minor: readonly [one: string, many: string];
  /**
   * How the minor part follows a non-zero major part. British English says "55 pounds 50", with the
   * pence left unnamed; dollars and euros read "55 dollars and 50 cents".
   */
  minorAfterMajor: 'bare' | 'and-named';
}

/** The currencies with a spoken form of their own; the rest get the names Intl knows. */
const CURRENCY_WORDS: Readonly<Record<string, CurrencyWords>> = {
  GBP: { major: ['pound', 'pounds'], minor: ['penny', 'pence'], minorAfterMajor: 'bare' },
  USD: { major: ['dollar', 'dollars'], minor: ['cent', 'cents'], minorAfterMajor: 'and-named' },
  EUR: { major: ['euro', 'euros'], minor: ['cent', 'cents'], minorAfterMajor: 'and-named' },
};

/**
 * A price in minor units as a caller hears it: "free", "55 pounds", "55 pounds 50", "5 pence",
 * "55 dollars and 50 cents", "5,500 Japanese yen". Never a currency symbol or a ".00", which a
 * speech voice reads out literally. A negative amount (a refund) is said with "minus" first.
 */
export function speakPrice(amountMinor: number, currency: string, locale: SpeechLocale): string {
  if (!Number.isSafeInteger(amountMinor))
    throw new RangeError(`Not a whole number of minor units: ${amountMinor}`);
  if (amountMinor === 0) return 'free';
  if (amountMinor < 0) return `minus ${speakPrice(-amountMinor, currency, locale)}`;
  const code = currency.trim().toUpperCase();
  const words = CURRENCY_WORDS[code];
  if (!words) return speakOtherCurrency(amountMinor, code, locale);
  const major = Math.floor(amountMinor / 100);
  const minor = amountMinor % 100;
  const majorPart = `${wholeNumber(major, locale)} ${words.major[major === 1 ? 0 : 1]}`;
  const minorPart = `${minor} ${words.minor[minor === 1 ? 0 : 1]}`;
  if (minor === 0) return majorPart;
  if (major === 0) return minorPart;
  return words.minorAfterMajor === 'bare' ? `${majorPart} ${minor}` : `${majorPart} and ${minorPart}`;
}

/**
 * Intl's currency names ("Japanese yen", "Swiss francs") on the major amount, in the currency's own
 * number of minor digits. A whole amount drops its fraction ("55 Swiss francs", not "55.00 ..."),
 * which would otherwise be read aloud as "point zero zero".
 */
function speakOtherCurrency(amountMinor: number, currency: string, locale: SpeechLocale): string {
  const options = { style: 'currency', currency, currencyDisplay: 'name' } as const;
  const digits = new Intl.NumberFormat(locale, options).resolvedOptions().maximumFractionDigits ?? 2;
  const scale = 10 ** digits;
  const whole = amountMinor % scale === 0;
  const format = new Intl.NumberFormat(
    locale,
    whole ? { ...options, minimumFractionDigits: 0, maximumFractionDigits: 0 } : options,
  );
  return format.format(amountMinor / scale);
}

/** "1,250": grouped as Intl writes it, which a speech voice reads as one number. */
function wholeNumber(n: number, locale: SpeechLocale): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(n);
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
  const trimmed = e164.trim();
  const home = country?.trim().toUpperCase();
  const homeCountry = home && isSupportedCountry(home) ? home : undefined;
  let formatted: string;
  try {
    const phone = parsePhoneNumberWithError(trimmed, homeCountry);
    // libphonenumber places some +44 numbers in Guernsey, Jersey or the Isle of Man and some +1
    // numbers in Canada; they are dialled nationally from the rest of the plan all the same.
    const national =
      homeCountry !== undefined &&
      (phone.country === homeCountry || phone.countryCallingCode === getCountryCallingCode(homeCountry));
    formatted = national ? phone.formatNational() : phone.formatInternational();
  } catch {
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
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (match) {
    const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
    const utcMs = Date.UTC(year, month - 1, day);
    // Date.UTC rolls 2026-02-30 over into March; a real date survives the round trip.
    if (new Date(utcMs).toISOString().slice(0, 10) === date) return { year, month, day, utcMs };
  }
  throw new RangeError(`Not a calendar date (YYYY-MM-DD): ${date}`);
}
