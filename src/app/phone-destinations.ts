import {
  type CountryCode,
  getCountryCallingCode,
  isSupportedCountry,
  type NumberType,
  parsePhoneNumberWithError,
} from 'libphonenumber-js/max';

/**
 * Which phone numbers the engine texts (design.md 9.1): only numbers of a person (mobile, landline,
 * VoIP), never a premium-rate, shared-cost, freephone, forwarding ("personal number"), pager,
 * company (UAN), voicemail or satellite/global-service number (text to them costs the salon money or
 * pays the stranger who typed it), and only in the countries the organisation texts. The number types
 * come from libphonenumber-js's full metadata (`/max`); the rest of the engine normalises with its
 * smaller default metadata (contact.ts).
 */

const PERSONAL: ReadonlySet<NumberType> = new Set<NumberType>([
  'MOBILE',
  'FIXED_LINE',
  'FIXED_LINE_OR_MOBILE',
  'VOIP',
]);

const NOT_PERSONAL: Partial<Record<NonNullable<NumberType>, string>> = {
  PREMIUM_RATE: 'a premium-rate number',
  SHARED_COST: 'a shared-cost number',
  TOLL_FREE: 'a freephone number',
  PERSONAL_NUMBER: 'a call-forwarding ("personal") number',
  PAGER: 'a pager number',
  UAN: 'a company (non-geographic) number',
  VOICEMAIL: 'a voicemail access number',
};

/** What the metadata says of a number: its country, and why it is not a person's own (or null). */
interface Classified {
  country: string | undefined;
  notPersonal: string | null;
}

/**
 * Numbers already classified (the full metadata's parse costs about 13 µs, and every booking's
 * messages ask of its client's number): a bounded memo, started afresh when full.
 */
const classified = new Map<string, Classified>();
const CLASSIFIED_LIMIT = 10_000;

function classify(e164: string): Classified {
  let known = classified.get(e164);
  if (known) return known;
  known = classifyAnew(e164);
  if (classified.size >= CLASSIFIED_LIMIT) classified.clear();
  classified.set(e164, known);
  return known;
}

function classifyAnew(e164: string): Classified {
  let parsed: ReturnType<typeof parsePhoneNumberWithError>;
  try {
    parsed = parsePhoneNumberWithError(e164);
  } catch {
    return { country: undefined, notPersonal: 'not a phone number' };
  }
  if (!parsed.country) return { country: undefined, notPersonal: 'a satellite or global-service number' };
  const type = parsed.getType();
  if (type !== undefined && PERSONAL.has(type)) return { country: parsed.country, notPersonal: null };
  return {
    country: parsed.country,
    notPersonal: (type && NOT_PERSONAL[type]) ?? 'not a number of a person’s phone',
  };
}

/**
 * Why this E.164 number is not a person's own ("a premium-rate number"), or null when it is.
 * Numbers of no country (+881 satellite phones, +800 global freephone, +882/+883 networks) are not.
 */
export function nonPersonalNumber(e164: string): string | null {
  return classify(e164).notPersonal;
}

/** The ISO 3166-1 country of an E.164 number, or undefined (a number of no country, or unreadable). */
export function countryOfPhone(e164: string): string | undefined {
  return classify(e164).country;
}

/**
 * Calling codes shared by independent countries (the North American plan, Russia and Kazakhstan):
 * a number there is in its own country only. Elsewhere a shared code is one national plan (the UK with
 * Guernsey, Jersey and the Isle of Man; Finland with Åland; Norway with Svalbard...): a UK salon's
 * customer with a Guernsey mobile is texted as a UK one.
 */
const SHARED_BY_COUNTRIES = new Set(['1', '7']);

/** Whether `e164` may be texted by an organisation that texts `countries` (ISO codes). */
export function isTextable(e164: string, countries: ReadonlySet<string>): boolean {
  if (nonPersonalNumber(e164) !== null) return false;
  const country = countryOfPhone(e164);
  if (country === undefined) return false;
  if (countries.has(country)) return true;
  const code = getCountryCallingCode(country as CountryCode);
  if (SHARED_BY_COUNTRIES.has(code)) return false;
  for (const allowed of countries) {
    if (isSupportedCountry(allowed) && getCountryCallingCode(allowed) === code) return true;
  }
  return false;
}

const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region' });

/** A country's name in English, as it stands before a noun ("a United Kingdom number"); "GB" reads worse. */
export function countryName(code: string): string {
  try {
    return REGION_NAMES.of(code) ?? code;
  } catch {
    return code;
  }
}

/** Names English writes with "the" ("numbers in the United Kingdom", "the Netherlands"). */
const NAMED_WITH_THE =
  /^(?:United |Netherlands$|Philippines$|Bahamas$|Gambia$|Maldives$|Seychelles$|Comoros$|Vatican City$)|(?:Islands|Republic|Emirates)$/;

/** A country's name as a sentence says it after "in": "the United Kingdom", "France". */
export function countryInSentence(code: string): string {
  const name = countryName(code);
  return NAMED_WITH_THE.test(name) ? `the ${name}` : name;
}
