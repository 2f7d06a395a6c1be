/**
 * Booking references are read aloud over the phone, so their alphabet leaves out the characters that
 * sound or look alike: no 0/O, no 1/I/L. 31 characters, 6 of them: about 887 million references per
 * prefix. The random draw itself is the service layer's (src/app/booking-reference.ts).
 */
export const REFERENCE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
export const REFERENCE_LENGTH = 6;

/** `<prefix>-XXXXXX`, each character chosen by `pick(31)` (an index into the alphabet). */
export function referenceFrom(prefix: string, pick: (n: number) => number): string {
  let code = '';
  for (let i = 0; i < REFERENCE_LENGTH; i++) code += REFERENCE_ALPHABET[pick(REFERENCE_ALPHABET.length)];
  return `${prefix}-${code}`;
}

/**
 * The longest reference taken as a caller said it: room for the prefix and code spelled word by word in
 * the spelling alphabet ("november hotel charlie dash seven kilo quebec two mike xray").
 */
export const SPOKEN_REFERENCE_MAX_LENGTH = 120;

/** References match case-insensitively and regardless of surrounding or inner spaces ("nhc - 7k3m9p"). */
export function normaliseReference(input: string): string {
  return input.toUpperCase().replace(/\s+/g, '');
}

/**
 * Characters of the alphabet as a voice agent may pass them on, word for word: digits as words ("three
 * d two") and the NATO spelling alphabet ("d for delta" is passed as "delta"). Whole words only, so a
 * prefix is never read as one.
 */
const SPOKEN_CHARACTERS: ReadonlyMap<string, string> = new Map([
  ...['TWO', 'THREE', 'FOUR', 'FIVE', 'SIX', 'SEVEN', 'EIGHT', 'NINE'].map(
    (word, i) => [word, String(i + 2)] as const,
  ),
  ...[
    'ALPHA',
    'ALFA',
    'BRAVO',
    'CHARLIE',
    'DELTA',
    'ECHO',
    'FOXTROT',
    'GOLF',
    'HOTEL',
    'INDIA',
    'JULIET',
    'JULIETT',
    'KILO',
    'LIMA',
    'MIKE',
    'NOVEMBER',
    'OSCAR',
    'PAPA',
    'QUEBEC',
    'ROMEO',
    'SIERRA',
    'TANGO',
    'UNIFORM',
    'VICTOR',
    'WHISKEY',
    'WHISKY',
    'XRAY',
    'YANKEE',
    'ZULU',
  ].map((word) => [word, word[0]!] as const),
]);

/** A reference as read: the code, and the prefix before it (null when none was given). */
export interface ReferenceReading {
  prefix: string | null;
  code: string;
}

/** "X-ray" or "X ray": the word XRAY, written in two. */
const X_RAY = /\bX[\s-]+RAY\b/g;

/** Words read as their letter, but that may also be a reference's own letters: "GOLF-2DSDKB". */
const WORD_OR_LETTERS = /\b[A-Z]{3,8}\b/g;
/** At most this many such words are also read as themselves: 16 readings. */
const WORDS_READ_BOTH_WAYS = 4;

/**
 * A reference as a caller says it or a person types it: any case, spaces anywhere, hyphens or the
 * word "dash" anywhere or nowhere ("nhc 2dsdkb", "N H C dash 2 D S D K B", "NHC2DSDKB", "2DS-DKB",
 * where the caller paused), digits as words and NATO letters ("two d s delta k b",
 * SPOKEN_CHARACTERS), with or without the prefix ("2DSDKB"). All of them are dropped: the code is
 * always the last REFERENCE_LENGTH characters, so the prefix is whatever comes before them; null when
 * nothing does (the organisation's own prefix is meant).
 */
export function readReference(input: string): ReferenceReading {
  return referenceReadings(input)[0]!;
}

/**
 * Every way `input` can be read (readReference's first): a spelling-alphabet word, digit word or
 * "dash" may also be the reference's own letters, as in a prefix GOLF, DASH or SEVEN, or a code
 * PAPA2X. The first reading reads every such word as its letter (or as nothing, "dash"); the others
 * read some as themselves, fewer before more. Only readings a reference could have are given after
 * the first: a prefix of at most 8 letters or digits and a code of the reference alphabet.
 */
export function referenceReadings(input: string): ReferenceReading[] {
  // The spelling alphabet's X is written "X-ray" as often as "Xray" (ICAO spells it so): one word,
  // which read as itself gives the same letters, hyphen or space dropped.
  const upper = input.toUpperCase().replace(X_RAY, 'XRAY');
  const words = [...upper.matchAll(WORD_OR_LETTERS)].filter(
    (match) => SPOKEN_CHARACTERS.has(match[0]) || match[0] === 'DASH',
  );
  const both = words.slice(0, WORDS_READ_BOTH_WAYS);
  // Each subset of the words read as themselves, by how many: the usual reading first.
  const subsets = Array.from({ length: 2 ** both.length }, (_, mask) => mask).sort(
    (a, b) => bitCount(a) - bitCount(b) || a - b,
  );
  const readings: ReferenceReading[] = [];
  const seen = new Set<string>();
  for (const mask of subsets) {
    const literal = new Set(both.filter((_, i) => mask & (2 ** i)).map((match) => match.index));
    const reading = readWords(upper, literal);
    const key = `${reading.prefix ?? ''}-${reading.code}`;
    if (seen.has(key) || (readings.length > 0 && !couldBeReference(reading))) continue;
    seen.add(key);
    readings.push(reading);
  }
  return readings;
}

/** `upper` read with the words at the offsets `literal` as themselves, every other word as its letter. */
function readWords(upper: string, literal: ReadonlySet<number | undefined>): ReferenceReading {
  const compact = upper
    .replace(WORD_OR_LETTERS, (word, offset: number) =>
      literal.has(offset) ? word : word === 'DASH' ? ' ' : (SPOKEN_CHARACTERS.get(word) ?? word),
    )
    .replace(/[^A-Z0-9]/g, '');
  if (compact.length <= REFERENCE_LENGTH) return { prefix: null, code: compact };
  return { prefix: compact.slice(0, -REFERENCE_LENGTH), code: compact.slice(-REFERENCE_LENGTH) };
}

const CODE = new RegExp(`^[${REFERENCE_ALPHABET}]{${REFERENCE_LENGTH}}$`);

function couldBeReference(reading: ReferenceReading): boolean {
  return CODE.test(reading.code) && (reading.prefix === null || reading.prefix.length <= 8);
}

function bitCount(mask: number): number {
  let count = 0;
  for (let rest = mask; rest > 0; rest >>= 1) count += rest & 1;
  return count;
}
