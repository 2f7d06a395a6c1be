/**
 * Text as a search compares it: without accents, lower case ("Élodie Müller" is "elodie muller"), so a
 * desk typing a name as it sounds, or in either case, finds the client however the name was written.
 * Decomposed first (NFD) and the combining accents (U+0300 to U+036F) left out, so that even where a
 * database lower-cases ASCII only (PostgreSQL under LC_CTYPE C) "É" still ends as "e"; then lower
 * case, and Greek's final sigma as any other ("ΠΑΠΑΔΟΠΟΥΛΟΣ" and "Παπαδόπουλος" alike). Latin letters
 * that do not decompose are written as a desk types them without the key: ł as l, ø as o, đ as d, ß as
 * ss, æ as ae, œ as oe, þ as th ("lukasz" finds "Łukasz", "strasse" finds "Straße").
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
  let folded = text
    .normalize('NFD')
    .replace(COMBINING_ACCENTS, '')
    .toLowerCase()
    .replace(/\u03c2/g, '\u03c3');
  for (const [letter, written] of PLAIN_LATIN) folded = folded.replaceAll(letter, written);
  return folded;
}

/**
 * Lower-case Latin letters no accent is taken from, and how they are typed without one. Written as
 * escapes: a character above U+00FF in the source would keep the bundle's chunk at two bytes a
 * character. PostgreSQL's fold (searchFolded) replaces the same, in this order.
 */
export const PLAIN_LATIN: readonly (readonly [string, string])[] = [
  ['\u0142', 'l'], // ł
  ['\u00f8', 'o'], // ø
  ['\u0111', 'd'], // đ
  ['\u00f0', 'd'], // ð
  ['\u0127', 'h'], // ħ
  ['\u0131', 'i'], // ı
  ['\u0167', 't'], // ŧ
  ['\u00df', 'ss'], // ß
  ['\u00e6', 'ae'], // æ
  ['\u0153', 'oe'], // œ
  ['\u00fe', 'th'], // þ
];

/** The combining diacritical marks; also PostgreSQL's pattern, as a regular-expression class. */
export const COMBINING_ACCENTS_PATTERN = '[\\u0300-\\u036f]';
const COMBINING_ACCENTS = new RegExp(COMBINING_ACCENTS_PATTERN, 'g');
/** Nothing past U+007F (astral characters are surrogate pairs, inside the class). */
const ASCII_ONLY = /^[^\u0080-\uffff]*$/;
