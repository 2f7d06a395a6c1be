import type { SpeechLocale } from './speech-locale.ts';

/**
 * Prices as a caller hears them on the phone: "55 pounds", "12 pounds 50", "500 rupees 50 paisa",
 * "55 dollars and 50 cents", "5,500 yen". A voice reads "£12.50" as "pound sign twelve point five
 * zero" and "500.50 Nepalese rupees" no better, so the amount is split into its major and minor units
 * and each is named the way people say it where that currency is used.
 */

interface CurrencyWords {
  /** Singular and plural. */
  major: readonly [one: string, many: string];
  /** Absent for a currency without a minor unit in use (yen, won). */
  minor?: readonly [one: string, many: string];
  /**
   * How the minor part follows a non-zero major part: `bare` "12 pounds 50" (the pence go unnamed, as
   * in Britain), `named` "500 rupees 50 paisa", `and` "55 dollars and 50 cents".
   */
  joint?: 'bare' | 'named' | 'and';
}

const DOLLARS: CurrencyWords = { major: ['dollar', 'dollars'], minor: ['cent', 'cents'], joint: 'and' };

/**
 * The currencies a salon is likely to price in. The local name alone ("dollars", not "Australian
 * dollars"): a location's prices are in its own country's currency, so the caller knows which.
 */
const CURRENCY_WORDS: Readonly<Record<string, CurrencyWords>> = {
  GBP: { major: ['pound', 'pounds'], minor: ['penny', 'pence'], joint: 'bare' },
  EUR: { major: ['euro', 'euros'], minor: ['cent', 'cents'], joint: 'and' },
  USD: DOLLARS,
  AUD: DOLLARS,
  CAD: DOLLARS,
  NZD: DOLLARS,
  SGD: DOLLARS,
  HKD: DOLLARS,
  NPR: { major: ['rupee', 'rupees'], minor: ['paisa', 'paisa'], joint: 'named' },
  INR: { major: ['rupee', 'rupees'], minor: ['paisa', 'paise'], joint: 'named' },
  PKR: { major: ['rupee', 'rupees'], minor: ['paisa', 'paise'], joint: 'named' },
  LKR: { major: ['rupee', 'rupees'], minor: ['cent', 'cents'], joint: 'named' },
  BDT: { major: ['taka', 'taka'], minor: ['poisha', 'poisha'], joint: 'named' },
  JPY: { major: ['yen', 'yen'] },
  KRW: { major: ['won', 'won'] },
  CHF: { major: ['franc', 'francs'], minor: ['centime', 'centimes'], joint: 'and' },
  ZAR: { major: ['rand', 'rand'], minor: ['cent', 'cents'], joint: 'and' },
  SEK: { major: ['krona', 'kronor'], minor: ['öre', 'öre'], joint: 'and' },
  NOK: { major: ['krone', 'kroner'], minor: ['øre', 'øre'], joint: 'and' },
  DKK: { major: ['krone', 'kroner'], minor: ['øre', 'øre'], joint: 'and' },
  AED: { major: ['dirham', 'dirhams'], minor: ['fils', 'fils'], joint: 'and' },
  MXN: { major: ['peso', 'pesos'], minor: ['centavo', 'centavos'], joint: 'and' },
  BRL: { major: ['real', 'reais'], minor: ['centavo', 'centavos'], joint: 'and' },
  CNY: { major: ['yuan', 'yuan'], minor: ['fen', 'fen'], joint: 'and' },
  KWD: { major: ['dinar', 'dinars'], minor: ['fils', 'fils'], joint: 'and' },
};

/**
 * A price in minor units as a caller hears it: "free", "55 pounds", "12 pounds 50", "5 pence",
 * "500 rupees 50 paisa", "55 dollars and 50 cents", "5,500 yen"; a currency without words of its own
 * gets Intl's name ("55 Swiss francs" style, "12 Thai baht 50"). Never a currency symbol or a ".00",
 * which a speech voice reads out literally. A negative amount (a refund) is said with "minus" first.
 * The split into major and minor units is the currency's own (ISO 4217, as Intl knows it).
 */
export function speakPrice(amountMinor: number, currency: string, locale: SpeechLocale): string {
  if (!Number.isSafeInteger(amountMinor))
    throw new RangeError(`Not a whole number of minor units: ${amountMinor}`);
  if (amountMinor === 0) return 'free';
  if (amountMinor < 0) return `minus ${speakPrice(-amountMinor, currency, locale)}`;
  const code = currency.trim().toUpperCase();
  const scale = 10 ** minorDigits(code, locale);
  const major = Math.floor(amountMinor / scale);
  const minor = amountMinor % scale;
  const words = CURRENCY_WORDS[code];
  if (!words) return speakOtherCurrency(major, minor, scale, code, locale);

  const majorPart = `${wholeNumber(major, locale)} ${plural(words.major, major)}`;
  if (minor === 0 || !words.minor) return majorPart;
  const minorPart = `${wholeNumber(minor, locale)} ${plural(words.minor, minor)}`;
  if (major === 0) return minorPart;
  if (words.joint === 'bare') return `${majorPart} ${minor}`;
  if (words.joint === 'named') return `${majorPart} ${minorPart}`;
  return `${majorPart} and ${minorPart}`;
}

/**
 * Intl's name for the major unit, with its plural ("55 Swiss francs", "1 Swiss franc"), and the minor
 * amount after it unnamed, as "12 pounds 50" is said. With other than two minor digits (the dinars of
 * Bahrain or Oman have three) "1 dinar 5" could mean 5 or 500 fils, so those read as a decimal.
 */
function speakOtherCurrency(
  major: number,
  minor: number,
  scale: number,
  currency: string,
  locale: SpeechLocale,
): string {
  const named = (amount: number, digits: number) =>
    new Intl.NumberFormat(locale, {
      style: 'currency',
      currency,
      currencyDisplay: 'name',
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(amount);
  if (minor === 0) return named(major, 0);
  if (scale !== 100) return named(major + minor / scale, Math.log10(scale));
  // Intl puts the name after the number in English ("12 Thai baht"); the pence-like part follows it.
  return `${named(major, 0)} ${minor}`;
}

const digitsOf = new Map<string, number>();

/** How many minor digits the currency has (2 for pounds, 0 for yen, 3 for dinars). */
function minorDigits(currency: string, locale: SpeechLocale): number {
  let digits = digitsOf.get(currency);
  if (digits === undefined) {
    // Intl throws a RangeError for a code that is not a currency, which is what the caller should see.
    const format = new Intl.NumberFormat(locale, { style: 'currency', currency });
    digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    digitsOf.set(currency, digits);
  }
  return digits;
}

const plural = (words: readonly [string, string], n: number) => (n === 1 ? words[0] : words[1]);

const groupings = {
  'en-GB': new Intl.NumberFormat('en-GB', { maximumFractionDigits: 0 }),
  'en-US': new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 }),
};

/** "1,250": grouped as Intl writes it, which a speech voice reads as one number. */
function wholeNumber(n: number, locale: SpeechLocale): string {
  return groupings[locale].format(n);
}
