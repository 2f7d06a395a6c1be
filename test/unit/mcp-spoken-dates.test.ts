import { describe, expect, it } from 'vitest';
import { dateFormProblem, resolveSpokenDate } from '../../src/mcp/spoken-dates.ts';

const REFUSED = {
  ok: false,
  reason: 'say a date as YYYY-MM-DD, today, tomorrow, a weekday, "the 8th", a day and month, or "next week"',
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
  });

  it('takes the holidays of a fixed date as the next such day, with a year or a part of the day', () => {
    expect(london('Christmas Eve')).toEqual({ ok: true, date: '2026-12-24' });
    expect(london('christmas day')).toEqual({ ok: true, date: '2026-12-25' });
    expect(london('Christmas')).toEqual({ ok: true, date: '2026-12-25' });
    expect(london('Boxing Day')).toEqual({ ok: true, date: '2026-12-26' });
    expect(london("New Year's Eve")).toEqual({ ok: true, date: '2026-12-31' });
    expect(london('new years day')).toEqual({ ok: true, date: '2027-01-01' });
    expect(london('New Year’s Day 2028')).toEqual({ ok: true, date: '2028-01-01' });
    expect(london('Christmas Eve', LONDON_LATE_DECEMBER)).toEqual({ ok: true, date: '2027-12-24' });
    expect(london("Valentine's Day")).toEqual({ ok: true, date: '2027-02-14' });
    expect(london('Halloween')).toEqual({ ok: true, date: '2027-10-31' });
    expect(london('Christmas Eve morning')).toEqual({ ok: true, date: '2026-12-24', timeOfDay: 'morning' });
    expect(london('Thursday Christmas Eve')).toEqual({ ok: true, date: '2026-12-24' });
    expect(london('Friday Christmas Eve')).toMatchObject({ ok: false });
    // Weeks around a holiday are spans, asked rather than read as one day.
    expect(london('Christmas week')).toMatchObject({ ok: false });
    expect(london('the week before Christmas')).toMatchObject({ ok: false });
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
    expect(london('soon')).toEqual(REFUSED);
    expect(london('next')).toEqual(REFUSED);
    expect(london('next next tuesday')).toEqual(REFUSED);
    expect(london('this tomorrow')).toEqual(REFUSED);
    expect(london('next month')).toEqual(REFUSED);
    expect(london('november')).toEqual(REFUSED);
    expect(london('24')).toEqual(REFUSED);
    expect(london('24 novembre')).toEqual(REFUSED);
    expect(london('13/25')).toEqual(REFUSED);
  });

  it('resolves past days rather than refusing them (whether they can be booked is for the tool)', () => {
    expect(london('yesterday')).toEqual({ ok: true, date: '2026-11-22' });
    expect(london('last tuesday')).toEqual({ ok: true, date: '2026-11-17' });
    expect(london('2026-1-5')).toEqual({ ok: true, date: '2026-01-05' });
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

describe('resolveSpokenDate: dates as callers and the tools say them', () => {
  const london = (text: string, now = LONDON_MONDAY) =>
    resolveSpokenDate(text, 'Europe/London', now, 'en-GB');
  /** Monday 2026-11-23, 23:30 in New York (already Tuesday in UTC). */
  const NEW_YORK_MONDAY = Date.parse('2026-11-24T04:30:00Z');
  const newYork = (text: string, now = NEW_YORK_MONDAY) =>
    resolveSpokenDate(text, 'America/New_York', now, 'en-US');

  it('reads numeric dates in the order of the location’s locale', () => {
    expect(london('8/12')).toEqual({ ok: true, date: '2026-12-08' });
    expect(newYork('8/12')).toEqual({ ok: true, date: '2027-08-12' });
    expect(london('24/11/2026')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('8.12.2026')).toEqual({ ok: true, date: '2026-12-08' });
    expect(newYork('12/8/2026')).toEqual({ ok: true, date: '2026-12-08' });
    // Only one reading is a date: either locale takes it.
    expect(london('12/25')).toEqual({ ok: true, date: '2026-12-25' });
    expect(newYork('25/12')).toEqual({ ok: true, date: '2026-12-25' });
  });

  it('reads month names either way round in both locales', () => {
    expect(london('November 24')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('december the 8th')).toEqual({ ok: true, date: '2026-12-08' });
    expect(london('the 8th of December')).toEqual({ ok: true, date: '2026-12-08' });
    // Ordinals in words (issue 44).
    expect(london('the third')).toEqual({ ok: true, date: '2026-12-03' });
    expect(london('the third of December')).toEqual({ ok: true, date: '2026-12-03' });
    expect(newYork('December twenty-first')).toEqual({ ok: true, date: '2026-12-21' });
    expect(london('thursday the twenty sixth')).toEqual({ ok: true, date: '2026-11-26' });
    expect(newYork('8 December')).toEqual({ ok: true, date: '2026-12-08' });
    expect(london('24 november 26')).toEqual({ ok: true, date: '2026-11-24' });
  });

  it('reads back the tools’ own wording of a date, with or without today/tomorrow and the year', () => {
    expect(london('Tuesday 8 December')).toEqual({ ok: true, date: '2026-12-08' });
    expect(london('tomorrow, Tuesday 24 November')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('today, Monday 23 November')).toEqual({ ok: true, date: '2026-11-23' });
    expect(london('Monday 24 May 2027')).toEqual({ ok: true, date: '2027-05-24' });
    expect(newYork('Tuesday, December 8')).toEqual({ ok: true, date: '2026-12-08' });
    expect(newYork('tomorrow, Tuesday, November 24')).toEqual({ ok: true, date: '2026-11-24' });
    expect(newYork('Monday, May 24, 2027')).toEqual({ ok: true, date: '2027-05-24' });
    // A recent past date said without its year (the tools do so within 180 days): the weekday says which.
    expect(london('Monday 16 November')).toEqual({ ok: true, date: '2026-11-16' });
    expect(london('16 November')).toEqual({ ok: true, date: '2027-11-16' });
  });

  it('asks when the weekday and the date disagree, naming the real one', () => {
    expect(london('Monday 8 December')).toEqual({
      ok: false,
      reason: 'Tuesday 8 December is not a Monday; ask the caller which they mean',
      onToday: true,
    });
    expect(london('Friday 24 May 2027')).toEqual({
      ok: false,
      reason: 'Monday 24 May 2027 is not a Friday; ask the caller which they mean',
    });
    expect(london('tomorrow, Wednesday 25 November')).toEqual({
      ok: false,
      reason:
        'tomorrow is Tuesday 24 November, not Wednesday 25 November; ask the caller which day they mean',
      onToday: true,
    });
  });

  it('reads "the 8th" as the next 8th from today, and with a weekday the nearest that fits', () => {
    expect(london('the 8th')).toEqual({ ok: true, date: '2026-12-08' });
    expect(london('8th')).toEqual({ ok: true, date: '2026-12-08' });
    expect(london('the 23rd')).toEqual({ ok: true, date: '2026-11-23' });
    expect(london('the 24th')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('on the 30th')).toEqual({ ok: true, date: '2026-11-30' });
    expect(london('the 31st')).toEqual({ ok: true, date: '2026-12-31' });
    expect(london('the 30th', Date.parse('2027-02-01T10:00:00Z'))).toEqual({ ok: true, date: '2027-03-30' });
    expect(london('Tuesday the 8th')).toEqual({ ok: true, date: '2026-12-08' });
    expect(london('Monday the 8th')).toMatchObject({ ok: false });
    expect(london('the 0th')).toEqual({ ok: false, reason: 'the 0th is not a real date' });
    expect(london('the 32nd')).toEqual({ ok: false, reason: 'the 32nd is not a real date' });
  });

  it('reads a week after a day: "Tuesday week", "a week on Monday", "a week today"', () => {
    expect(london('Tuesday week')).toEqual({ ok: true, date: '2026-12-01' });
    expect(london('monday week')).toEqual({ ok: true, date: '2026-11-30' });
    expect(london('a week on Monday')).toEqual({ ok: true, date: '2026-11-30' });
    expect(london('a week on Friday')).toEqual({ ok: true, date: '2026-12-04' });
    expect(london('a week today')).toEqual({ ok: true, date: '2026-11-30' });
    expect(london('a week tomorrow')).toEqual({ ok: true, date: '2026-12-01' });
    expect(london('tomorrow week')).toEqual({ ok: true, date: '2026-12-01' });
    expect(london('in two weeks')).toEqual({ ok: true, date: '2026-12-07' });
    expect(london('in 3 days')).toEqual({ ok: true, date: '2026-11-26' });
  });

  it('reads a fortnight after a day: "Monday fortnight", "a fortnight today", "a fortnight on Friday"', () => {
    // On a Monday, "Monday" is today: a fortnight on is two weeks from today, as "Monday week" is one.
    expect(london('Monday fortnight')).toEqual({ ok: true, date: '2026-12-07' });
    expect(london('tuesday fortnight')).toEqual({ ok: true, date: '2026-12-08' });
    expect(london('a fortnight today')).toEqual({ ok: true, date: '2026-12-07' });
    expect(london('a fortnight tomorrow')).toEqual({ ok: true, date: '2026-12-08' });
    expect(london('a fortnight on Friday')).toEqual({ ok: true, date: '2026-12-11' });
    expect(london('a fortnight from today')).toEqual({ ok: true, date: '2026-12-07' });
    expect(london('tomorrow fortnight')).toEqual({ ok: true, date: '2026-12-08' });
  });

  it('keeps the evening of "a week tonight" and "a fortnight tonight", as of "tonight"', () => {
    expect(london('a week tonight')).toEqual({ ok: true, date: '2026-11-30', timeOfDay: 'evening' });
    expect(london('a fortnight tonight')).toEqual({ ok: true, date: '2026-12-07', timeOfDay: 'evening' });
    expect(london('tonight week')).toEqual({ ok: true, date: '2026-11-30', timeOfDay: 'evening' });
  });

  it('reads "this coming Tuesday" as the next Tuesday after today', () => {
    expect(london('this coming Tuesday')).toEqual({ ok: true, date: '2026-11-24' });
    expect(london('coming Friday')).toEqual({ ok: true, date: '2026-11-27' });
    // Said on a Monday, "this coming Monday" is a week on, not today.
    expect(london('this coming Monday')).toEqual({ ok: true, date: '2026-11-30' });
    expect(london('this coming monday morning')).toEqual({
      ok: true,
      date: '2026-11-30',
      timeOfDay: 'morning',
    });
  });

  it('reads spans of days: this week, next week, the week after next, the weekend', () => {
    expect(london('next week')).toEqual({ ok: true, date: '2026-11-30', days: 7 });
    expect(london('this week')).toEqual({ ok: true, date: '2026-11-23', days: 7 });
    expect(london('the week after next')).toEqual({ ok: true, date: '2026-12-07', days: 7 });
    expect(london('the weekend')).toEqual({ ok: true, date: '2026-11-28', days: 2 });
    expect(london('this weekend')).toEqual({ ok: true, date: '2026-11-28', days: 2 });
    // On a Sunday: this week is today, next week starts tomorrow, the weekend is what is left of it.
    const sunday = Date.parse('2026-11-29T10:00:00Z');
    expect(london('this week', sunday)).toEqual({ ok: true, date: '2026-11-29', days: 1 });
    expect(london('next week', sunday)).toEqual({ ok: true, date: '2026-11-30', days: 7 });
    expect(london('weekend', sunday)).toEqual({ ok: true, date: '2026-11-29', days: 1 });
    // "Next weekend" means this coming one to some callers and the one after to others.
    expect(london('next weekend')).toEqual({
      ok: false,
      reason:
        '"next weekend" could be Saturday 28 November or Saturday 5 December; ask the caller which and pass that date',
      onToday: true,
    });
  });

  it('returns a part of the day said with the date', () => {
    expect(london('tomorrow morning')).toEqual({ ok: true, date: '2026-11-24', timeOfDay: 'morning' });
    expect(london('Tuesday afternoon')).toEqual({ ok: true, date: '2026-11-24', timeOfDay: 'afternoon' });
    expect(london('friday in the evening')).toEqual({ ok: true, date: '2026-11-27', timeOfDay: 'evening' });
    expect(london('this morning')).toEqual({ ok: true, date: '2026-11-23', timeOfDay: 'morning' });
    expect(london('tonight')).toEqual({ ok: true, date: '2026-11-23', timeOfDay: 'evening' });
    expect(london('monday night')).toEqual({ ok: true, date: '2026-11-23', timeOfDay: 'evening' });
    expect(london('the 8th in the morning')).toEqual({ ok: true, date: '2026-12-08', timeOfDay: 'morning' });
    expect(london('next week in the afternoon')).toEqual({
      ok: true,
      date: '2026-11-30',
      days: 7,
      timeOfDay: 'afternoon',
    });
  });

  it('refuses a clock time in a date, saying where it goes', () => {
    expect(london('tomorrow at 2pm')).toEqual({
      ok: false,
      reason: 'give the day alone here; a time of day goes in earliest or latest',
    });
  });

  it('reads in the location’s zone wherever "now" falls (Sydney, Kathmandu, Lord Howe)', () => {
    // 08:00 on Tuesday 24 November in Sydney (+11:00) is still Monday in UTC.
    const sydney = (text: string) =>
      resolveSpokenDate(text, 'Australia/Sydney', Date.parse('2026-11-23T21:00:00Z'), 'en-GB');
    expect(sydney('today')).toEqual({ ok: true, date: '2026-11-24' });
    expect(sydney('next week')).toEqual({ ok: true, date: '2026-11-30', days: 7 });
    expect(sydney('8/12')).toEqual({ ok: true, date: '2026-12-08' });
    expect(sydney('the 24th')).toEqual({ ok: true, date: '2026-11-24' });
    // 00:00 on Tuesday in Kathmandu (+05:45).
    const kathmandu = (text: string) =>
      resolveSpokenDate(text, 'Asia/Kathmandu', Date.parse('2026-11-23T18:15:00Z'), 'en-GB');
    expect(kathmandu('tomorrow morning')).toEqual({ ok: true, date: '2026-11-25', timeOfDay: 'morning' });
    expect(kathmandu('Tuesday week')).toEqual({ ok: true, date: '2026-12-01' });
    // 01:00 on Monday 5 October in Lord Howe, hours after its clocks went forward half an hour.
    const lordHowe = (text: string) =>
      resolveSpokenDate(text, 'Australia/Lord_Howe', Date.parse('2026-10-04T14:00:00Z'), 'en-GB');
    expect(lordHowe('today')).toEqual({ ok: true, date: '2026-10-05' });
    expect(lordHowe('this week')).toEqual({ ok: true, date: '2026-10-05', days: 7 });
  });

  it('does not depend on the server’s own time zone', () => {
    const phrases = ['today', 'tomorrow', 'next week', '8/12', 'Tuesday 8 December', 'the 8th', 'in 3 days'];
    const read = () =>
      phrases.map((phrase) => [
        resolveSpokenDate(phrase, 'Pacific/Kiritimati', NEW_YORK_MONDAY, 'en-GB'),
        resolveSpokenDate(phrase, 'Pacific/Pago_Pago', NEW_YORK_MONDAY, 'en-US'),
      ]);
    const saved = process.env.TZ;
    try {
      process.env.TZ = 'UTC';
      const inUtc = read();
      for (const zone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/Santiago', 'Asia/Kathmandu']) {
        process.env.TZ = zone;
        expect(read(), zone).toEqual(inUtc);
      }
      expect(inUtc[0]).toEqual([
        { ok: true, date: '2026-11-24' },
        { ok: true, date: '2026-11-23' },
      ]);
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });
});

describe('resolveSpokenDate on text no caller says', () => {
  it('refuses a phrase longer than 100 characters before trying any pattern on it', () => {
    const weeks = (n: number) => `${'a week on '.repeat(n)}monday`;
    expect(resolveSpokenDate(weeks(9), 'Europe/London', LONDON_MONDAY)).toEqual({
      ok: true,
      date: '2027-01-25',
    });
    expect(weeks(10).length).toBeGreaterThan(100);
    expect(resolveSpokenDate(weeks(10), 'Europe/London', LONDON_MONDAY)).toEqual(REFUSED);
    expect(resolveSpokenDate(`${'a '.repeat(30_000)}morning`, 'Europe/London', LONDON_MONDAY)).toEqual(
      REFUSED,
    );
  });
});

describe('dateFormProblem: words no day reads as a date', () => {
  it('refuses them in the words resolveSpokenDate uses, and nothing that depends on today', () => {
    expect(dateFormProblem('someday')).toMatch(/^say a date as YYYY-MM-DD/);
    expect(dateFormProblem('the 45th')).toBe('the 45th is not a real date');
    expect(dateFormProblem('31 June')).toBe('31 June is not a real date');
    expect(dateFormProblem('tomorrow at 3pm')).toBe(
      'give the day alone here; a time of day goes in earliest or latest',
    );
    for (const said of ['tomorrow', 'next weekend', 'Monday 8 December', '8/13', 'tuesday week']) {
      expect(dateFormProblem(said), said).toBeUndefined();
    }
  });
});
