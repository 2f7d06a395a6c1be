import { describe, expect, it } from 'vitest';
import type { DayHours } from '../../src/domain/availability/opening-hours.ts';
import {
  openSpans,
  parseSpokenTime,
  readTimeInHours,
  TIME_OF_DAY_MINUTES,
} from '../../src/mcp/spoken-times.ts';

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
  const minute = (text: string) => parseSpokenTime(text)?.minute;
  const halfDay = (text: string) => parseSpokenTime(text)?.halfDay;

  it('reads a 24-hour clock with a colon or a dot', () => {
    expect(minute('14:30')).toBe(870);
    expect(minute('9:05')).toBe(545);
    expect(minute('09:05')).toBe(545);
    expect(minute(' 14.30 ')).toBe(870);
    expect(minute('0:00')).toBe(0);
    expect(minute('00:00')).toBe(0);
    expect(minute('12:00')).toBe(720);
    expect(minute('23:59')).toBe(1439);
  });

  it('marks an hour from 1 to 12 without am/pm as either half of the day', () => {
    expect(parseSpokenTime('2:30')).toEqual({ minute: 150, halfDay: true });
    expect(parseSpokenTime('9:05')).toEqual({ minute: 545, halfDay: true });
    expect(parseSpokenTime('12:15')).toEqual({ minute: 735, halfDay: true });
    expect(parseSpokenTime('2')).toEqual({ minute: 120, halfDay: true });
    expect(parseSpokenTime("2 o'clock")).toEqual({ minute: 120, halfDay: true });
    // Everyday words (issue 44).
    expect(parseSpokenTime('half past four')).toEqual({ minute: 270, halfDay: true });
    expect(parseSpokenTime('half four')).toEqual({ minute: 270, halfDay: true });
    expect(parseSpokenTime('quarter past 2')).toEqual({ minute: 135, halfDay: true });
    expect(parseSpokenTime('a quarter to one')).toEqual({ minute: 765, halfDay: true });
    expect(parseSpokenTime('four pm')).toEqual({ minute: 960, halfDay: false });
    expect(parseSpokenTime("ten o'clock")).toEqual({ minute: 600, halfDay: true });
    expect(parseSpokenTime('half thirteen')).toBeUndefined();
    expect(parseSpokenTime('2 oclock')).toEqual({ minute: 120, halfDay: true });
    // An hour in words alone, or with its minutes in words, as callers say it.
    expect(parseSpokenTime('four')).toEqual({ minute: 240, halfDay: true });
    expect(parseSpokenTime('three thirty')).toEqual({ minute: 210, halfDay: true });
    expect(parseSpokenTime('two forty five')).toEqual({ minute: 165, halfDay: true });
    expect(parseSpokenTime('two thirty pm')).toEqual({ minute: 870, halfDay: false });
    expect(parseSpokenTime('ten oh five')).toEqual({ minute: 605, halfDay: true });
    // A leading zero or an hour past 12 is the 24-hour clock; 0 is midnight.
    expect(halfDay('09:05')).toBe(false);
    expect(parseSpokenTime('14')).toEqual({ minute: 840, halfDay: false });
    expect(halfDay('14:30')).toBe(false);
    expect(halfDay('0:30')).toBe(false);
  });

  it('reads am and pm, with or without minutes, spaces and dots', () => {
    expect(parseSpokenTime('2pm')).toEqual({ minute: 840, halfDay: false });
    expect(minute('2 pm')).toBe(840);
    expect(minute('2 PM')).toBe(840);
    expect(minute('2:30pm')).toBe(870);
    expect(minute('2.30 p.m.')).toBe(870);
    expect(minute('2 p.m')).toBe(840);
    expect(minute('9am')).toBe(540);
    expect(minute('9:15 a.m.')).toBe(555);
    expect(minute('11:59 pm')).toBe(1439);
    expect(halfDay('9am')).toBe(false);
  });

  it('reads 12 am as midnight and 12 pm as noon', () => {
    expect(minute('12 am')).toBe(0);
    expect(minute('12:30am')).toBe(30);
    expect(minute('12 pm')).toBe(720);
    expect(minute('12:45 pm')).toBe(765);
  });

  it('reads noon, midday and midnight', () => {
    expect(parseSpokenTime('noon')).toEqual({ minute: 720, halfDay: false });
    expect(minute('Midday')).toBe(720);
    expect(minute('12 noon')).toBe(720);
    expect(parseSpokenTime('midnight')).toEqual({ minute: 0, halfDay: false });
  });

  it('refuses anything else', () => {
    for (const text of [
      '25:00',
      '24:00',
      '24',
      '9:60',
      '9:5',
      '0930',
      '13pm',
      '0am',
      '0:30 am',
      '14:30pm',
      'soon',
      'morning',
      'half past',
      '',
    ]) {
      expect(parseSpokenTime(text), text).toBeUndefined();
    }
  });
});

/** A salon open 9 to 6 on weekdays, 10 to 4 on Saturdays, with a late Thursday; closed on Sundays. */
const HOURS: DayHours[] = [
  { weekday: 'mon', intervals: [{ start: '09:00', end: '18:00' }] },
  {
    weekday: 'tue',
    intervals: [
      { start: '09:00', end: '13:00' },
      { start: '14:00', end: '18:00' },
    ],
  },
  { weekday: 'wed', intervals: [{ start: '09:00', end: '18:00' }] },
  { weekday: 'thu', intervals: [{ start: '07:00', end: '21:00' }] },
  { weekday: 'fri', intervals: [{ start: '09:00', end: '18:00' }] },
  { weekday: 'sat', intervals: [{ start: '10:00', end: '16:00' }] },
  { weekday: 'sun', intervals: [] },
];

describe('openSpans', () => {
  it('gives the hours of the weekdays asked as minute spans, once per weekday', () => {
    expect(openSpans(HOURS, [2])).toEqual([
      { from: 540, to: 780 },
      { from: 840, to: 1080 },
    ]);
    expect(openSpans(HOURS, [7])).toEqual([]);
    expect(openSpans(HOURS, [1, 1, 6])).toEqual([
      { from: 540, to: 1080 },
      { from: 600, to: 960 },
    ]);
    expect(openSpans([], [1])).toEqual([]);
  });
});

describe('readTimeInHours', () => {
  const at = (text: string, weekday: number, part?: 'morning' | 'afternoon' | 'evening') =>
    readTimeInHours(parseSpokenTime(text)!, openSpans(HOURS, [weekday]), part);

  it('reads an hour without am/pm inside the opening hours', () => {
    expect(at('2:30', 1)).toEqual({ ok: true, minute: 870 });
    expect(at('9', 1)).toEqual({ ok: true, minute: 540 });
    expect(at('11:45', 1)).toEqual({ ok: true, minute: 705 });
    expect(at('12:30', 1)).toEqual({ ok: true, minute: 750 });
    // Closing time counts ("until 6"), so does opening time.
    expect(at('6', 1)).toEqual({ ok: true, minute: 1080 });
    expect(at('4', 6)).toEqual({ ok: true, minute: 960 });
  });

  it('leaves times said on the 24-hour clock or with am/pm as they are', () => {
    expect(at('2:30 am', 1)).toEqual({ ok: true, minute: 150 });
    expect(at('02:30', 1)).toEqual({ ok: true, minute: 150 });
    expect(at('14:30', 1)).toEqual({ ok: true, minute: 870 });
    expect(at('noon', 7)).toEqual({ ok: true, minute: 720 });
  });

  it('asks when both readings are open, unless a part of the day tells them apart', () => {
    expect(at('7:30', 4)).toEqual({ ok: false, readings: [450, 1170] });
    expect(at('7:30', 4, 'evening')).toEqual({ ok: true, minute: 1170 });
    expect(at('7:30', 4, 'morning')).toEqual({ ok: true, minute: 450 });
    expect(at('2:30', 1, 'afternoon')).toEqual({ ok: true, minute: 870 });
  });

  it('takes the reading nearer the hours when neither is open, and the written one when closed all day', () => {
    // 1 pm and 1 am both fall outside Tuesday's 9-1, 2-6: 1 pm is the edge of the lunch break.
    expect(at('1:30', 2)).toEqual({ ok: true, minute: 810 });
    expect(at('8', 6)).toEqual({ ok: true, minute: 480 });
    expect(at('2:30', 7)).toEqual({ ok: true, minute: 150 });
  });

  it('asks when the opening hours are not known', () => {
    expect(readTimeInHours(parseSpokenTime('2:30')!, undefined)).toEqual({ ok: false, readings: [150, 870] });
    expect(readTimeInHours(parseSpokenTime('2:30')!, undefined, 'afternoon')).toEqual({
      ok: true,
      minute: 870,
    });
    expect(readTimeInHours(parseSpokenTime('2:30 pm')!, undefined)).toEqual({ ok: true, minute: 870 });
  });
});
