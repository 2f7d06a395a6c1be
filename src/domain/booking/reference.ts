import { randomInt } from 'node:crypto';

/**
 * Booking references are read aloud over the phone, so their alphabet leaves out the characters that
 * sound or look alike: no 0/O, no 1/I/L. 31 characters, 6 of them: about 887 million references per
 * prefix.
 */
export const REFERENCE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
const REFERENCE_LENGTH = 6;

export function generateReference(prefix: string, pick: (n: number) => number = randomInt): string {
  let code = '';
  for (let i = 0; i < REFERENCE_LENGTH; i++) code += REFERENCE_ALPHABET[pick(REFERENCE_ALPHABET.length)];
  return `${prefix}-${code}`;
}

/** References match case-insensitively and regardless of surrounding or inner spaces ("nhc - 7k3m9p"). */
export function normaliseReference(input: string): string {
  return input.toUpperCase().replace(/\s+/g, '');
}
