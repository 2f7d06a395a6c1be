import damerauLevenshtein from 'damerau-levenshtein';
import { doubleMetaphone } from 'double-metaphone';
import jaroWinkler from 'jaro-winkler';

/**
 * How close two words (already normalised: lower case, no accents) are, as a caller's slip would
 * make them: a typo within a few edits ("okafur" / "okafor"), a word cut short ("consult" /
 * "consultation"), or a word that sounds the same ("kloey" / "chloe"). Damerau-Levenshtein distance
 * decides whether a slip is small enough, Jaro-Winkler similarity ranks (it favours a shared start,
 * as names have), Double Metaphone tells sounds; each from a small, widely used package
 * (damerau-levenshtein, jaro-winkler, double-metaphone), none hand-rolled here.
 */

/**
 * The typos a word of this length may carry: none up to two letters, one up to five, two beyond
 * (the "AUTO" fuzziness of Lucene and Elasticsearch, which rank-and-file search users are used to).
 */
export function typoBudget(length: number): number {
  if (length <= 2) return 0;
  return length <= 5 ? 1 : 2;
}

/** The shortest part of a word that may stand for it ("col" for "colour"; "co" would fit too much). */
export const MIN_PREFIX_LENGTH = 3;

/** What a prefix is worth: below an exact word, above most typos. */
const PREFIX_SIMILARITY = 0.9;

/** What sounding the same is worth at least, however the spellings differ. */
const SOUND_SIMILARITY = 0.85;

/** A typo counts only between words this alike (Jaro-Winkler): fewer shared letters are no slip. */
const SLIP_MIN_JARO_WINKLER = 0.7;

/** Sounding the same counts only between words that share this much spelling, so "cut" is not "kit". */
const SOUND_MIN_JARO_WINKLER = 0.65;

const soundCodes = new Map<string, readonly string[]>();

/** The word's Double Metaphone codes (primary and secondary), remembered: names repeat every call. */
function soundsOf(word: string): readonly string[] {
  let codes = soundCodes.get(word);
  if (codes === undefined) {
    codes = [...new Set(doubleMetaphone(word))].filter((code) => code.length >= 2);
    if (soundCodes.size >= 10_000) soundCodes.clear();
    soundCodes.set(word, codes);
  }
  return codes;
}

export function soundAlike(a: string, b: string): boolean {
  const codes = soundsOf(b);
  return soundsOf(a).some((code) => codes.includes(code));
}

/** Jaro-Winkler similarity, 0 (nothing shared) to 1 (the same). */
export function closeness(a: string, b: string): number {
  return jaroWinkler(a, b);
}

/** The number of single-letter edits (insert, delete, replace, swap two neighbours) from a to b. */
export function typos(a: string, b: string): number {
  return damerauLevenshtein(a, b).steps;
}

/**
 * How `said` came to stand for a word: the word itself, a slip of it (a typo or a sound-alike), its
 * initial, or only a part of it (its start, or a word of its own inside `said`: "cut" in "haircut").
 * A part leaves the rest of the word unsaid, so it never makes a whole name (name-matching.ts).
 */
export type WordFit = 'same' | 'slip' | 'initial' | 'part';

/** What an initial is worth: as much as a typo in a short word. */
const INITIAL_SIMILARITY = 0.8;

/** What holding another word inside is worth ("haircut" holds "cut"): a hint, not a match. */
const COMPOUND_SIMILARITY = 0.75;

/**
 * How well `said` stands for `word`, 0 (not at all) to 1 (the same word), and how: see WordFit.
 * Slips are ranked by Jaro-Winkler similarity; a typo must be within the budget of `said`'s length.
 */
export function wordFit(said: string, word: string): { similarity: number; fit: WordFit } | undefined {
  if (said === word) return { similarity: 1, fit: 'same' };
  const length = [...said].length;
  // A lone letter is an initial ("Amara O"): it stands for a word it starts, and for nothing else.
  if (length === 1)
    return word.startsWith(said) ? { similarity: INITIAL_SIMILARITY, fit: 'initial' } : undefined;
  if (length >= MIN_PREFIX_LENGTH && word.startsWith(said))
    return { similarity: PREFIX_SIMILARITY, fit: 'part' };
  // Words of one or two letters get no slip at all, not even of sound.
  const budget = typoBudget(length);
  const similarity = budget > 0 ? Math.min(closeness(said, word), 0.99) : 0;
  // Cheap tests first: the edit distance (the costly one) only for words alike enough to rank as a
  // slip at all, and of lengths a typo could bridge.
  if (similarity >= SLIP_MIN_JARO_WINKLER && Math.abs(length - [...word].length) <= budget) {
    if (typos(said, word) <= budget) return { similarity, fit: 'slip' };
  }
  if (similarity >= SOUND_MIN_JARO_WINKLER && soundAlike(said, word)) {
    return { similarity: Math.max(similarity, SOUND_SIMILARITY), fit: 'slip' };
  }
  if ([...word].length >= MIN_PREFIX_LENGTH && said.includes(word)) {
    return { similarity: COMPOUND_SIMILARITY, fit: 'part' };
  }
  return undefined;
}

/** wordFit's similarity alone (0 when `said` does not stand for `word` at all). */
export function wordSimilarity(said: string, word: string): number {
  return wordFit(said, word)?.similarity ?? 0;
}
