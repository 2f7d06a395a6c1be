import { describe, expect, it } from 'vitest';
import { AnswerCache, answerBytes, type Entry, type Versions } from '../../src/app/availability-cache.ts';
import type { Location } from '../../src/domain/catalogue.ts';

/** A cached answer of `organisationId` with `slots` slots (the cache looks at nothing else). */
function entry(organisationId: string, slots: number): Entry {
  const availability = {
    services: [],
    totalMinutes: 30,
    slots: Array.from({ length: slots }, (_, i) => ({ startsAt: i, endsAt: i + 1, staffId: 's' })),
    closedDays: [],
  };
  return {
    location: { organisationId } as Location,
    availability,
    from: 0,
    until: 1,
    bytes: answerBytes(availability),
  };
}

const v = (catalogueVersion: number, bookingsVersion: number): Versions => ({
  catalogueVersion,
  bookingsVersion,
});

describe('the availability answer cache', () => {
  it('holds at most maxEntries answers, the oldest going first', () => {
    const cache = new AnswerCache({ maxEntries: 3, maxBytes: 2 ** 30 });
    for (let i = 0; i < 10; i += 1) cache.set('org', v(1, 1), `ask-${i}`, entry('org', 1));
    expect(cache.size).toBe(3);
    expect(cache.get('ask-6')).toBeUndefined();
    expect(['ask-7', 'ask-8', 'ask-9'].every((key) => cache.get(key))).toBe(true);
  });

  it('holds at most maxBytes of answers, whatever their number', () => {
    const maxBytes = 10 * answerBytes(entry('org', 100).availability);
    const cache = new AnswerCache({ maxEntries: 1_000, maxBytes });
    for (let i = 0; i < 200; i += 1) {
      cache.set('org', v(1, 1), `ask-${i}`, entry('org', i % 3 === 0 ? 300 : 100));
      expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(cache.size).toBeGreaterThan(2);
    expect(cache.get('ask-199')).toBeDefined();
    // An answer larger than the whole bound is not kept (and evicts nothing).
    cache.set('org', v(1, 1), 'huge', entry('org', 100_000));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('ask-199')).toBeDefined();
  });

  it("drops an organisation's answers once newer versions are seen, and keeps none of older ones", () => {
    const cache = new AnswerCache({ maxEntries: 100, maxBytes: 2 ** 30 });
    cache.set('a', v(1, 1), 'a-1', entry('a', 10));
    cache.set('a', v(1, 1), 'a-2', entry('a', 10));
    cache.set('b', v(1, 1), 'b-1', entry('b', 10));
    cache.set('a', v(1, 2), 'a-3', entry('a', 10));
    expect([cache.get('a-1'), cache.get('a-2')]).toEqual([undefined, undefined]);
    expect(cache.get('a-3')).toBeDefined();
    expect(cache.get('b-1')).toBeDefined();
    // A read that began before the change finishes after it: its answer is not kept.
    cache.set('a', v(1, 1), 'a-late', entry('a', 10));
    expect(cache.get('a-late')).toBeUndefined();
    cache.set('a', v(2, 2), 'a-4', entry('a', 10));
    expect(cache.get('a-3')).toBeUndefined();
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBe(2 * answerBytes(entry('a', 10).availability));
  });
});
