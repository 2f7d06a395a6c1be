import { describe, expect, it } from 'vitest';
import {
  bookedWhileOffered,
  datesRefusal,
  datesToSearch,
  isPastLastDate,
  localStartOf,
  suitsWants,
  timeOfDay,
  wantsOverRefusal,
} from '../../src/domain/waitlist.ts';

describe('waitlist wants', () => {
  it('splits the day at 12:00 and 17:00 local', () => {
    expect([0, 719, 720, 1019, 1020, 1439].map(timeOfDay)).toEqual([
      'morning',
      'morning',
      'afternoon',
      'afternoon',
      'evening',
      'evening',
    ]);
  });

  it("judges a start by the location's local date and time, across DST and in half-hour zones", () => {
    const wants = { fromDate: '2026-03-29', toDate: '2026-03-29', times: ['morning' as const] };
    // London springs forward at 01:00 GMT: 11:30 BST is 10:30Z, 12:30 BST is 11:30Z.
    expect(suitsWants(wants, Date.parse('2026-03-29T10:30:00Z'), 'Europe/London')).toBe(true);
    expect(suitsWants(wants, Date.parse('2026-03-29T11:30:00Z'), 'Europe/London')).toBe(false);
    // Adelaide (+10:30 in March): 2026-03-28T23:00Z is 09:30 on the 29th.
    expect(localStartOf(Date.parse('2026-03-28T23:00:00Z'), 'Australia/Adelaide')).toEqual({
      date: '2026-03-29',
      part: 'morning',
    });
    // Lord Howe (+11 until 5 April 2026, then +10:30): 2026-04-05T06:00Z is 16:30, afternoon.
    expect(localStartOf(Date.parse('2026-04-05T06:00:00Z'), 'Australia/Lord_Howe')).toEqual({
      date: '2026-04-05',
      part: 'afternoon',
    });
    // Any time of day; outside the dates never.
    expect(suitsWants({ ...wants, times: null }, Date.parse('2026-03-29T20:00:00Z'), 'Europe/London')).toBe(
      true,
    );
    expect(suitsWants({ ...wants, times: null }, Date.parse('2026-03-30T08:00:00Z'), 'Europe/London')).toBe(
      false,
    );
  });

  it('searches from today at the earliest and ends after the last date', () => {
    const wants = { fromDate: '2026-11-20', toDate: '2026-11-25', times: null };
    expect(datesToSearch(wants, '2026-11-23')).toEqual({ from: '2026-11-23', to: '2026-11-25' });
    expect(datesToSearch(wants, '2026-11-26')).toBeNull();
    expect(isPastLastDate(wants, '2026-11-25')).toBe(false);
    expect(isPastLastDate(wants, '2026-11-26')).toBe(true);
  });

  it('refuses dates in the wrong order, past, or spanning more than 92 days', () => {
    expect(datesRefusal('2026-11-24', '2026-11-23', '2026-11-20')).toMatch(/^from_date/);
    expect(datesRefusal('2026-11-01', '2026-11-19', '2026-11-20')).toMatch(/^to_date is already past/);
    expect(datesRefusal('2026-11-20', '2027-02-20', '2026-11-20')).toMatch(/at most 92 days/);
    expect(datesRefusal('2026-11-20', '2027-02-19', '2026-11-20')).toBeNull();
  });

  it("refuses a last day whose wanted parts are over on the location's clock, across DST", () => {
    const on = (toDate: string, times: ('morning' | 'afternoon' | 'evening')[] | null) => ({
      fromDate: toDate,
      toDate,
      times,
    });
    const london = (iso: string, wants: ReturnType<typeof on>) =>
      wantsOverRefusal(wants, Date.parse(iso), 'Europe/London');
    // Tuesday 24 November 2026 (GMT): the morning is over from 12:00, the afternoon from 17:00.
    expect(london('2026-11-24T23:30:00Z', on('2026-11-24', ['morning']))).toEqual({
      param: 'times',
      message: 'The morning of Tuesday 24 November is over; choose a later part of the day or a later date.',
    });
    expect(london('2026-11-24T18:00:00Z', on('2026-11-24', ['afternoon', 'morning']))).toEqual({
      param: 'times',
      message:
        'The morning and afternoon of Tuesday 24 November are over; choose a later part of the day or a later date.',
    });
    expect(london('2026-11-24T11:59:00Z', on('2026-11-24', ['morning']))).toBeNull();
    expect(london('2026-11-24T12:00:00Z', on('2026-11-24', ['morning']))?.param).toBe('times');
    expect(london('2026-11-24T16:59:00Z', on('2026-11-24', ['morning', 'afternoon']))).toBeNull();
    // The evening, or any time, lasts as long as the day; a later last date, or a wait from an
    // earlier day, is judged on its last date.
    expect(london('2026-11-24T23:59:00Z', on('2026-11-24', ['morning', 'evening']))).toBeNull();
    expect(london('2026-11-24T23:59:00Z', on('2026-11-24', null))).toBeNull();
    expect(london('2026-11-24T23:30:00Z', on('2026-11-25', ['morning']))).toBeNull();
    expect(
      london('2026-11-24T13:00:00Z', { fromDate: '2026-11-20', toDate: '2026-11-24', times: ['morning'] }),
    ).not.toBeNull();
    // Sunday 29 March 2026, London springs forward: 11:30Z is 12:30 BST (morning over), 10:59Z 11:59.
    expect(london('2026-03-29T11:30:00Z', on('2026-03-29', ['morning']))?.message).toBe(
      'The morning of Sunday 29 March is over; choose a later part of the day or a later date.',
    );
    expect(london('2026-03-29T10:59:00Z', on('2026-03-29', ['morning']))).toBeNull();
    // Sunday 25 October 2026, back to GMT: 16:30Z is 16:30, still afternoon (it was 17:30 in BST).
    expect(london('2026-10-25T16:30:00Z', on('2026-10-25', ['afternoon']))).toBeNull();
    expect(london('2026-10-25T17:00:00Z', on('2026-10-25', ['afternoon']))?.param).toBe('times');
    // Adelaide (+10:30 in November): 02:00Z on the 24th is 12:30 there, its morning over; 23:30Z on
    // the 23rd is already 10:00 on the 24th there, its morning not.
    const adelaide = (iso: string) =>
      wantsOverRefusal(on('2026-11-24', ['morning']), Date.parse(iso), 'Australia/Adelaide');
    expect(adelaide('2026-11-24T02:00:00Z')?.param).toBe('times');
    expect(adelaide('2026-11-23T23:30:00Z')).toBeNull();
  });
});

describe('bookedWhileOffered', () => {
  const entry = {
    serviceIds: ['cut', 'colour'],
    staffId: 'ana',
    fromDate: '2026-11-24',
    toDate: '2026-11-24',
    times: ['afternoon' as const],
  };
  const offerMadeAt = Date.parse('2026-11-23T09:30:00Z');
  // Adelaide is 10:30 ahead in November: 04:00Z is 14:30 on the 24th, the entry's afternoon, and
  // 23:00Z on the 23rd is 09:30 on the 24th, its morning (in London or UTC neither is that afternoon).
  const fitting = {
    serviceIds: ['colour', 'cut'],
    staffId: 'ana',
    startsAt: Date.parse('2026-11-24T04:00:00Z'),
  };

  it('takes the first booking made or changed since the offer that gives the entry what it waits for', () => {
    const coming = [
      { ...fitting, id: 'had-before', updatedAt: offerMadeAt - 1 },
      { ...fitting, id: 'morning', startsAt: Date.parse('2026-11-23T23:00:00Z'), updatedAt: offerMadeAt },
      { ...fitting, id: 'with-ben', staffId: 'ben', updatedAt: offerMadeAt },
      { ...fitting, id: 'cut-alone', serviceIds: ['cut'], updatedAt: offerMadeAt },
      { ...fitting, id: 'booked-then', updatedAt: offerMadeAt },
      { ...fitting, id: 'later', updatedAt: offerMadeAt + 1 },
    ];
    expect(bookedWhileOffered(entry, offerMadeAt, coming, 'Australia/Adelaide')?.id).toBe('booked-then');
    expect(bookedWhileOffered(entry, offerMadeAt, coming.slice(0, 4), 'Australia/Adelaide')).toBeUndefined();
    expect(
      bookedWhileOffered({ ...entry, staffId: null }, offerMadeAt, coming.slice(2, 3), 'Australia/Adelaide')
        ?.id,
    ).toBe('with-ben');
  });
});
