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

/**
 * A reference as a caller says it or a person types it: any case, spaces anywhere, hyphens or the
 * word "dash" anywhere or nowhere ("nhc 2dsdkb", "N H C dash 2 D S D K B", "NHC2DSDKB", "2DS-DKB",
 * where the caller paused), digits as words and NATO letters ("two d s delta k b",
 * SPOKEN_CHARACTERS), with or without the prefix ("2DSDKB"). All of them are dropped: the code is
 * always the last REFERENCE_LENGTH characters, so the prefix is whatever comes before them; null when
 * nothing does (the organisation's own prefix is meant).
 */
export function readReference(input: string): { prefix: string | null; code: string } {
  const compact = input
    .toUpperCase()
    .replace(/\b[A-Z]{3,8}\b/g, (word) => SPOKEN_CHARACTERS.get(word) ?? word)
    .replace(/\bDASH\b/g, '')
    .replace(/[^A-Z0-9]/g, '');
  if (compact.length <= REFERENCE_LENGTH) return { prefix: null, code: compact };
  return { prefix: compact.slice(0, -REFERENCE_LENGTH), code: compact.slice(-REFERENCE_LENGTH) };
}
