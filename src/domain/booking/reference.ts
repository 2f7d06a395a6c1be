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
