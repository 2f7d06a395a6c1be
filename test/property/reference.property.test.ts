import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  REFERENCE_ALPHABET,
  REFERENCE_LENGTH,
  readReference,
  referenceReadings,
} from '../../src/domain/booking/reference.ts';

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
        const said = render(p, c);
        // A prefix or code that is itself a spelling word ("SIX-222222", "X-RAY-ABC") reads first as
        // its letters: such inputs are the next block's, which checks every reading.
        fc.pre(referenceReadings(said).length === 1);
        const read = readReference(said);
        expect(`${read.prefix ?? p}-${read.code}`).toBe(`${p}-${c}`);
      }),
    );
  });
});

/** Prefixes and codes that are words a caller also spells with ("golf" for G, "seven" for 7). */
const wordPrefix = fc.oneof(
  prefix,
  fc.constantFrom('GOLF', 'DASH', 'PAPA', 'SEVEN', 'ECHO', 'XRAY', 'TWO', 'NOVEMBER'),
);
const wordCode = fc.oneof(code, fc.constantFrom('PAPA2X', 'XRAY23', '7THREE', 'SEVEN9', 'QUEBEC'));

describe('referenceReadings', () => {
  it.each(Object.entries(RENDERINGS))(
    'has the reference among its readings when its prefix or code is a spelling word, said %s',
    (_name, render) => {
      fc.assert(
        fc.property(wordPrefix, wordCode, (p, c) => {
          const readings = referenceReadings(render(p, c));
          expect(readings.map((r) => `${r.prefix ?? p}-${r.code}`)).toContain(`${p}-${c}`);
          const distinct = new Set(readings.map((r) => `${r.prefix}-${r.code}`));
          expect(distinct.size).toBe(readings.length);
        }),
      );
    },
  );

  it('reads the words as letters first, then as themselves', () => {
    expect(referenceReadings('golf dash two d s delta k b')).toEqual([
      { prefix: 'G', code: '2DSDKB' },
      { prefix: 'GOLF', code: '2DSDKB' },
      { prefix: 'GDASH', code: '2DSDKB' },
      { prefix: 'GOLFDASH', code: '2DSDKB' },
    ]);
    expect(referenceReadings('NHC-2DSDKB')).toEqual([{ prefix: 'NHC', code: '2DSDKB' }]);
  });
});
