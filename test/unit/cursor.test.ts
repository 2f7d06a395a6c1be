import { describe, expect, it } from 'vitest';
import { isNameKey } from '../../src/domain/catalogue.ts';
import { CURSOR_TTL_MS, CursorCodec } from '../../src/http/cursor.ts';

const now = Date.parse('2026-11-23T09:00:00Z');
const codec = new CursorCodec('secret-1');

describe('CursorCodec', () => {
  it('round-trips a position for the same listing within the hour', () => {
    const cursor = codec.encode('org:services:loc', { name: 'Cut', id: 'x' }, now);
    expect(codec.decode('org:services:loc', cursor, now + CURSOR_TTL_MS - 1, isNameKey)).toEqual({
      name: 'Cut',
      id: 'x',
    });
  });

  it.each([
    ['expired', (c: string) => c, 'org:services:loc', now + CURSOR_TTL_MS],
    ['for another listing', (c: string) => c, 'org:staff:loc', now],
    [
      'signed with another secret',
      (c: string) =>
        new CursorCodec('secret-2').encode('org:services:loc', { name: 'Cut', id: 'x' }, now) ?? c,
      'org:services:loc',
      now,
    ],
    ['truncated', (c: string) => c.slice(0, 10), 'org:services:loc', now],
    ['with an extra part', (c: string) => `${c}.x`, 'org:services:loc', now],
  ])('refuses a cursor %s', (_, mutate, listing, at) => {
    const cursor = mutate(codec.encode('org:services:loc', { name: 'Cut', id: 'x' }, now));
    expect(() => codec.decode(listing, cursor, at, isNameKey)).toThrow(
      expect.objectContaining({ code: 'invalid_request', param: 'cursor' }),
    );
  });

  it('refuses a signed payload of the wrong shape', () => {
    const cursor = codec.encode('l', { name: 5 }, now);
    expect(() => codec.decode('l', cursor, now, isNameKey)).toThrow(
      expect.objectContaining({ param: 'cursor' }),
    );
  });

  it('seals a position: round-trips it, yet the cursor read by its holder does not show it', () => {
    const isNumber = (value: unknown): value is number => typeof value === 'number';
    const cursor = codec.encodeSealed('org:deliveries:e', 4242, now);
    expect(codec.decodeSealed('org:deliveries:e', cursor, now, isNumber)).toBe(4242);
    expect(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()).not.toContain('4242');
    // An unsealed cursor is not taken for a sealed one.
    expect(() => codec.decodeSealed('l', codec.encode('l', 'abc', now), now, isNumber)).toThrow(
      expect.objectContaining({ code: 'invalid_request', param: 'cursor' }),
    );
  });
});
