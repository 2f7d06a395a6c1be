import { normaliseForMatching } from '../domain/name-words.ts';
import { closeness, wordFit } from './word-similarity.ts';

export { normaliseForMatching };

/**
 * A phone agent passes on what it heard ("the colour one", "Chloe", "blow dry", "Amara Okafur") or,
 * once it has seen a list, an id. Asking the caller to spell out an exact name would be a poor call,
 * so names are compared word by word after a forgiving normalisation (src/domain/name-words.ts),
 * slips are forgiven (word-similarity.ts), and an answer that is not clearly one item comes back as
 * choices for the agent to put to the caller rather than as a guess.
 *
 * Fits, strictest first; the strictest fit any item has decides, so a closer fit is never made
 * ambiguous by looser ones:
 * - `exact`: the query reads as one of the item's names or aliases (spacing, hyphens and word order
 *   aside); an alias that is also a word of another item's name ("trim", "Beard trim") is asked about;
 * - `close`: it has the same words as a name, each within a slip ("Amara Okafur");
 * - `partial`: its words are some of a name's words ("Amara", "colour" for "Full colour"), or a
 *   name's words are some of its words ("ladies cut" for the alias "cut").
 */

export type Fit = 'id' | 'exact' | 'close' | 'partial';

export type MatchResult<T> =
  | { kind: 'match'; item: T; fit: Fit }
  /** Closest first; a single choice asks the caller to confirm it. */
  | { kind: 'ambiguous'; choices: T[]; fit: Fit }
  /** Nothing fits; `closest` are the nearest names all the same, closest first. */
  | { kind: 'none'; closest: T[] };

/** What an item may be called: its id, its names (a staff member's full name, a location's slug), its aliases. */
export interface Described {
  id: string;
  names: readonly string[];
  aliases?: readonly string[];
}

export interface MatchOptions<T> {
  /**
   * A lone partial fit: `match` takes it (a first name names a person), `confirm` offers it as the
   * one choice (a word of a service's name may belong to another service the caller has in mind).
   */
  partial?: 'match' | 'confirm';
  /**
   * Whether an item may be offered as a choice (default: all). Others are still matched when the
   * query names them more closely than anything offerable, so the caller can be told about them.
   */
  offerable?: (item: T) => boolean;
  /** At most this many choices (default 3). */
  limit?: number;
}

/** A close fit is taken without asking at this score or above, when nothing else is as close. */
const SURE_SCORE = 0.9;
/** Scores within this of the best are equally good: the caller is asked. */
const MARGIN = 0.04;
const DEFAULT_LIMIT = 3;

const TIERS = ['exact', 'close', 'partial'] as const;
type Tier = (typeof TIERS)[number];

interface Name {
  words: readonly string[];
  /** The words run together (spacing does not count), and the same in alphabetical order (nor does order). */
  key: string;
  anyOrder: string;
  alias: boolean;
}

interface Candidate<T> {
  item: T;
  index: number;
  names: Name[];
  tier: Tier | undefined;
  score: number;
  /** The fit came from an alias, not the item's own name. */
  byAlias: boolean;
}

/**
 * The item the query names: by id (case-insensitive) first, then by the fits above. See
 * MatchResult for what comes back; `choices` and `closest` never hold more than `limit` items and
 * never an item that is not offerable.
 */
export function matchByName<T>(
  query: string,
  items: readonly T[],
  describe: (item: T) => Described,
  options: MatchOptions<T> = {},
): MatchResult<T> {
  const offerable = options.offerable ?? (() => true);
  const limit = options.limit ?? DEFAULT_LIMIT;
  const described = items.map((item) => ({ ...describe(item), item }));
  const id = query.trim().toLowerCase();
  const byId = id === '' ? undefined : described.find((entry) => entry.id.toLowerCase() === id);
  if (byId) return { kind: 'match', item: byId.item, fit: 'id' };

  const asked = nameOf(query, false);
  if (asked.words.length === 0) return { kind: 'none', closest: [] };
  const candidates = described.map((entry, index) => candidateOf(entry, index));
  rateAll(candidates, asked);
  for (const tier of TIERS) {
    const decided = decide(tier, candidates, asked, options);
    if (decided !== undefined) return decided;
  }
  const closest = rank(
    candidates.filter((c) => offerable(c.item)).map((c) => ({ ...c, score: looseScore(c, asked.words) })),
  );
  return { kind: 'none', closest: closest.slice(0, limit).map((c) => c.item) };
}

function candidateOf<T>(entry: Described & { item: T }, index: number): Candidate<T> {
  const names = [
    ...entry.names.map((name) => nameOf(name, false)),
    ...(entry.aliases ?? []).map((alias) => nameOf(alias, true)),
  ];
  return {
    item: entry.item,
    index,
    names: names.filter((name) => name.key !== ''),
    tier: undefined,
    score: 0,
    byAlias: false,
  };
}

/**
 * Rates every candidate against the query. Exact readings are looked for first: when there are
 * any, the slower comparisons for slips are not needed.
 */
function rateAll<T>(candidates: Candidate<T>[], asked: Name): void {
  for (const candidate of candidates) {
    if (candidate.names.some((name) => isExact(asked, name))) {
      candidate.tier = 'exact';
      candidate.score = 1;
      candidate.byAlias = !candidate.names.some((name) => !name.alias && isExact(asked, name));
    }
  }
  if (candidates.some((c) => c.tier === 'exact')) return;
  for (const candidate of candidates) rate(candidate, asked);
}

/** The answer when some candidates fit at this tier (undefined when none does). */
function decide<T>(
  tier: Tier,
  candidates: readonly Candidate<T>[],
  asked: Name,
  options: MatchOptions<T>,
): MatchResult<T> | undefined {
  const offerable = options.offerable ?? (() => true);
  const limit = options.limit ?? DEFAULT_LIMIT;
  const fits = rank(candidates.filter((c) => c.tier === tier));
  const top = fits[0];
  if (top === undefined) return undefined;
  const offered = fits.filter((c) => offerable(c.item));
  // A name not to offer (a service booked only in person) answers for itself when the caller
  // named it more closely than anything that may be offered.
  if (!offerable(top.item) && (offered.length === 0 || offered[0]!.score < top.score - MARGIN)) {
    return { kind: 'match', item: top.item, fit: tier };
  }
  const best = offered[0]!;
  const alone = fits.length === 1;
  const clear = offered.length === 1 || offered[1]!.score < best.score - MARGIN;
  const match: MatchResult<T> = { kind: 'match', item: best.item, fit: tier };
  if (tier === 'exact' && alone) {
    const rivals = best.byAlias ? wordRivals(best, candidates, asked.words, offerable) : [];
    return rivals.length === 0 ? match : ambiguous([best, ...rivals], tier, limit);
  }
  if (tier === 'close' && clear && best.score >= SURE_SCORE) return match;
  if (tier === 'partial' && alone && options.partial === 'match') return match;
  return ambiguous(offered, tier, limit);
}

/** Names read for comparison, remembered: the same catalogue is matched on every tool call. */
const readNames = new Map<string, Omit<Name, 'alias'>>();

function nameOf(text: string, alias: boolean): Name {
  let read = readNames.get(text);
  if (read === undefined) {
    const words = normaliseForMatching(text);
    read = { words, key: words.join(''), anyOrder: [...words].sort().join(' ') };
    if (readNames.size >= 10_000) readNames.clear();
    readNames.set(text, read);
  }
  return { ...read, alias };
}

function ambiguous<T>(candidates: readonly Candidate<T>[], fit: Fit, limit: number): MatchResult<T> {
  return { kind: 'ambiguous', choices: candidates.slice(0, limit).map((c) => c.item), fit };
}

/** Best first; equally good ones in the order they were given. */
function rank<T>(candidates: readonly Candidate<T>[]): Candidate<T>[] {
  return [...candidates].sort((a, b) => b.score - a.score || a.index - b.index);
}

/** Sets the candidate's strictest fit to the query, and its score within that fit (0..1). */
function rate<T>(candidate: Candidate<T>, query: Name): void {
  for (const name of candidate.names) {
    const fit = fitOf(query, name);
    if (fit === undefined) continue;
    const better =
      candidate.tier === undefined ||
      TIERS.indexOf(fit.tier) < TIERS.indexOf(candidate.tier) ||
      (fit.tier === candidate.tier && fit.score > candidate.score);
    if (better) {
      candidate.tier = fit.tier;
      candidate.score = fit.score;
      candidate.byAlias = name.alias;
    }
  }
}

/** The query reads as the name: the same words, whatever the spacing between them or their order. */
function isExact(query: Name, name: Name): boolean {
  return query.key === name.key || query.anyOrder === name.anyOrder;
}

function fitOf(query: Name, name: Name): { tier: Tier; score: number } | undefined {
  if (isExact(query, name)) return { tier: 'exact', score: 1 };
  const said = query.words;
  if (said.length === name.words.length) {
    const aligned = alignment(said, name.words);
    if (aligned !== undefined) return { tier: aligned.whole ? 'close' : 'partial', score: aligned.score };
  }
  if (said.length === name.words.length) return undefined;
  // The words run together or apart differently, within a slip: "blowdri", "hair cutt".
  const together = wordFit(query.key, name.key);
  if (together?.fit === 'slip') return { tier: 'close', score: together.similarity };
  // Some of the name's words ("colour" of "Full colour"), or all of them among others ("ladies cut").
  const [fewer, more] = said.length < name.words.length ? [said, name.words] : [name.words, said];
  const aligned = fewer === said ? alignment(said, name.words) : alignment(name.words, said);
  if (aligned === undefined) return undefined;
  return { tier: 'partial', score: (aligned.score * fewer.length) / more.length };
}

/**
 * How well every word of `said` stands for a different word of `name` (the mean similarity), or
 * undefined when one of them stands for none; `whole` when none of them is only a part of its
 * word. Words are paired best first, so "martin chloe" fits "Chloé Martin".
 */
function alignment(
  said: readonly string[],
  name: readonly string[],
): { score: number; whole: boolean } | undefined {
  const pairs: { s: number; n: number; similarity: number; part: boolean }[] = [];
  said.forEach((word, s) => {
    name.forEach((other, n) => {
      const fit = wordFit(word, other);
      if (fit !== undefined) pairs.push({ s, n, similarity: fit.similarity, part: fit.fit === 'part' });
    });
  });
  pairs.sort((a, b) => b.similarity - a.similarity);
  const usedSaid = new Set<number>();
  const usedName = new Set<number>();
  let total = 0;
  let whole = true;
  for (const { s, n, similarity, part } of pairs) {
    if (usedSaid.has(s) || usedName.has(n)) continue;
    usedSaid.add(s);
    usedName.add(n);
    total += similarity;
    whole &&= !part;
  }
  return usedSaid.size === said.length ? { score: total / said.length, whole } : undefined;
}

/**
 * Offerable items (other than the one an alias named) whose own names or aliases hold every word
 * of the query as a whole word: "trim" as the alias of a haircut and a word of "Beard trim". The
 * caller may mean either, so the alias alone does not decide.
 */
function wordRivals<T>(
  chosen: Candidate<T>,
  candidates: readonly Candidate<T>[],
  words: readonly string[],
  offerable: (item: T) => boolean,
): Candidate<T>[] {
  return candidates.filter(
    (c) =>
      c !== chosen &&
      offerable(c.item) &&
      c.names.some((name) => words.every((word) => name.words.includes(word))),
  );
}

/** For the nearest names when nothing fits: how much the query resembles the item's best name. */
function looseScore<T>(candidate: Candidate<T>, words: readonly string[]): number {
  const key = words.join('');
  let best = 0;
  for (const name of candidate.names) {
    const perWord = words.map((word) => Math.max(0, ...name.words.map((other) => closeness(word, other))));
    const mean = perWord.reduce((sum, value) => sum + value, 0) / words.length;
    best = Math.max(best, mean, closeness(key, name.key));
  }
  return best;
}
