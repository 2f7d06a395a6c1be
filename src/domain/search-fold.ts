/**
 * Text as a search compares it: lower case, without accents ("Élodie Müller" is "elodie muller"), so
 * a desk typing a name as it sounds, or in either case, finds the client however the name was written.
 * Lower-cased first, then decomposed (NFD) and the combining accents (U+0300 to U+036F) left out: both
 * databases do the same steps in the same order (searchFolded in diary-repository.ts), so a term and a
 * stored name fold alike on either. Letters that do not decompose (ø, ł, ß) are only lower-cased.
 */
export function searchFold(text: string): string {
  return text.toLowerCase().normalize('NFD').replace(COMBINING_ACCENTS, '');
}

/** The combining diacritical marks; also PostgreSQL's pattern, as a regular-expression class. */
export const COMBINING_ACCENTS_PATTERN = '[\\u0300-\\u036f]';
const COMBINING_ACCENTS = new RegExp(COMBINING_ACCENTS_PATTERN, 'g');
