/**
 * Text as a search compares it: without accents, lower case ("Élodie Müller" is "elodie muller"), so a
 * desk typing a name as it sounds, or in either case, finds the client however the name was written.
 * Decomposed first (NFD) and the combining accents (U+0300 to U+036F) left out, so that even where a
 * database lower-cases ASCII only (PostgreSQL under LC_CTYPE C) "É" still ends as "e"; then lower
 * case, and Greek's final sigma as any other ("ΠΑΠΑΔΟΠΟΥΛΟΣ" and "Παπαδόπουλος" alike). Letters that
 * do not decompose (ø, ł, ß) are only lower-cased.
 *
 * The search folds the stored names and the words typed with the same function in the same place: on
 * SQLite this one, registered as the SQL function search_fold (database.ts); on PostgreSQL the same
 * steps in SQL (searchFolded in diary-repository.ts), applied to both sides of the comparison.
 */
export function searchFold(text: string): string {
  // ASCII needs none of the Unicode steps: the common case, once per client row on SQLite.
  if (ASCII_ONLY.test(text)) return text.toLowerCase();
  // Final sigma (ς) written as an escape: one character above U+00FF in a regular expression, which the
  // bundle cannot escape, makes V8 keep the whole bundled chunk's source at two bytes a character.
  return text
    .normalize('NFD')
    .replace(COMBINING_ACCENTS, '')
    .toLowerCase()
    .replace(/\u03c2/g, 'σ');
}

/** The combining diacritical marks; also PostgreSQL's pattern, as a regular-expression class. */
export const COMBINING_ACCENTS_PATTERN = '[\\u0300-\\u036f]';
const COMBINING_ACCENTS = new RegExp(COMBINING_ACCENTS_PATTERN, 'g');
/** Nothing past U+007F (astral characters are surrogate pairs, inside the class). */
const ASCII_ONLY = /^[^\u0080-\uffff]*$/;
