/**
 * How names of services, staff and locations are read for comparison, in one place: the MCP tools
 * match what a caller said with it, and the catalogue import checks with it that no two aliases (or
 * an alias and a name) would read the same, so that whatever the import accepts can be told apart.
 */

/** The whole words the list below changes; anything else keeps its spelling. */
const BRITISH_SPELLINGS: ReadonlyMap<string, string> = new Map([
  ['color', 'colour'],
  ['colors', 'colours'],
  ['center', 'centre'],
  ['gray', 'grey'],
  ['favorite', 'favourite'],
]);

/** Longest first, so that "-ization" is not read as "-ize" plus something. */
const BRITISH_SUFFIXES: readonly (readonly [string, string])[] = [
  ['ization', 'isation'],
  ['izing', 'ising'],
  ['ize', 'ise'],
];

/** Words a caller wraps a name in ("a cut", "my usual colour, please") that never tell names apart. */
const FILLER_WORDS: ReadonlySet<string> = new Set(['a', 'an', 'the', 'my', 'some', 'please', 'just']);

/**
 * The words of a name for comparison: accents dropped ("Chloé" → "chloe"), lower case, "&" read as
 * "and", a possessive "'s" kept with its word ("men's" → "mens"), punctuation and hyphens as spaces,
 * filler words ("a", "the", "please") dropped, a few American spellings made British and plurals
 * made singular. The same normalisation is applied to the query and to every name, so it only has
 * to be consistent, not linguistically perfect ("series" → "sery" is fine: both sides say "sery").
 */
export function normaliseForMatching(text: string): string[] {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/(\p{L})['\u2019]s\b/gu, '$1s')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '' && !FILLER_WORDS.has(word))
    .map(normaliseWord);
}

/**
 * What two names must differ in to be told apart: their words run together, so that spacing and
 * hyphens do not count ("blow-dry", "blow dry" and "blowdry" read the same). Empty when the text has
 * no words at all.
 */
export function nameKey(text: string): string {
  return normaliseForMatching(text).join('');
}

/**
 * Spelling runs again after the singular, so that plurals the list does not name directly
 * ("centers", "organizations") end up where their singulars do.
 */
function normaliseWord(word: string): string {
  return britishSpelling(singular(britishSpelling(word)));
}

function britishSpelling(word: string): string {
  const whole = BRITISH_SPELLINGS.get(word);
  if (whole !== undefined) return whole;
  for (const [american, british] of BRITISH_SUFFIXES) {
    if (word.length > american.length && word.endsWith(american)) {
      return word.slice(0, -american.length) + british;
    }
  }
  return word;
}

/** A light singular: enough that "nails", "lashes" and "glasses" meet "nail", "lash" and "glass". */
function singular(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (/(?:sh|ch|x)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}
