import { describe, expect, it } from 'vitest';
import type { DayHours } from '../../src/domain/availability/opening-hours.ts';
import { readSpokenStart, type StartContext, startFormProblem } from '../../src/mcp/spoken-starts.ts';

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
    // The hour in words, as callers say it: "at four", "at three thirty".
    expect(read('tomorrow at four', { openingHours: NINE_TO_SIX })).toEqual(
      startsAt('2026-11-24T16:00:00+00:00'),
    );
    expect(read('Thursday at three thirty', { openingHours: NINE_TO_SIX })).toEqual(
      startsAt('2026-11-26T15:30:00+00:00'),
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

  it('reads a repeated wall time by its zone abbreviation or "the first"/"the second", else asks which', () => {
    // London, 25 October 2026: 1:30 am BST (00:30Z), then 1:30 am GMT (01:30Z).
    expect(read('Sunday 25 October at 1:30 am BST')).toEqual(startsAt('2026-10-25T01:30:00+01:00'));
    expect(read('Sunday 25 October at 1:30 am GMT')).toEqual(startsAt('2026-10-25T01:30:00+00:00'));
    expect(read('Sunday 25 October at 1:30 am gmt+1')).toEqual(startsAt('2026-10-25T01:30:00+01:00'));
    // Said without which, the caller is asked, both instants named with their offsets (issue 44).
    expect(read('Sunday 25 October at 1:30 am')).toEqual({
      ok: false,
      reason:
        '1:30 am happens twice that night (the clocks go back); ask the caller which: 1:30 am BST ' +
        '(2026-10-25T01:30:00+01:00) or 1:30 am GMT (2026-10-25T01:30:00+00:00), and pass that one',
    });
    expect(read('Sunday 25 October at the second 1:30 am')).toEqual(startsAt('2026-10-25T01:30:00+00:00'));
    // Another zone's name is read on its own clock (see below), not as one of London's two.
    expect(read('Sunday 25 October at 1:30 am UTC-5')).toEqual(startsAt('2026-10-25T06:30:00+00:00'));
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

  it('reads a time said with another zone on that zone’s clock, told in the location’s time', () => {
    // Tuesday 24 November 2026: New York keeps EST (UTC-5), Los Angeles PST (UTC-8), Paris CET.
    expect(read('tomorrow at 3pm EST')).toEqual(startsAt('2026-11-24T20:00:00+00:00'));
    expect(read('3pm PST tomorrow')).toEqual(startsAt('2026-11-24T23:00:00+00:00'));
    expect(read('3pm EST tue')).toEqual(startsAt('2026-11-24T20:00:00+00:00'));
    // A short day or month after the time is the day, not a zone.
    expect(read('3pm tue')).toEqual(startsAt('2026-11-24T15:00:00+00:00'));
    expect(read('3pm dec 8')).toEqual(startsAt('2026-12-08T15:00:00+00:00'));
    expect(read('tomorrow at 3pm CET')).toEqual(startsAt('2026-11-24T14:00:00+00:00'));
    expect(read('tomorrow at 3pm JST')).toEqual(startsAt('2026-11-24T06:00:00+00:00'));
    expect(read('tomorrow at 10am UTC+1')).toEqual(startsAt('2026-11-24T09:00:00+00:00'));
    expect(read('tomorrow at 10am gmt-5:30')).toEqual(startsAt('2026-11-24T15:30:00+00:00'));
    // "PT" and "ET" are the regions' clocks, daylight saving time included (PDT in July).
    expect(read('tomorrow at 3pm PT')).toEqual(startsAt('2026-11-24T23:00:00+00:00'));
    expect(read('Thursday 1 July 2027 at 3pm PT')).toEqual(startsAt('2027-07-01T23:00:00+01:00'));
    // A bare hour on another zone's clock is not placed in the location's opening hours.
    expect(read('tomorrow at 3 EST', { openingHours: NINE_TO_SIX })).toEqual({
      ok: false,
      reason: 'ask the caller whether 3 is 3 am or 3 pm',
    });
    expect(read('tomorrow afternoon at 3 EST')).toEqual(startsAt('2026-11-24T20:00:00+00:00'));
    // In New York, EST is its own clock, and GMT another.
    const newYork: Partial<StartContext> = { zone: 'America/New_York', locale: 'en-US' };
    expect(read('tomorrow at 3pm EST', newYork)).toEqual(startsAt('2026-11-24T15:00:00-05:00'));
    expect(read('tomorrow at 3pm GMT', newYork)).toEqual(startsAt('2026-11-24T10:00:00-05:00'));
  });

  it('asks when a zone named could mean two clocks, and refuses a word that is no zone', () => {
    expect(read('Thursday 1 July 2027 at 3pm EST')).toEqual({
      ok: false,
      reason:
        'New York is on EDT, not EST, then; ask the caller whether they mean 3 pm EDT (8 pm in London) ' +
        'or 3 pm EST (9 pm in London)',
    });
    expect(read('tomorrow at 3pm BST')).toEqual({
      ok: false,
      reason:
        'London is on GMT, not BST, then; ask the caller whether they mean 3 pm GMT (3 pm in London) ' +
        'or 3 pm BST (2 pm in London)',
    });
    // The fuzzed case: CET on the night the clocks go back in London (and in Paris, an hour later).
    expect(read('31 October 2027 at 1:30 am CET')).toEqual({
      ok: false,
      reason:
        'Paris is on CEST, not CET, then; ask the caller whether they mean 1:30 am CEST (12:30 am in London) ' +
        'or 1:30 am CET (1:30 am BST in London)',
    });
    expect(read('tomorrow at 3pm IST')).toEqual({
      ok: false,
      reason: 'IST could be the time in India, Ireland or Israel; ask the caller for the time in London',
    });
    expect(read('tomorrow at 3pm xyz')).toEqual({
      ok: false,
      reason:
        '"xyz" after the time is not a time zone this reads; ask the caller for the time in London ' +
        '(or name a zone such as EST or UTC+1)',
    });
    expect(read('tomorrow at 3pm utc+15')).toMatchObject({ ok: false });
  });

  it('reads a word after the time that names no zone as the day’s, as before zones were read', () => {
    // Monday 23 November 2026, 09:00 in London.
    expect(read('3pm today')).toEqual(startsAt('2026-11-23T15:00:00+00:00'));
    expect(read('at 3pm today')).toEqual(startsAt('2026-11-23T15:00:00+00:00'));
    expect(read('noon today')).toEqual(startsAt('2026-11-23T12:00:00+00:00'));
    expect(read('2:30 pm today')).toEqual(startsAt('2026-11-23T14:30:00+00:00'));
    expect(read('3pm sharp')).toEqual(startsAt('2026-11-23T15:00:00+00:00'));
    expect(read('tomorrow at 3pm sharp')).toEqual(startsAt('2026-11-24T15:00:00+00:00'));
    expect(read('3pm sharp tomorrow')).toEqual(startsAt('2026-11-24T15:00:00+00:00'));
    expect(read('3pm tomorrow')).toEqual(startsAt('2026-11-24T15:00:00+00:00'));
    expect(read('3pm tonight')).toEqual(startsAt('2026-11-23T15:00:00+00:00'));
    expect(read('3pm on Friday')).toEqual(startsAt('2026-11-27T15:00:00+00:00'));
    expect(read('3pm friday')).toEqual(startsAt('2026-11-27T15:00:00+00:00'));
    // A month of five letters or fewer was taken for a zone (before zones were read, too).
    expect(read('3pm march 3')).toEqual(startsAt('2027-03-03T15:00:00+00:00'));
    expect(read('3pm june 3')).toEqual(startsAt('2027-06-03T15:00:00+01:00'));
    expect(read('3pm EST march 3')).toEqual(startsAt('2027-03-03T20:00:00+00:00'));
    // A word that is neither a zone nor a day is still refused as no zone (tested above with "xyz").
    expect(read('3pm xyz')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^"xyz" after the time/),
    });
  });

  it('refuses a time the clocks skip said with the location’s own names, not moving it', () => {
    expect(read('28 March 2027 at 1:30 am BST')).toEqual({
      ok: false,
      reason:
        '28 March 2027 at 1:30 am BST does not exist in Europe/London (the clocks go forward from 1 am to 2 am); ask the caller for another time',
    });
    expect(read('28 March 2027 at 1:30 am GMT')).toEqual({
      ok: false,
      reason:
        '28 March 2027 at 1:30 am GMT does not exist in Europe/London (the clocks go forward from 1 am to 2 am); ask the caller for another time',
    });
    const newYork: Partial<StartContext> = { zone: 'America/New_York', locale: 'en-US' };
    expect(read('March 14 2027 at 2:30 am EDT', newYork)).toEqual({
      ok: false,
      reason:
        'March 14 2027 at 2:30 am EDT does not exist in America/New_York (the clocks go forward from 2 AM to 3 AM); ask the caller for another time',
    });
    expect(read('March 14 2027 at 2:30 am EST', newYork)).toMatchObject({ ok: false });
    // Another zone's name is still read on its own clock: 1:30 am CET is 00:30 GMT.
    expect(read('28 March 2027 at 1:30 am CET')).toEqual(startsAt('2027-03-28T00:30:00+00:00'));
  });

  it('asks about abbreviations that name different zones around the world', () => {
    const sydney: Partial<StartContext> = { zone: 'Australia/Sydney', locale: 'en-GB' };
    expect(read('tomorrow at 3pm EST', sydney)).toEqual({
      ok: false,
      reason: "EST could be Sydney's AEST or the time in New York; ask the caller for the time in Sydney",
    });
    expect(read('tomorrow at 3pm CST', { zone: 'Australia/Adelaide', locale: 'en-GB' })).toEqual({
      ok: false,
      reason: "CST could be Adelaide's ACST or the time in Chicago; ask the caller for the time in Adelaide",
    });
    expect(read('tomorrow at 3pm WST', { zone: 'Australia/Perth', locale: 'en-GB' })).toEqual({
      ok: false,
      reason: "WST could be Perth's AWST; ask the caller for the time in Perth",
    });
    expect(read('tomorrow at 3pm CST')).toEqual({
      ok: false,
      reason: 'CST could be the time in China, the central US or Cuba; ask the caller for the time in London',
    });
    expect(read('tomorrow at 3pm AST')).toEqual({
      ok: false,
      reason: 'AST could be the time in Arabia or the Atlantic; ask the caller for the time in London',
    });
    expect(read('tomorrow at 3pm GST')).toEqual({
      ok: false,
      reason: 'GST could be the time in the Gulf or South Georgia; ask the caller for the time in London',
    });
    // A location's own name keeps its meaning: CST in Chicago, EST in London is still New York's.
    const chicago: Partial<StartContext> = { zone: 'America/Chicago', locale: 'en-US' };
    expect(read('tomorrow at 3pm CST', chicago)).toEqual(startsAt('2026-11-24T15:00:00-06:00'));
    expect(read('Thursday 1 July 2027 at 3pm CST', chicago)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^Chicago is on CDT, not CST, then/),
    });
    expect(read('tomorrow at 3pm EST')).toEqual(startsAt('2026-11-24T20:00:00+00:00'));
    expect(read('tomorrow at 3pm AEDT', sydney)).toEqual(startsAt('2026-11-24T15:00:00+11:00'));
  });

  it('writes a start of long ago with whole minutes of offset, and refuses one past the year 9999', () => {
    // London kept local mean time (-0:01:15) until 1847: the instant is kept, written at -00:01.
    expect(read('0001-01-01T10:00:00+00:00')).toEqual(startsAt('0001-01-01T09:59:00-00:01'));
    expect(read('9999-12-31T23:30:00-05:00')).toEqual({
      ok: false,
      reason:
        '9999-12-31T23:30:00-05:00 is not a date the booking system can take; ask the caller for the date again',
    });
  });

  it('refuses a time the clocks skip, a span, a day without a time and words it cannot read', () => {
    expect(read('Sunday 28 March at 1:30 am')).toEqual({
      ok: false,
      reason:
        'Sunday 28 March at 1:30 am does not exist in Europe/London (the clocks go forward from 1 am to 2 am); ask the caller for another time',
    });
    // Lord Howe's clocks go forward half an hour; a time in another zone's gap says that zone's change.
    const lordHowe: Partial<StartContext> = { zone: 'Australia/Lord_Howe', locale: 'en-GB' };
    expect(read('4 October 2026 at 2:15 am', lordHowe)).toEqual({
      ok: false,
      reason:
        '4 October 2026 at 2:15 am does not exist in Australia/Lord_Howe (the clocks go forward from 2 am to 2:30 am); ask the caller for another time',
    });
    expect(read('March 14 2027 at 2:30 am ET')).toEqual({
      ok: false,
      reason:
        '2:30 am ET does not exist that day (the clocks go forward from 2 am to 3 am); ask the caller for another time',
    });
    expect(read('2027-03-28T01:30')).toMatchObject({ ok: false });
    expect(read('next week at 2pm')).toEqual({
      ok: false,
      reason: 'name one day for the start, not a span of days',
      form: true,
    });
    expect(read('Tuesday 8 December')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^give starts_at/),
    });
    // "half four" is 4:30 (issue 44): without opening hours, am or pm is asked about.
    expect(read('half four')).toMatchObject({
      ok: false,
      reason: 'ask the caller whether 4:30 is 4:30 am or 4:30 pm',
    });
    expect(read('quarter to')).toMatchObject({ ok: false, reason: expect.stringMatching(/^give starts_at/) });
    expect(read('Monday 8 December at 2 pm')).toEqual({
      ok: false,
      reason: 'Tuesday 8 December is not a Monday; ask the caller which they mean',
    });
  });
});

describe('startFormProblem: words no location reads as a start', () => {
  it('refuses them in the words readSpokenStart uses, and nothing a location might read', () => {
    expect(startFormProblem('whenever suits')).toMatch(/^give starts_at as find_slots returned it/);
    expect(startFormProblem('next week at 2pm')).toBe('name one day for the start, not a span of days');
    expect(startFormProblem('the 45th at 2pm')).toBe('the 45th is not a real date');
    for (const said of ['tomorrow at 2:30', 'Monday 8 December at 2 pm', '2026-11-24T14:30', '3pm EST']) {
      expect(startFormProblem(said), said).toBeUndefined();
    }
  });
});
