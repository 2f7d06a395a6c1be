import { describe, expect, it } from 'vitest';
import { parseSpokenTime, resolveSpokenDate, TIME_OF_DAY_MINUTES } from '../../src/mcp/spoken-dates.ts';

const REFUSED = {
  ok: false,
  reason: 'say a date as YYYY-MM-DD, today, tomorrow, a weekday or a day and month',
};

/** Monday 2026-11-23, 09:00 in London. */
const LONDON_MONDAY = Date.parse('2026-11-23T09:00:00Z');
/** Monday 2026-12-28, 12:00 in London. */
const LONDON_LATE_DECEMBER = Date.parse('2026-12-28T12:00:00Z');

describe('resolveSpokenDate', () => {
  const london = (text: string, now = LONDON_MONDAY) => resolveSpokenDate(text, 'Europe/London', now);

  it('takes a calendar date as YYYY-MM-DD, past or future', () => {
    expect(london('2026-11-24')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london(' 2027-01-01 ')).toEqual({ ok: true, date: '2027-01-01' });
    expect(london('2028-02-29')).toEqual({ ok: true, date: '2028-02-29' });
    expect(london('2000-02-29')).toEqual({ ok: true, date: '2000-02-29' });
    expect(london('2025-06-01')).toEqual({ ok: true, date: '2025-06-01' });
  });

  it('refuses YYYY-MM-DD that is not on the calendar', () => {
    expect(london('2026-02-30')).toEqual({ ok: false, reason: '2026-02-30 is not a real date' });
    expect(london('2027-02-29')).toEqual({ ok: false, reason: '2027-02-29 is not a real date' });
    expect(london('2100-02-29')).toEqual({ ok: false, reason: '2100-02-29 is not a real date' });
    expect(london('2026-13-01')).toEqual({ ok: false, reason: '2026-13-01 is not a real date' });
    expect(london('2026-04-31')).toEqual({ ok: false, reason: '2026-04-31 is not a real date' });
    expect(london('2026-00-10')).toEqual({ ok: false, reason: '2026-00-10 is not a real date' });
    expect(london('2026-11-00')).toEqual({ ok: false, reason: '2026-11-00 is not a real date' });
    expect(london('2026-1-5')).toEqual(REFUSED);
  });

  it('takes today, tomorrow and the day after, in any case and spacing', () => {
    expect(london('today')).toEqual({ ok: true, date: '2026-11-23' });
    expect(london('  Today ')).toEqual({ ok: true, date: '2026-11-23' });
    expect(london('TOMORROW')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('tomorrow.')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('day after tomorrow')).toEqual({ ok: true, date: '2026-11-25' });
    expect(london('The  day after\ttomorrow')).toEqual({ ok: true, date: '2026-11-25' });
    expect(london('tomorrow', LONDON_LATE_DECEMBER)).toEqual({ ok: true, date: '2026-12-29' });
    expect(london('tomorrow', Date.parse('2026-12-31T23:59:00Z'))).toEqual({ ok: true, date: '2027-01-01' });
  });

  it('takes a weekday, alone or after "this", as the next one from today, today included', () => {
    expect(london('monday')).toEqual({ ok: true, date: '2026-11-23' });
    expect(london('this monday')).toEqual({ ok: true, date: '2026-11-23' });
    expect(london('Mon')).toEqual({ ok: true, date: '2026-11-23' });
    expect(london('tuesday')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('tue')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('tues')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('wednesday')).toEqual({ ok: true, date: '2026-11-25' });
    expect(london('wed')).toEqual({ ok: true, date: '2026-11-25' });
    expect(london('thursday')).toEqual({ ok: true, date: '2026-11-26' });
    expect(london('thu')).toEqual({ ok: true, date: '2026-11-26' });
    expect(london('thur')).toEqual({ ok: true, date: '2026-11-26' });
    expect(london('this thurs')).toEqual({ ok: true, date: '2026-11-26' });
    expect(london('Friday')).toEqual({ ok: true, date: '2026-11-27' });
    expect(london('fri')).toEqual({ ok: true, date: '2026-11-27' });
    expect(london('saturday')).toEqual({ ok: true, date: '2026-11-28' });
    expect(london('sat')).toEqual({ ok: true, date: '2026-11-28' });
    expect(london('sunday')).toEqual({ ok: true, date: '2026-11-29' });
    expect(london('this sun')).toEqual({ ok: true, date: '2026-11-29' });
    expect(london('thursday', LONDON_LATE_DECEMBER)).toEqual({ ok: true, date: '2026-12-31' });
    expect(london('friday', LONDON_LATE_DECEMBER)).toEqual({ ok: true, date: '2027-01-01' });
  });

  it('takes "next" and a weekday as the next one after today', () => {
    expect(london('next monday')).toEqual({ ok: true, date: '2026-11-30' });
    expect(london('next mon')).toEqual({ ok: true, date: '2026-11-30' });
    expect(london('next tuesday')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('Next Sunday')).toEqual({ ok: true, date: '2026-11-29' });
    expect(london('next monday', LONDON_LATE_DECEMBER)).toEqual({ ok: true, date: '2027-01-04' });
  });

  it('takes a day and a month either way round, with or without an ordinal suffix and a year', () => {
    expect(london('24 november')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('November 24th')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('nov 24')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('the 24th of November')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('november the 24th')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('1st jan 2027')).toEqual({ ok: true, date: '2027-01-01' });
    expect(london('2nd February 2028')).toEqual({ ok: true, date: '2028-02-02' });
    expect(london('Dec 3')).toEqual({ ok: true, date: '2026-12-03' });
    expect(london('Dec. 3, 2027')).toEqual({ ok: true, date: '2027-12-03' });
    expect(london('3rd december 2025')).toEqual({ ok: true, date: '2025-12-03' });
    expect(london('05 march')).toEqual({ ok: true, date: '2027-03-05' });
    expect(london('apr 30')).toEqual({ ok: true, date: '2027-04-30' });
    expect(london('may 1')).toEqual({ ok: true, date: '2027-05-01' });
    expect(london('june 1')).toEqual({ ok: true, date: '2027-06-01' });
    expect(london('jun 2')).toEqual({ ok: true, date: '2027-06-02' });
    expect(london('july 4')).toEqual({ ok: true, date: '2027-07-04' });
    expect(london('jul 5')).toEqual({ ok: true, date: '2027-07-05' });
    expect(london('31 aug')).toEqual({ ok: true, date: '2027-08-31' });
    expect(london('sept 5')).toEqual({ ok: true, date: '2027-09-05' });
    expect(london('september 6')).toEqual({ ok: true, date: '2027-09-06' });
    expect(london('sep 7')).toEqual({ ok: true, date: '2027-09-07' });
    expect(london('oct 31')).toEqual({ ok: true, date: '2027-10-31' });
    expect(london('mar 1')).toEqual({ ok: true, date: '2027-03-01' });
  });

  it('takes a day and month without a year as the first such date not before today', () => {
    expect(london('23 november')).toEqual({ ok: true, date: '2026-11-23' });
    expect(london('november 22')).toEqual({ ok: true, date: '2027-11-22' });
    expect(london('january 5', LONDON_LATE_DECEMBER)).toEqual({ ok: true, date: '2027-01-05' });
    expect(london('5th jan', LONDON_LATE_DECEMBER)).toEqual({ ok: true, date: '2027-01-05' });
    expect(london('december 28', LONDON_LATE_DECEMBER)).toEqual({ ok: true, date: '2026-12-28' });
    expect(london('december 27', LONDON_LATE_DECEMBER)).toEqual({ ok: true, date: '2027-12-27' });
    expect(london('29 february')).toEqual({ ok: true, date: '2028-02-29' });
    expect(london('feb 29th')).toEqual({ ok: true, date: '2028-02-29' });
  });

  it('refuses days a month does not have', () => {
    expect(london('31 april')).toEqual({ ok: false, reason: '31 april is not a real date' });
    expect(london('February 30')).toEqual({ ok: false, reason: 'February 30 is not a real date' });
    expect(london('29 feb 2027')).toEqual({ ok: false, reason: '29 feb 2027 is not a real date' });
    expect(london('0 november')).toEqual({ ok: false, reason: '0 november is not a real date' });
    expect(london('december 32')).toEqual({ ok: false, reason: 'december 32 is not a real date' });
  });

  it('refuses anything else, naming the forms it takes', () => {
    expect(london('')).toEqual(REFUSED);
    expect(london('   ')).toEqual(REFUSED);
    expect(london('yesterday')).toEqual(REFUSED);
    expect(london('soon')).toEqual(REFUSED);
    expect(london('next')).toEqual(REFUSED);
    expect(london('next week')).toEqual(REFUSED);
    expect(london('next next tuesday')).toEqual(REFUSED);
    expect(london('last tuesday')).toEqual(REFUSED);
    expect(london('this tomorrow')).toEqual(REFUSED);
    expect(london('tuesday 24 november')).toEqual(REFUSED);
    expect(london('november')).toEqual(REFUSED);
    expect(london('24')).toEqual(REFUSED);
    expect(london('24th')).toEqual(REFUSED);
    expect(london('24 novembre')).toEqual(REFUSED);
    expect(london('24/11/2026')).toEqual(REFUSED);
    expect(london('24 november 26')).toEqual(REFUSED);
  });

  it('reads today in the zone, not in UTC (America/New_York)', () => {
    // 2026-11-23 23:30 in New York is already 2026-11-24 in UTC.
    const lateMonday = Date.parse('2026-11-24T04:30:00Z');
    const newYork = (text: string, now = lateMonday) => resolveSpokenDate(text, 'America/New_York', now);
    expect(newYork('today')).toEqual({ ok: true, date: '2026-11-23' });
    expect(newYork('tomorrow')).toEqual({ ok: true, date: '2026-11-24' });
    expect(newYork('monday')).toEqual({ ok: true, date: '2026-11-23' });
    expect(newYork('next monday')).toEqual({ ok: true, date: '2026-11-30' });
    expect(newYork('tuesday')).toEqual({ ok: true, date: '2026-11-24' });
    expect(newYork('23 november')).toEqual({ ok: true, date: '2026-11-23' });
    // 23:30 on the Sunday clocks went forward, 2026-03-08.
    const springSunday = Date.parse('2026-03-09T03:30:00Z');
    expect(newYork('today', springSunday)).toEqual({ ok: true, date: '2026-03-08' });
    expect(newYork('sunday', springSunday)).toEqual({ ok: true, date: '2026-03-08' });
    expect(newYork('next sunday', springSunday)).toEqual({ ok: true, date: '2026-03-15' });
  });

  it('reads today in the zone, not in UTC (Europe/London on the day clocks go forward)', () => {
    const springSunday = Date.parse('2026-03-29T00:30:00Z');
    expect(london('today', springSunday)).toEqual({ ok: true, date: '2026-03-29' });
    expect(london('this sunday', springSunday)).toEqual({ ok: true, date: '2026-03-29' });
    expect(london('next sunday', springSunday)).toEqual({ ok: true, date: '2026-04-05' });
    expect(london('today', Date.parse('2026-07-01T23:30:00Z'))).toEqual({ ok: true, date: '2026-07-02' });
  });

  it('reads today in zones with half-hour and 45-minute offsets', () => {
    const lordHowe = (now: number) => resolveSpokenDate('today', 'Australia/Lord_Howe', now);
    // +11:00 in November: 01:00 on the 24th.
    expect(lordHowe(Date.parse('2026-11-23T14:00:00Z'))).toEqual({ ok: true, date: '2026-11-24' });
    expect(lordHowe(Date.parse('2026-11-23T12:59:00Z'))).toEqual({ ok: true, date: '2026-11-23' });
    // +10:30 in June.
    expect(lordHowe(Date.parse('2026-06-23T13:29:00Z'))).toEqual({ ok: true, date: '2026-06-23' });
    expect(lordHowe(Date.parse('2026-06-23T13:30:00Z'))).toEqual({ ok: true, date: '2026-06-24' });
    // The evening of the day Lord Howe moves from +10:30 to +11:00, 2026-10-04.
    expect(lordHowe(Date.parse('2026-10-04T12:59:00Z'))).toEqual({ ok: true, date: '2026-10-04' });
    expect(lordHowe(Date.parse('2026-10-04T13:00:00Z'))).toEqual({ ok: true, date: '2026-10-05' });
    expect(
      resolveSpokenDate('next monday', 'Australia/Lord_Howe', Date.parse('2026-11-23T14:00:00Z')),
    ).toEqual({ ok: true, date: '2026-11-30' });

    const chatham = (now: number) => resolveSpokenDate('today', 'Pacific/Chatham', now);
    // +13:45 in November.
    expect(chatham(Date.parse('2026-11-23T10:14:00Z'))).toEqual({ ok: true, date: '2026-11-23' });
    expect(chatham(Date.parse('2026-11-23T10:15:00Z'))).toEqual({ ok: true, date: '2026-11-24' });

    const kathmandu = (text: string, now: number) => resolveSpokenDate(text, 'Asia/Kathmandu', now);
    // +05:45 all year.
    expect(kathmandu('today', Date.parse('2026-11-23T18:14:00Z'))).toEqual({ ok: true, date: '2026-11-23' });
    expect(kathmandu('today', Date.parse('2026-11-23T18:15:00Z'))).toEqual({ ok: true, date: '2026-11-24' });
    expect(kathmandu('tuesday', Date.parse('2026-11-23T18:15:00Z'))).toEqual({
      ok: true,
      date: '2026-11-24',
    });
    expect(kathmandu('next tuesday', Date.parse('2026-11-23T18:15:00Z'))).toEqual({
      ok: true,
      date: '2026-12-01',
    });
  });

  it('throws on an unknown zone', () => {
    expect(() => resolveSpokenDate('today', 'Mars/Olympus_Mons', LONDON_MONDAY)).toThrow(
      'Unknown time zone: Mars/Olympus_Mons',
    );
  });
});

describe('TIME_OF_DAY_MINUTES', () => {
  it('splits the day at noon and 17:00, half-open', () => {
    expect(TIME_OF_DAY_MINUTES).toEqual({
      morning: { from: 0, to: 720 },
      afternoon: { from: 720, to: 1020 },
      evening: { from: 1020, to: 1440 },
    });
  });
});

describe('parseSpokenTime', () => {
  it('reads a 24-hour clock with a colon or a dot', () => {
    expect(parseSpokenTime('14:30')).toBe(870);
    expect(parseSpokenTime('9:05')).toBe(545);
    expect(parseSpokenTime('09:05')).toBe(545);
    expect(parseSpokenTime(' 14.30 ')).toBe(870);
    expect(parseSpokenTime('0:00')).toBe(0);
    expect(parseSpokenTime('00:00')).toBe(0);
    expect(parseSpokenTime('12:00')).toBe(720);
    expect(parseSpokenTime('23:59')).toBe(1439);
  });

  it('reads am and pm, with or without minutes, spaces and dots', () => {
    expect(parseSpokenTime('2pm')).toBe(840);
    expect(parseSpokenTime('2 pm')).toBe(840);
    expect(parseSpokenTime('2 PM')).toBe(840);
    expect(parseSpokenTime('2:30pm')).toBe(870);
    expect(parseSpokenTime('2.30 p.m.')).toBe(870);
    expect(parseSpokenTime('2 p.m')).toBe(840);
    expect(parseSpokenTime('9am')).toBe(540);
    expect(parseSpokenTime('9:15 a.m.')).toBe(555);
    expect(parseSpokenTime('11:59 pm')).toBe(1439);
  });

  it('reads 12 am as midnight and 12 pm as noon', () => {
    expect(parseSpokenTime('12 am')).toBe(0);
    expect(parseSpokenTime('12:30am')).toBe(30);
    expect(parseSpokenTime('12 pm')).toBe(720);
    expect(parseSpokenTime('12:45 pm')).toBe(765);
  });

  it('reads noon, midday and midnight', () => {
    expect(parseSpokenTime('noon')).toBe(720);
    expect(parseSpokenTime('Midday')).toBe(720);
    expect(parseSpokenTime('12 noon')).toBe(720);
    expect(parseSpokenTime('midnight')).toBe(0);
  });

  it('refuses anything else', () => {
    expect(parseSpokenTime('25:00')).toBeUndefined();
    expect(parseSpokenTime('24:00')).toBeUndefined();
    expect(parseSpokenTime('9:60')).toBeUndefined();
    expect(parseSpokenTime('9:5')).toBeUndefined();
    expect(parseSpokenTime('0930')).toBeUndefined();
    expect(parseSpokenTime('14')).toBeUndefined();
    expect(parseSpokenTime('13pm')).toBeUndefined();
    expect(parseSpokenTime('0am')).toBeUndefined();
    expect(parseSpokenTime('0:30 am')).toBeUndefined();
    expect(parseSpokenTime('14:30pm')).toBeUndefined();
    expect(parseSpokenTime('soon')).toBeUndefined();
    expect(parseSpokenTime('morning')).toBeUndefined();
    expect(parseSpokenTime('half past two')).toBeUndefined();
    expect(parseSpokenTime('')).toBeUndefined();
  });
});
