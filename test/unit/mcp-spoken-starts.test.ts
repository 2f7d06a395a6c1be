import { describe, expect, it } from 'vitest';
import type { DayHours } from '../../src/domain/availability/opening-hours.ts';
import { readSpokenStart, type StartContext } from '../../src/mcp/spoken-starts.ts';

/** Monday 23 November 2026, 09:00 in London. */
const MONDAY = Date.parse('2026-11-23T09:00:00Z');
const LONDON: StartContext = { zone: 'Europe/London', locale: 'en-GB', now: MONDAY };
const NINE_TO_SIX: DayHours[] = (['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const).map(
  (weekday) => ({
    weekday,
    intervals: weekday === 'sun' ? [] : [{ start: '09:00', end: '18:00' }],
  }),
);

const read = (said: string, context: Partial<StartContext> = {}) =>
  readSpokenStart(said, { ...LONDON, ...context });
const startsAt = (iso: string) => ({ ok: true, startsAt: iso });

describe('readSpokenStart', () => {
  it('takes find_slots’ ISO form with any offset, and a local ISO time read in the zone', () => {
    expect(read('2026-11-24T14:30:00+00:00')).toEqual(startsAt('2026-11-24T14:30:00+00:00'));
    expect(read('2026-11-24T09:30:00-05:00')).toEqual(startsAt('2026-11-24T14:30:00+00:00'));
    expect(read('2026-07-24T14:30')).toEqual(startsAt('2026-07-24T14:30:00+01:00'));
    expect(read('2026-11-24T14:30:00')).toEqual(startsAt('2026-11-24T14:30:00+00:00'));
  });

  it('reads the tools’ own wording of a slot', () => {
    expect(read('tomorrow, Tuesday 24 November at 2:30 pm')).toEqual(startsAt('2026-11-24T14:30:00+00:00'));
    expect(read('Tuesday 8 December at 2:30 pm')).toEqual(startsAt('2026-12-08T14:30:00+00:00'));
    expect(read('today, Monday 23 November at noon')).toEqual(startsAt('2026-11-23T12:00:00+00:00'));
    expect(read('Tuesday 1 June 2027 at 9 am')).toEqual(startsAt('2027-06-01T09:00:00+01:00'));
    expect(read('Saturday 5 December at midnight')).toEqual(startsAt('2026-12-05T00:00:00+00:00'));
    const newYork: Partial<StartContext> = { zone: 'America/New_York', locale: 'en-US' };
    expect(read('tomorrow, Tuesday, November 24 at 2:30 PM', newYork)).toEqual(
      startsAt('2026-11-24T14:30:00-05:00'),
    );
    expect(read('Tuesday, June 1, 2027 at 1 PM', newYork)).toEqual(startsAt('2027-06-01T13:00:00-04:00'));
  });

  it('reads what callers and agents say: "tomorrow at noon", "2:30 pm tomorrow", "8/12 at 10am"', () => {
    expect(read('tomorrow at noon')).toEqual(startsAt('2026-11-24T12:00:00+00:00'));
    expect(read('2:30 pm tomorrow')).toEqual(startsAt('2026-11-24T14:30:00+00:00'));
    expect(read('at 3pm on Friday')).toEqual(startsAt('2026-11-27T15:00:00+00:00'));
    expect(read('8/12 at 10am')).toEqual(startsAt('2026-12-08T10:00:00+00:00'));
    expect(read('8/12 at 10am', { locale: 'en-US', zone: 'America/New_York' })).toEqual(
      startsAt('2027-08-12T10:00:00-04:00'),
    );
    expect(read('the 8th at 14:30')).toEqual(startsAt('2026-12-08T14:30:00+00:00'));
    expect(read('4:15 pm')).toEqual(startsAt('2026-11-23T16:15:00+00:00'));
    expect(read('Tuesday week at 11.15 a.m.')).toEqual(startsAt('2026-12-01T11:15:00+00:00'));
  });

  it('places an hour without am/pm by a part of the day said, or inside the opening hours', () => {
    expect(read('tomorrow afternoon at 2:30')).toEqual(startsAt('2026-11-24T14:30:00+00:00'));
    expect(read('tomorrow at 2:30', { openingHours: NINE_TO_SIX })).toEqual(
      startsAt('2026-11-24T14:30:00+00:00'),
    );
    expect(read('tomorrow at 10', { openingHours: NINE_TO_SIX })).toEqual(
      startsAt('2026-11-24T10:00:00+00:00'),
    );
    expect(read("friday at 4 o'clock", { openingHours: NINE_TO_SIX })).toEqual(
      startsAt('2026-11-27T16:00:00+00:00'),
    );
  });

  it('asks am or pm when nothing places the hour, saying when the opening hours might', () => {
    expect(read('tomorrow at 2:30')).toEqual({
      ok: false,
      reason: 'ask the caller whether 2:30 is 2:30 am or 2:30 pm',
      needsOpeningHours: true,
    });
    const longHours = NINE_TO_SIX.map((day) => ({ ...day, intervals: [{ start: '07:00', end: '21:00' }] }));
    expect(read('tomorrow at 8', { openingHours: longHours })).toEqual({
      ok: false,
      reason: 'ask the caller whether 8 is 8 am or 8 pm',
    });
  });

  it('reads a repeated wall time by its zone abbreviation or "the first"/"the second", else the first', () => {
    // London, 25 October 2026: 1:30 am BST (00:30Z), then 1:30 am GMT (01:30Z).
    expect(read('Sunday 25 October at 1:30 am BST')).toEqual(startsAt('2026-10-25T01:30:00+01:00'));
    expect(read('Sunday 25 October at 1:30 am GMT')).toEqual(startsAt('2026-10-25T01:30:00+00:00'));
    expect(read('Sunday 25 October at 1:30 am gmt+1')).toEqual(startsAt('2026-10-25T01:30:00+01:00'));
    expect(read('Sunday 25 October at 1:30 am')).toEqual(startsAt('2026-10-25T01:30:00+01:00'));
    expect(read('Sunday 25 October at the second 1:30 am')).toEqual(startsAt('2026-10-25T01:30:00+00:00'));
    expect(read('Sunday 25 October at 1:30 am CET')).toEqual({
      ok: false,
      reason: 'Sunday 25 October at 1:30 am CET happens twice that night; ask the caller: BST or GMT',
    });
    // Santiago, 3 April 2027: 11:30 pm at -03:00, then again at -04:00.
    const santiago: Partial<StartContext> = { zone: 'America/Santiago', now: MONDAY };
    expect(read('Saturday 3 April at the first 11:30 pm', santiago)).toEqual(
      startsAt('2027-04-03T23:30:00-03:00'),
    );
    expect(read('Saturday 3 April at the second 11:30 pm', santiago)).toEqual(
      startsAt('2027-04-03T23:30:00-04:00'),
    );
    // An abbreviation for a time that happens once is not needed, and not held against it.
    expect(read('tomorrow at 2:30 pm GMT')).toEqual(startsAt('2026-11-24T14:30:00+00:00'));
  });

  it('refuses a time the clocks skip, a span, a day without a time and words it cannot read', () => {
    expect(read('Sunday 28 March at 1:30 am')).toEqual({
      ok: false,
      reason: 'Sunday 28 March at 1:30 am does not exist in Europe/London (the clocks go forward then)',
    });
    expect(read('2027-03-28T01:30')).toMatchObject({ ok: false });
    expect(read('next week at 2pm')).toEqual({
      ok: false,
      reason: 'name one day for the start, not a span of days',
    });
    expect(read('Tuesday 8 December')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^give starts_at/),
    });
    expect(read('half four')).toMatchObject({ ok: false, reason: expect.stringMatching(/^give starts_at/) });
    expect(read('Monday 8 December at 2 pm')).toEqual({
      ok: false,
      reason: 'Tuesday 8 December is not a Monday; ask the caller which they mean',
    });
  });
});
