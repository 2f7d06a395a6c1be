import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/app/clock.ts';
import { timeOrderedId } from '../../src/app/time-ordered-id.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The milliseconds an id carries. */
const msOf = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('timeOrderedId', () => {
  it('makes UUIDs version 7 carrying the system clock, each greater than the last', () => {
    const before = Date.now();
    const ids = Array.from({ length: 20_000 }, () => timeOrderedId());
    for (const id of ids) expect(id).toMatch(UUID_V7);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(msOf(ids[0]!)).toBeGreaterThanOrEqual(before);
    expect(new Set(ids).size).toBe(ids.length);
  });

  // Two waitlist entries joined in one millisecond (or under a stopped clock) are listed in the
  // order they were made: by time, then by id.
  it('keeps counting in a millisecond that does not move, and when the clock steps back', () => {
    // The present, not a date to come: the ids made after this test (the module is shared by the
    // test files of a worker) must not carry a future millisecond.
    const stopped = Date.now() + 5;
    const now = vi.spyOn(systemClock, 'nowMs').mockReturnValue(stopped);
    const still = Array.from({ length: 5_000 }, () => timeOrderedId());
    now.mockReturnValue(stopped - 3_600_000);
    const afterStepBack = Array.from({ length: 10 }, () => timeOrderedId());
    const ids = [...still, ...afterStepBack];
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    // 4,096 in the millisecond itself, then the next one's: never below the last id made.
    expect(msOf(still[4_095]!)).toBe(stopped);
    expect(msOf(still[4_096]!)).toBe(stopped + 1);
    expect(msOf(afterStepBack[9]!)).toBe(stopped + 1);
  });
});
