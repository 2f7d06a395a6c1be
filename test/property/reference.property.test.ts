import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REFERENCE_ALPHABET, REFERENCE_LENGTH, readReference } from '../../src/domain/booking/reference.ts';

/**
 * A booking reference as a caller reads it out, in every way the tools accept (design.md 8.2): any
 * case, spaces anywhere, the hyphen or the word "dash" or nothing between prefix and code, and the
 * code alone. Whatever the rendering, it reads back to the stored PREFIX-CODE (the organisation's
 * own prefix filling in a bare code).
 */
const prefix = fc.string({
  unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
  minLength: 1,
  maxLength: 8,
});
const code = fc.string({
  unit: fc.constantFrom(...REFERENCE_ALPHABET),
  minLength: REFERENCE_LENGTH,
  maxLength: REFERENCE_LENGTH,
});

type Rendering = (p: string, c: string) => string;
const spelled = (text: string) => text.split('').join(' ');
const RENDERINGS: Record<string, Rendering> = {
  stored: (p, c) => `${p}-${c}`,
  'lower case, space for the hyphen': (p, c) => `${p} ${c}`.toLowerCase(),
  'letter by letter, with "dash"': (p, c) => `${spelled(p)} dash ${spelled(c)}`,
  'letter by letter, "Dash" capitalised': (p, c) => `${spelled(p)} Dash ${spelled(c)}`,
  'run together': (p, c) => `${p}${c}`.toLowerCase(),
  'the code alone': (_p, c) => c,
  'the code alone, letter by letter': (_p, c) => spelled(c.toLowerCase()),
  'spaces around the hyphen': (p, c) => `  ${p} - ${c} `,
  'a hyphen inside the code': (p, c) => `${p}-${c.slice(0, 3)}-${c.slice(3)}`,
  'the code alone, a hyphen inside it': (_p, c) => `${c.slice(0, 3)}-${c.slice(3)}`,
  'a hyphen inside the code and none after the prefix': (p, c) => `${p}${c.slice(0, 2)}-${c.slice(2)}`,
  '"dash" twice': (p, c) => `${spelled(p)} dash ${spelled(c.slice(0, 3))} dash ${spelled(c.slice(3))}`,
};

describe('readReference', () => {
  it.each(Object.entries(RENDERINGS))('reads back a reference said %s', (_name, render) => {
    fc.assert(
      fc.property(prefix, code, (p, c) => {
        const read = readReference(render(p, c));
        expect(`${read.prefix ?? p}-${read.code}`).toBe(`${p}-${c}`);
      }),
    );
  });
});
