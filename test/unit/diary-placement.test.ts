import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { repeatedTimeLabel, twinInstant } from '../../src/domain/repeated-wall-times.ts';
import {
  clockChanges,
  type DayFrame,
  lanes,
  wallMinute,
  wallSpan,
} from '../../src/http/console/diary-page.ts';

/**
 * Where the console's diary places things on a day's axis (the wall clock), on the days the clocks
 * change: forward and back, in London, New York, Sydney, Adelaide (a half-hour zone), Lord Howe Island
 * (a 30-minute change) and Santiago (a change at midnight), and the lanes that keep overlapping blocks
 * apart; and the labels that tell a repeated wall time from its twin. The transitions were checked
 * against the installed tz data with luxon.
 */
function frame(date: string, zone: string): DayFrame {
  const start = DateTime.fromISO(date, { zone }).startOf('day');
  return { date, start: start.toMillis(), end: start.plus({ days: 1 }).startOf('day').toMillis() };
}

const at = (iso: string) => Date.parse(iso);

describe('wall minutes on clock-change days', () => {
  it('puts 10:00 at 600 on both change days, where elapsed minutes would say 660 and 540', () => {
    const back = frame('2026-10-25', 'Europe/London');
    expect(wallMinute(at('2026-10-25T10:00:00Z'), back, 'Europe/London')).toBe(600);
    expect((at('2026-10-25T10:00:00Z') - back.start) / 60_000).toBe(660);
    const forward = frame('2027-03-28', 'Europe/London');
    expect(wallMinute(at('2027-03-28T09:00:00Z'), forward, 'Europe/London')).toBe(600);
    expect((at('2027-03-28T09:00:00Z') - forward.start) / 60_000).toBe(540);
  });

  it('gives both passes of the repeated stretch the same minute, and clamps to the day', () => {
    const day = frame('2026-10-25', 'Europe/London');
    expect(wallMinute(at('2026-10-25T00:30:00Z'), day, 'Europe/London')).toBe(90); // 01:30 BST
    expect(wallMinute(at('2026-10-25T01:30:00Z'), day, 'Europe/London')).toBe(90); // 01:30 GMT
    expect(wallMinute(at('2026-10-24T22:00:00Z'), day, 'Europe/London')).toBe(0);
    expect(wallMinute(day.end, day, 'Europe/London')).toBe(1440);
    expect(wallMinute(day.end - 60_000, day, 'Europe/London')).toBe(1439);
  });

  it('places 10:00 at 600 in other zones on their change days', () => {
    const cases: [string, string, string][] = [
      ['America/New_York', '2026-11-01', '2026-11-01T15:00:00Z'],
      ['America/New_York', '2027-03-14', '2027-03-14T14:00:00Z'],
      ['Australia/Sydney', '2027-04-04', '2027-04-04T00:00:00Z'],
      ['Australia/Sydney', '2026-10-04', '2026-10-03T23:00:00Z'],
      ['Australia/Adelaide', '2027-04-04', '2027-04-04T00:30:00Z'],
      ['Australia/Adelaide', '2026-10-04', '2026-10-03T23:30:00Z'],
      ['Australia/Lord_Howe', '2027-04-04', '2027-04-03T23:30:00Z'],
      ['Australia/Lord_Howe', '2026-10-04', '2026-10-03T23:00:00Z'],
      ['Asia/Kathmandu', '2026-10-25', '2026-10-25T04:15:00Z'],
      ['America/Santiago', '2026-09-06', '2026-09-06T13:00:00Z'],
      ['America/Santiago', '2027-04-03', '2027-04-03T13:00:00Z'],
    ];
    for (const [zone, date, instant] of cases) {
      expect([zone, date, wallMinute(at(instant), frame(date, zone), zone)]).toEqual([zone, date, 600]);
    }
  });
});

describe('wall spans', () => {
  it('covers the skipped hour an interval crosses, and all a repeated stretch showed', () => {
    const forward = frame('2027-03-28', 'Europe/London');
    // 00:30 GMT to 02:30 BST: one hour spent, two on the clock.
    expect(
      wallSpan(at('2027-03-28T00:30:00Z'), at('2027-03-28T01:30:00Z'), forward, 'Europe/London'),
    ).toEqual({
      start: 30,
      end: 150,
    });
    const back = frame('2026-10-25', 'Europe/London');
    // 01:30 BST to 01:15 GMT: the clock showed 01:30-02:00 then 01:00-01:15.
    expect(wallSpan(at('2026-10-25T00:30:00Z'), at('2026-10-25T01:15:00Z'), back, 'Europe/London')).toEqual({
      start: 60,
      end: 120,
    });
    // Each pass of the repeated hour alone lies at its wall time.
    expect(wallSpan(at('2026-10-25T00:00:00Z'), at('2026-10-25T00:45:00Z'), back, 'Europe/London')).toEqual({
      start: 60,
      end: 105,
    });
    expect(wallSpan(at('2026-10-25T01:00:00Z'), at('2026-10-25T01:45:00Z'), back, 'Europe/London')).toEqual({
      start: 60,
      end: 105,
    });
    // Ordinary hours on the day: 10:00-11:00 GMT.
    expect(wallSpan(at('2026-10-25T10:00:00Z'), at('2026-10-25T11:00:00Z'), back, 'Europe/London')).toEqual({
      start: 600,
      end: 660,
    });
  });

  it('clamps what runs over midnight to the day', () => {
    const day = frame('2026-10-25', 'Europe/London');
    expect(wallSpan(at('2026-10-24T22:30:00Z'), at('2026-10-25T00:30:00Z'), day, 'Europe/London')).toEqual({
      start: 0,
      end: 90,
    });
    expect(wallSpan(at('2026-10-25T23:30:00Z'), at('2026-10-26T01:00:00Z'), day, 'Europe/London')).toEqual({
      start: 1410,
      end: 1440,
    });
  });

  it('places Lord Howe Island’s repeated half hour at its wall time on both passes', () => {
    const zone = 'Australia/Lord_Howe';
    const day = frame('2027-04-04', zone);
    // 01:45 LHDT (+11) and 01:45 LHST (+10:30), 30 minutes apart.
    expect(wallSpan(at('2027-04-03T14:45:00Z'), at('2027-04-03T15:15:00Z'), day, zone)).toEqual({
      start: 90,
      end: 120,
    });
    expect(wallMinute(at('2027-04-03T14:45:00Z'), day, zone)).toBe(105);
    expect(wallMinute(at('2027-04-03T15:15:00Z'), day, zone)).toBe(105);
  });
});

describe('clock changes of a day', () => {
  it('says where the clocks jump, forward and back', () => {
    expect(clockChanges(frame('2026-10-25', 'Europe/London'), 'Europe/London')).toEqual([
      { at: at('2026-10-25T01:00:00Z'), before: 120, after: 60 },
    ]);
    expect(clockChanges(frame('2027-03-28', 'Europe/London'), 'Europe/London')).toEqual([
      { at: at('2027-03-28T01:00:00Z'), before: 60, after: 120 },
    ]);
    expect(clockChanges(frame('2027-04-04', 'Australia/Sydney'), 'Australia/Sydney')).toEqual([
      { at: at('2027-04-03T16:00:00Z'), before: 180, after: 120 },
    ]);
    expect(clockChanges(frame('2027-04-04', 'Australia/Lord_Howe'), 'Australia/Lord_Howe')).toEqual([
      { at: at('2027-04-03T15:00:00Z'), before: 120, after: 90 },
    ]);
    expect(clockChanges(frame('2026-10-04', 'Australia/Lord_Howe'), 'Australia/Lord_Howe')).toEqual([
      { at: at('2026-10-03T15:30:00Z'), before: 120, after: 150 },
    ]);
    expect(clockChanges(frame('2026-10-24', 'Europe/London'), 'Europe/London')).toEqual([]);
  });

  it('finds a change at midnight on the day it belongs to', () => {
    // Santiago skips 00:00-01:00 on 6 September 2026 and repeats 23:00-24:00 on 3 April 2027.
    expect(clockChanges(frame('2026-09-05', 'America/Santiago'), 'America/Santiago')).toEqual([]);
    expect(clockChanges(frame('2026-09-06', 'America/Santiago'), 'America/Santiago')).toEqual([
      { at: at('2026-09-06T04:00:00Z'), before: 0, after: 60 },
    ]);
    expect(clockChanges(frame('2027-04-03', 'America/Santiago'), 'America/Santiago')).toEqual([
      { at: at('2027-04-04T03:00:00Z'), before: 1440, after: 1380 },
    ]);
  });
});

describe('lanes', () => {
  it('puts overlapping blocks side by side and leaves the others whole', () => {
    expect(
      lanes([
        { start: 60, end: 120 },
        { start: 60, end: 120 },
        { start: 600, end: 645 },
      ]),
    ).toEqual([
      { lane: 0, of: 2 },
      { lane: 1, of: 2 },
      { lane: 0, of: 1 },
    ]);
  });

  it('shares the width across a chain of overlaps, reusing a lane once it is free', () => {
    expect(
      lanes([
        { start: 60, end: 120 },
        { start: 0, end: 60 },
        { start: 30, end: 90 },
        { start: 120, end: 180 },
      ]),
    ).toEqual([
      { lane: 0, of: 2 },
      { lane: 0, of: 2 },
      { lane: 1, of: 2 },
      { lane: 0, of: 1 },
    ]);
  });
});

describe('labels of repeated wall times', () => {
  it('names the zone of each pass of the repeated stretch, and nothing else', () => {
    expect(repeatedTimeLabel(at('2026-10-25T00:30:00Z'), 'Europe/London', 'en-GB')).toBe('BST');
    expect(repeatedTimeLabel(at('2026-10-25T01:30:00Z'), 'Europe/London', 'en-GB')).toBe('GMT');
    expect(repeatedTimeLabel(at('2026-10-25T02:00:00Z'), 'Europe/London', 'en-GB')).toBe('');
    expect(repeatedTimeLabel(at('2026-10-24T23:59:00Z'), 'Europe/London', 'en-GB')).toBe('');
    expect(repeatedTimeLabel(at('2027-03-28T01:30:00Z'), 'Europe/London', 'en-GB')).toBe('');
    expect(repeatedTimeLabel(at('2027-04-03T15:00:00Z'), 'Australia/Sydney', 'en-AU')).toBe('AEDT');
    expect(repeatedTimeLabel(at('2027-04-03T16:00:00Z'), 'Australia/Sydney', 'en-AU')).toBe('AEST');
    // An English locale without letters for the zone borrows another's (issue 44: "GMT+11" means
    // little to a customer in Sydney); another language without names gives the offsets.
    expect(repeatedTimeLabel(at('2027-04-03T15:00:00Z'), 'Australia/Sydney', 'en-GB')).toBe('AEDT');
    expect(repeatedTimeLabel(at('2027-04-03T16:00:00Z'), 'Australia/Sydney', 'en-GB')).toBe('AEST');
    expect(repeatedTimeLabel(at('2027-04-03T15:00:00Z'), 'Australia/Sydney', 'fr-FR')).toMatch(/^UTC\+11$/);
    expect(repeatedTimeLabel(at('2027-04-03T16:00:00Z'), 'Australia/Sydney', 'fr-FR')).toMatch(/^UTC\+10$/);
    expect(repeatedTimeLabel(at('2027-04-03T14:45:00Z'), 'Australia/Lord_Howe', 'en-AU')).toBe('LHDT');
    expect(repeatedTimeLabel(at('2027-04-03T15:15:00Z'), 'Australia/Lord_Howe', 'en-AU')).toBe('LHST');
    expect(repeatedTimeLabel(at('2027-04-03T15:30:00Z'), 'Australia/Lord_Howe', 'en-AU')).toBe('');
    expect(repeatedTimeLabel(at('2026-11-23T09:00:00Z'), 'Asia/Kathmandu', 'en-GB')).toBe('');
  });

  it('finds the twin of a repeated time, either way round', () => {
    expect(twinInstant(at('2026-10-25T00:30:00Z'), 'Europe/London')).toBe(at('2026-10-25T01:30:00Z'));
    expect(twinInstant(at('2026-10-25T01:30:00Z'), 'Europe/London')).toBe(at('2026-10-25T00:30:00Z'));
    expect(twinInstant(at('2027-04-03T23:00:00Z'), 'America/Santiago')).toBeNull();
    expect(twinInstant(at('2027-04-04T02:30:00Z'), 'America/Santiago')).toBe(at('2027-04-04T03:30:00Z'));
  });
});
