import { type CountryCode, parsePhoneNumberWithError } from 'libphonenumber-js';
import { z } from 'zod';
import { NAME_MAX_LENGTH } from '../domain/client.ts';

/**
 * Phone numbers are kept in E.164 and e-mail addresses trimmed and lower-cased, so that "the same
 * client" means the same stored value whoever typed it.
 */

/**
 * E.164 for a valid number, or undefined. Without a country the number must be international
 * (leading +); with one (the location's, for a caller reading out a national number) it may be national.
 */
export function normalisePhone(value: string, defaultCountry?: CountryCode): string | undefined {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > 40) return undefined;
  if (!defaultCountry && !trimmed.startsWith('+')) return undefined;
  try {
    const phone = parsePhoneNumberWithError(trimmed, defaultCountry);
    return phone.isValid() ? phone.number : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A number as a customer or the front desk types it at a location: national numbers are read in the
 * location's country, as dialled there. One that does not read is returned as typed, for the client's
 * rules to refuse with their own message.
 */
export function phoneAsDialledAt(value: string, country: string | null): string {
  return normalisePhone(value, (country ?? undefined) as CountryCode | undefined) ?? value;
}

const emailShape = z.email();

/** Trimmed and lower-cased, or undefined when it is not an e-mail address. */
export function normaliseEmail(value: string): string | undefined {
  const normalised = value.trim().toLowerCase();
  if (normalised.length > 254) return undefined;
  return emailShape.safeParse(normalised).success ? normalised : undefined;
}

/** A first or last name trimmed, or undefined when empty, too long or holding control characters. */
export function normaliseName(value: string, maxLength = NAME_MAX_LENGTH): string | undefined {
  const trimmed = value.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this rejects.
  if (trimmed.length < 1 || [...trimmed].length > maxLength || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    return undefined;
  }
  return trimmed;
}
