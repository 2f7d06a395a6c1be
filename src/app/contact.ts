import {
  type CountryCode,
  getCountryCallingCode,
  isSupportedCountry,
  ParseError,
  parsePhoneNumberWithError,
  validatePhoneNumberLength,
} from 'libphonenumber-js';
import { z } from 'zod';
import { NAME_MAX_LENGTH } from '../domain/client.ts';
import { AppError } from '../domain/errors.ts';
import { NOT_IN_A_NAME, VISIBLE } from '../domain/text-rules.ts';

/**
 * Phone numbers are kept in E.164 and e-mail addresses trimmed and lower-cased, so that "the same
 * client" means the same stored value whoever typed it.
 */

/**
 * E.164 for a valid number, or undefined. Without a country the number must be international
 * (leading +); with one (the location's, for a caller reading out a national number) it may be national.
 * Only a number: libphonenumber finds one inside any text, and an extension ("ext. 12", "#12") or
 * words around it ("+447400111555abc") would be dropped without a word, so letters, `#`, `;` and an
 * extension make it no number.
 */
export function normalisePhone(value: string, defaultCountry?: CountryCode): string | undefined {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > 40 || NOT_IN_A_NUMBER.test(trimmed)) return undefined;
  if (!defaultCountry && !trimmed.startsWith('+')) return undefined;
  try {
    const phone = parsePhoneNumberWithError(trimmed, defaultCountry);
    return phone.isValid() && phone.ext === undefined ? phone.number : undefined;
  } catch {
    return undefined;
  }
}

/** What a phone number as typed never holds: letters (an extension's "ext", words), `#` and `;`. */
const NOT_IN_A_NUMBER = /[\p{L}#;]/u;

/**
 * A number as a customer or the front desk types it at a location: national numbers are read in the
 * location's country, as dialled there. One that is not valid is returned in international form when
 * it reads as a number of that country (07700 900123 in the UK as +447700900123), so that the client's
 * rules refuse it for what it is (phoneProblem); one that does not read at all, as typed.
 */
export function phoneAsDialledAt(value: string, country: string | null): string {
  const defaultCountry = (country ?? undefined) as CountryCode | undefined;
  const valid = normalisePhone(value, defaultCountry);
  if (valid) return valid;
  const trimmed = value.trim();
  if (!defaultCountry || trimmed.startsWith('+') || trimmed.length > 40) return value;
  try {
    return parsePhoneNumberWithError(trimmed, defaultCountry).number;
  } catch {
    return value;
  }
}

/**
 * A number as it is written for someone at a location: in national form when it is in the location's
 * own numbering plan ("020 7485 0000", as dialled there), otherwise in international form
 * ("+33 1 42 68 53 00"); undefined when it does not read as a phone number.
 */
export function phoneAsWrittenAt(value: string, country: string | null | undefined): string | undefined {
  const home = country?.trim().toUpperCase();
  const homeCountry = home && isSupportedCountry(home) ? home : undefined;
  try {
    const phone = parsePhoneNumberWithError(value.trim(), homeCountry);
    // libphonenumber places some +44 numbers in Guernsey, Jersey or the Isle of Man and some +1
    // numbers in Canada; they are dialled nationally from the rest of the plan all the same.
    const national =
      homeCountry !== undefined &&
      (phone.country === homeCountry || phone.countryCallingCode === getCountryCallingCode(homeCountry));
    return national ? phone.formatNational() : phone.formatInternational();
  } catch {
    return undefined;
  }
}

/** What is wrong with a phone number that is refused (phoneRefusal). */
export type PhoneProblemKind =
  | 'empty'
  | 'overlong_text'
  | 'no_country_code'
  | 'unknown_country_code'
  | 'not_a_number'
  | 'too_short'
  | 'too_long'
  | 'wrong_length'
  | 'drama'
  | 'not_in_use';

/** Why a phone number is refused: what is wrong, and its country code where it has one. */
export interface PhoneRefusal {
  kind: PhoneProblemKind;
  callingCode?: string;
}

/**
 * Why a phone number is refused, or undefined for a valid one; `callingCode` ("+44") where the number
 * has one. Numbers Ofcom keeps for drama, such as 07700 900123, are told apart: libphonenumber refuses
 * the mobile ones as no one's number, and "not valid" or "give its country code" would send the person
 * looking for a mistake they did not make.
 */
export function phoneRefusal(value: string, defaultCountry?: CountryCode): PhoneRefusal | undefined {
  const trimmed = value.trim();
  if (trimmed === '') return { kind: 'empty' };
  if (trimmed.length > 40) return { kind: 'overlong_text' };
  if (!defaultCountry && !trimmed.startsWith('+')) return { kind: 'no_country_code' };
  let parsed: ReturnType<typeof parsePhoneNumberWithError>;
  try {
    parsed = parsePhoneNumberWithError(trimmed, defaultCountry);
  } catch (error) {
    switch (error instanceof ParseError ? error.message : '') {
      case 'INVALID_COUNTRY':
        return { kind: defaultCountry ? 'not_a_number' : 'unknown_country_code' };
      case 'TOO_SHORT':
        return { kind: 'too_short' };
      case 'TOO_LONG':
        return { kind: 'too_long' };
      default:
        return { kind: 'not_a_number' };
    }
  }
  if (parsed.isValid()) return undefined;
  const callingCode = `+${parsed.countryCallingCode}`;
  if (isDramaNumber(parsed.number)) return { kind: 'drama', callingCode };
  switch (validatePhoneNumberLength(parsed.number)) {
    case 'TOO_SHORT':
      return { kind: 'too_short', callingCode };
    case 'TOO_LONG':
      return { kind: 'too_long', callingCode };
    case 'INVALID_LENGTH':
      return { kind: 'wrong_length', callingCode };
    default:
      return { kind: 'not_in_use', callingCode };
  }
}

/**
 * Why a phone number is refused, as the rest of a sentence that starts with the field's name ("phone
 * is too short for a number with the country code +44"). The number itself is never repeated
 * (refusals may be logged).
 */
function phoneProblem(problem: PhoneRefusal): string {
  const code = problem.callingCode;
  switch (problem.kind) {
    case 'empty':
      return 'is empty: give a phone number, or leave it out';
    case 'overlong_text':
      return 'is longer than 40 characters, longer than any phone number';
    case 'no_country_code':
      return `has no country code: give it in international form, ${EXAMPLE}`;
    case 'unknown_country_code':
      return `starts with a country code no country uses: give it in international form, ${EXAMPLE}`;
    case 'not_a_number':
      return `is not a phone number: give it in international form, ${EXAMPLE}`;
    case 'too_short':
      return code
        ? `is too short for a number with the country code ${code}: a digit or more is missing`
        : 'is too short to be a phone number';
    case 'too_long':
      return code
        ? `is too long for a number with the country code ${code}: it has a digit or more too many`
        : 'is too long to be a phone number';
    case 'wrong_length':
      return `does not have as many digits as a number with the country code ${code} has`;
    case 'drama':
      return "is in a range Ofcom keeps for TV, film and radio drama (such as 07700 900000 to 07700 900999), so it is no one's real number: give a number the person really uses";
    case 'not_in_use':
      return `is not a number in use with the country code ${code}: no number there begins like that`;
  }
}

const EXAMPLE = 'such as +447911123456';

/**
 * The 400 (param phone) for a number normalisePhone refused, said for what is wrong with it; its
 * details carry the kind (`phoneProblem`), which pages word in their own way.
 */
export function invalidPhone(value: string, defaultCountry?: CountryCode): AppError {
  const problem = phoneRefusal(value, defaultCountry) ?? { kind: 'not_a_number' };
  return new AppError('invalid_request', `phone ${phoneProblem(problem)}.`, 'phone', {
    phoneProblem: problem.kind,
  });
}

/**
 * The numbers Ofcom keeps for drama (films, TV and radio), never given to anyone: 07700 900xxx (mobile),
 * 020 7946 0xxx, 0113 to 0118, 0121, 0131, 0141, 0151 and 0161 496 0xxx, 0191 498 0xxx, 028 9649 6xxx,
 * 029 2018 0xxx, 01632 960xxx, 03069 990xxx, 08081 570xxx and 0909 879 0xxx.
 */
const DRAMA =
  /^\+44(?:7700900|2079460|11[3-8]4960|1[2-6]14960|1914980|2896496|2920180|1632960|3069990|8081570|9098790)\d{3}$/;

/** Whether an E.164 number is one of Ofcom's drama numbers. */
export function isDramaNumber(e164: string): boolean {
  return DRAMA.test(e164);
}

const emailShape = z.email();

/** Trimmed and lower-cased, or undefined when it is not an e-mail address. */
export function normaliseEmail(value: string): string | undefined {
  const normalised = value.trim().toLowerCase();
  if (normalised.length > 254) return undefined;
  return emailShape.safeParse(normalised).success ? normalised : undefined;
}

/**
 * A first or last name trimmed, or undefined when it shows nothing (blank, or zero-width characters
 * alone), is too long or holds what breaks its line (a control character, a line separator).
 */
export function normaliseName(value: string, maxLength = NAME_MAX_LENGTH): string | undefined {
  const trimmed = value.trim();
  if (!VISIBLE.test(trimmed) || [...trimmed].length > maxLength || NOT_IN_A_NAME.test(trimmed)) {
    return undefined;
  }
  return trimmed;
}
