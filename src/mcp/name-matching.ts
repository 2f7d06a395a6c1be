/**
 * A phone agent passes on what it heard ("the colour one", "Chloe", "blow dry") or, once it has seen
 * a list, an id. Asking the caller to spell out an exact name would be a poor call, so names are
 * compared word by word after a forgiving normalisation, and an answer that fits several items comes
 * back as a choice for the agent to put to the caller rather than as a guess.
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

/**
 * The words of a name for comparison: accents dropped ("Chloé" → "chloe"), lower case, "&" read as
 * "and", punctuation and hyphens as spaces, filler words ("a", "the", "please") dropped, a few American spellings made British and plurals made
 * singular. The same normalisation is applied to the query and to every name, so it only has to be
 * consistent, not linguistically perfect ("series" → "sery" is fine: both sides say "sery").
 */
export function normaliseForMatching(text: string): string[] {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '' && !FILLER_WORDS.has(word))
    .map(normaliseWord);
}

/** Words a caller wraps a name in ("a cut", "my usual colour, please") that never tell names apart. */
const FILLER_WORDS: ReadonlySet<string> = new Set(['a', 'an', 'the', 'my', 'some', 'please', 'just']);

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

export type MatchResult<T> =
  | { kind: 'match'; item: T }
  | { kind: 'ambiguous'; choices: T[] }
  | { kind: 'none' };

/** Whether an item whose names read `names` (already normalised) fits the query's words. */
type Fit = (query: readonly string[], names: readonly (readonly string[])[]) => boolean;

const MIN_PREFIX_LENGTH = 3;

/** Tried in order, strictest first: a closer fit is never made ambiguous by looser ones. */
const FITS: readonly Fit[] = [
  // The query is one of the names, word for word.
  (query, names) => names.some((name) => sameWords(name, query)),
  // Every query word is a whole word of the item's names ("cut" → "Cut & blow-dry").
  (query, names) => query.every((word) => names.some((name) => name.includes(word))),
  // Every query word starts a word of the item's names ("consult" → "Colour consultation"). Prefixes
  // shorter than three letters would match almost anything.
  (query, names) =>
    query.every((word) =>
      names.some((name) =>
        name.some(
          (nameWord) =>
            nameWord === word || ([...word].length >= MIN_PREFIX_LENGTH && nameWord.startsWith(word)),
        ),
      ),
    ),
];

/**
 * The item the query names: by id (case-insensitive) first, then by the fits above; the first fit
 * that any item passes decides, as a match when one item passes and as a choice (in the order of
 * `items`) when several do. `names` are what the item may be called: a location's name and its slug,
 * a staff member's full name.
 */
export function matchByName<T>(
  query: string,
  items: readonly T[],
  describe: (item: T) => { id: string; names: string[] },
): MatchResult<T> {
  const described = items.map((item) => ({ item, ...describe(item) }));
  const id = query.trim().toLowerCase();
  if (id !== '') {
    const byId = described.find((entry) => entry.id.toLowerCase() === id);
    if (byId) return { kind: 'match', item: byId.item };
  }
  const words = normaliseForMatching(query);
  if (words.length === 0) return { kind: 'none' };
  const candidates = described.map(({ item, names }) => ({ item, names: names.map(normaliseForMatching) }));
  for (const fits of FITS) {
    const found = candidates.filter(({ names }) => fits(words, names)).map(({ item }) => item);
    if (found.length === 1) return { kind: 'match', item: found[0]! };
    if (found.length > 1) return { kind: 'ambiguous', choices: found };
  }
  return { kind: 'none' };
}

function sameWords(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, index) => word === b[index]);
}
