import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addDays,
  isCalendarDate,
  searchWindow,
  wallMidnightOf,
} from '../../src/domain/availability/zone-calendar.ts';
import { formatLocal, localDateAt } from '../../src/domain/time-format.ts';
import {
  bookableDays,
  daysUpTo,
  lastBookableDate,
  minutesWindow,
  readTimeArguments,
  searchableDays,
} from '../../src/mcp/slot-window.ts';
import { speakDate, speakNotice, speakOnDate } from '../../src/mcp/speech.ts';
import { resolveSpokenDate } from '../../src/mcp/spoken-dates.ts';
import { failure } from '../../src/mcp/tool-kit.ts';

/**
 * Dates at the ends of the calendar the engine writes (YYYY-MM-DD: 0000-01-01 to 9999-12-31), the
 * days find_slots can search, and the words around them. Monday 23 November 2026, 09:00 in London.
 */
const MONDAY = Date.parse('2026-11-23T09:00:00Z');

describe('calendar dates of the years 0 to 99 and up to 9999', () => {
  it('are real dates exactly when Date keeps them as written (no roll-over into the next month)', () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const written = fc
      .tuple(fc.integer({ min: 0, max: 9999 }), two(13), two(32))
      .map(([year, month, day]) => `${String(year).padStart(4, '0')}-${month}-${day}`);
    fc.assert(
      fc.property(written, (date) => {
        const month = Number(date.slice(5, 7));
        const day = Number(date.slice(8, 10));
        const keptAsWritten = month >= 1 && month <= 12 && day >= 1 && addDays(date, 0) === date;
        expect(isCalendarDate(date)).toBe(keptAsWritten);
      }),
      { numRuns: 5000 },
    );
    for (const date of ['2024-02-29', '2000-02-29', '0000-02-29', '9999-12-31'])
      expect(isCalendarDate(date)).toBe(true);
    for (const date of [
      '2026-02-29',
      '1900-02-29',
      '2026-04-31',
      '2026-13-01',
      '2026-00-10',
      '26-1-1',
      '2026-1-01',
    ])
      expect(isCalendarDate(date)).toBe(false);
  });

  it('are the years written, not 1900-1999 (Date.UTC’s reading)', () => {
    expect(new Date(wallMidnightOf('0001-01-01')).toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(new Date(wallMidnightOf('0099-12-31')).toISOString()).toBe('0099-12-31T00:00:00.000Z');
    expect(addDays('0099-12-31', 1)).toBe('0100-01-01');
    expect(addDays('0000-02-28', 1)).toBe('0000-02-29');
    expect(addDays('9999-12-30', 1)).toBe('9999-12-31');
  });

  it('give a search of the last days a window of real instants (it was NaN, which PostgreSQL refuses)', () => {
    const window = searchWindow('9999-12-31', 14);
    expect(new Date(window.start).toISOString()).toBe('9999-12-29T00:00:00.000Z');
    expect(new Date(window.end).toISOString()).toBe('+010000-01-16T00:00:00.000Z');
    expect(searchWindow('2026-11-23', 1)).toEqual({
      start: Date.parse('2026-11-21T00:00:00Z'),
      end: Date.parse('2026-11-26T00:00:00Z'),
    });
  });

  it('are said with their weekday, a year before 1000 as written', () => {
    expect(speakDate('0001-01-01', 'en-GB', '2026-11-23')).toBe('Monday 1 January 0001');
    expect(speakDate('0099-12-31', 'en-US', '2026-11-23')).toBe('Thursday, December 31, 0099');
    expect(speakDate('9999-12-31', 'en-GB', '2026-11-23')).toBe('Friday 31 December 9999');
  });

  it('are read as dates, and nothing past 9999-12-31 is made from words', () => {
    const london = (text: string) => resolveSpokenDate(text, 'Europe/London', MONDAY);
    expect(london('0001-01-01')).toEqual({ ok: true, date: '0001-01-01' });
    expect(london('9999-12-31')).toEqual({ ok: true, date: '9999-12-31' });
    expect(london('a week on 9999-12-31')).toEqual({
      ok: false,
      reason: 'a week on 9999-12-31 is beyond the year 9999; ask the caller for the date again',
    });
    expect(london('in 3000000 days')).toMatchObject({ ok: false });
  });

  it('write an instant of local mean time with the whole minutes of its offset, naming the same instant', () => {
    // London was 1 minute 15 seconds behind Greenwich until 1847.
    const instant = Date.parse('0001-01-01T10:00:00Z');
    expect(formatLocal(instant, 'Europe/London')).toBe('0001-01-01T09:59:00-00:01');
    expect(Date.parse(formatLocal(instant, 'Europe/London'))).toBe(instant);
    expect(formatLocal(Date.parse('1800-06-01T12:00:00Z'), 'Asia/Kathmandu')).toBe(
      '1800-06-01T17:41:00+05:41',
    );
    expect(localDateAt(Date.parse('0001-01-01T00:00:30Z'), 'Europe/London')).toBe('0000-12-31');
  });
});

describe('the days find_slots searches', () => {
  it('start today when the days asked for started earlier, and are all passed when they ended', () => {
    expect(searchableDays('2026-11-24', 3, '2026-11-23')).toEqual({
      from: '2026-11-24',
      days: 3,
      passed: false,
    });
    expect(searchableDays('2026-11-20', 7, '2026-11-23')).toEqual({
      from: '2026-11-23',
      days: 4,
      passed: false,
    });
    expect(searchableDays('2026-11-22', 1, '2026-11-23')).toEqual({
      from: '2026-11-22',
      days: 1,
      passed: true,
    });
    expect(searchableDays('0001-01-01', 14, '2026-11-23')).toEqual({
      from: '0001-01-01',
      days: 14,
      passed: true,
    });
  });

  it('stop at 9999-12-31', () => {
    expect(daysUpTo('9999-12-30', 3)).toBe(2);
    expect(daysUpTo('9999-12-31', 14)).toBe(1);
    expect(searchableDays('9999-12-30', 3, '2026-11-23')).toEqual({
      from: '9999-12-30',
      days: 2,
      passed: false,
    });
    expect(lastBookableDate('2026-11-23', 90)).toBe('2027-02-21');
    expect(lastBookableDate('9999-12-01', 90)).toBe('9999-12-31');
  });

  it('are bookable up to the last date the location takes bookings for', () => {
    const last = '2027-02-21';
    expect(bookableDays({ from: '2027-02-25', days: 1 }, last)).toEqual({ tooFarAhead: true });
    expect(bookableDays({ from: '2027-02-20', days: 7 }, last)).toEqual({
      tooFarAhead: false,
      days: 2,
      cut: true,
    });
    expect(bookableDays({ from: '2027-02-21', days: 1 }, last)).toEqual({
      tooFarAhead: false,
      days: 1,
      cut: false,
    });
  });

  it('run until the end of the day when the latest start is midnight', () => {
    for (const latest of ['midnight', '00:00', '12am', '12 midnight', '0:00']) {
      expect(minutesWindow(readTimeArguments(undefined, undefined, latest), [], 'en-GB'), latest).toEqual({
        from: 0,
        to: 1439,
      });
    }
    expect(minutesWindow(readTimeArguments('evening', '8pm', 'midnight'), [], 'en-GB')).toEqual({
      from: 1200,
      to: 1439,
    });
    // Midnight as the earliest start is the start of the day, as before.
    expect(minutesWindow(readTimeArguments(undefined, 'midnight', '2pm'), [], 'en-GB')).toEqual({
      from: 0,
      to: 840,
    });
  });
});

describe('words around dates', () => {
  it('put "on" before a date, but not before "today" or "tomorrow"', () => {
    expect(speakOnDate('2026-11-24', 'en-GB', '2026-11-23')).toBe('tomorrow, Tuesday 24 November');
    expect(speakOnDate('2026-11-23', 'en-US', '2026-11-23')).toBe('today, Monday, November 23');
    expect(speakOnDate('2026-11-26', 'en-GB', '2026-11-23')).toBe('on Thursday 26 November');
    expect(speakDate('2026-11-24', 'en-GB', '2026-11-23', { relative: false })).toBe('Tuesday 24 November');
  });

  it('say notice with the possessive: "1 hour’s notice", "2 hours’ notice"', () => {
    expect(speakNotice(60)).toBe("1 hour's notice");
    expect(speakNotice(120)).toBe("2 hours' notice");
    expect(speakNotice(45)).toBe("45 minutes' notice");
    expect(speakNotice(1)).toBe("1 minute's notice");
    expect(speakNotice(90)).toBe("1 hour 30 minutes' notice");
    expect(speakNotice(61)).toBe("1 hour 1 minute's notice");
    expect(speakNotice(0)).toBe('no notice');
  });
});

describe('find_slots’ hints for days that cannot be booked', () => {
  it('say a day gone by has passed, with or without free times to offer', () => {
    expect(failure('days_passed', { days: 'Sunday 22 November', count: 1, alternatives: 5 }).hint).toBe(
      'Sunday 22 November has already passed; offer the nearest free times in alternatives, or ask for another day.',
    );
    expect(
      failure('days_passed', { days: 'Monday 16 November to Sunday 22 November', count: 7, alternatives: 0 })
        .hint,
    ).toBe(
      'Monday 16 November to Sunday 22 November have already passed, and nothing is free in the next two weeks; ' +
        'ask for another day, or offer to take a message.',
    );
  });

  it('say how far ahead the location books, and until when', () => {
    expect(
      failure('days_too_far_ahead', {
        asked: 'Thursday 25 February',
        location: 'Northside Camden',
        maxAdvanceDays: 1,
        last: 'tomorrow, Tuesday 24 November',
      }).hint,
    ).toBe(
      'Thursday 25 February is further ahead than Northside Camden takes bookings (up to 1 day ahead, ' +
        'so until tomorrow, Tuesday 24 November); ask for a date by then, or offer to take a message.',
    );
  });
});
