import { describe, expect, it } from 'vitest';
import { findSlots } from '../../src/domain/availability/find-slots.ts';
import type {
  AvailabilityQuery,
  Slot,
  StaffSchedule,
  WorkingInterval,
} from '../../src/domain/availability/types.ts';
import { formatLocal } from '../../src/domain/time-format.ts';

// Every expectation below is written out by hand; the transition facts were checked against the
// installed tz data (2025c) with luxon. `now` is always explicit and well before the dates searched.

const NOW = Date.parse('2026-01-01T00:00:00Z');

const minute = (hhmm: string) => {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
};

const everyDay = (from: string, to: string): WorkingInterval[] =>
  [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, startMinute: minute(from), endMinute: minute(to) }));

const oneStaff = (from: string, to: string): StaffSchedule => ({
  id: 'st_1',
  name: 'Sam',
  workingHours: everyDay(from, to),
  timeOff: [],
  bookings: [],
});

function query(
  timezone: string,
  fromDate: string,
  opts: { grid: number; duration: number; from?: string; to?: string; now?: number; minNotice?: number },
): AvailabilityQuery {
  return {
    timezone,
    slotIntervalMinutes: opts.grid,
    minNoticeMinutes: opts.minNotice ?? 0,
    maxAdvanceDays: 365,
    closedDates: new Set(),
    services: [{ id: 'svc', durationMinutes: opts.duration, bufferAfterMinutes: 0 }],
    staff: [oneStaff(opts.from ?? '00:00', opts.to ?? '24:00')],
    fromDate,
    days: 1,
    now: opts.now ?? NOW,
  };
}

const starts = (slots: Slot[], zone: string) => slots.map((s) => formatLocal(s.startsAt, zone));
const spans = (slots: Slot[], zone: string) =>
  slots.map((s) => `${formatLocal(s.startsAt, zone)} ${formatLocal(s.endsAt, zone)}`);

describe('Europe/London spring forward (2026-03-29, 01:00 GMT -> 02:00 BST)', () => {
  const zone = 'Europe/London';

  it('offers no 01:xx start, +00:00 before the gap and +01:00 after, with elapsed-time ends', () => {
    const slots = findSlots(query(zone, '2026-03-29', { grid: 30, duration: 60 }));
    expect(starts(slots, zone).filter((s) => s.includes('T01:'))).toEqual([]);
    expect(spans(slots, zone).slice(0, 4)).toEqual([
      '2026-03-29T00:00:00+00:00 2026-03-29T02:00:00+01:00',
      '2026-03-29T00:30:00+00:00 2026-03-29T02:30:00+01:00',
      '2026-03-29T02:00:00+01:00 2026-03-29T03:00:00+01:00',
      '2026-03-29T02:30:00+01:00 2026-03-29T03:30:00+01:00',
    ]);
  });

  it('a 60-minute service starting 00:30 lasts 60 elapsed minutes', () => {
    const slots = findSlots(query(zone, '2026-03-29', { grid: 30, duration: 60 }));
    const slot = slots.find((s) => formatLocal(s.startsAt, zone) === '2026-03-29T00:30:00+00:00');
    expect(slot?.endsAt).toBe(Date.parse('2026-03-29T01:30:00Z'));
  });

  it('has 23 hourly slots over a 00:00-24:00 day', () => {
    const slots = findSlots(query(zone, '2026-03-29', { grid: 60, duration: 60 }));
    expect(slots).toHaveLength(23);
    const s = starts(slots, zone);
    expect([s[0], s[1], s[22]]).toEqual([
      '2026-03-29T00:00:00+00:00',
      '2026-03-29T02:00:00+01:00',
      '2026-03-29T23:00:00+01:00',
    ]);
  });
});

describe('Europe/London fall back (2026-10-25, 02:00 BST -> 01:00 GMT)', () => {
  const zone = 'Europe/London';

  it('offers 01:00 and 01:30 twice, first at +01:00 then at +00:00', () => {
    const slots = findSlots(query(zone, '2026-10-25', { grid: 30, duration: 30, to: '03:00' }));
    expect(starts(slots, zone)).toEqual([
      '2026-10-25T00:00:00+01:00',
      '2026-10-25T00:30:00+01:00',
      '2026-10-25T01:00:00+01:00',
      '2026-10-25T01:30:00+01:00',
      '2026-10-25T01:00:00+00:00',
      '2026-10-25T01:30:00+00:00',
      '2026-10-25T02:00:00+00:00',
      '2026-10-25T02:30:00+00:00',
    ]);
  });

  it('has 25 hourly slots over a 00:00-24:00 day', () => {
    const slots = findSlots(query(zone, '2026-10-25', { grid: 60, duration: 60 }));
    expect(slots).toHaveLength(25);
    expect(starts(slots, zone).slice(1, 3)).toEqual([
      '2026-10-25T01:00:00+01:00',
      '2026-10-25T01:00:00+00:00',
    ]);
  });

  it('a 60-minute service at 01:30+01:00 ends at 01:30+00:00', () => {
    const slots = findSlots(query(zone, '2026-10-25', { grid: 30, duration: 60 }));
    expect(spans(slots, zone)).toContain('2026-10-25T01:30:00+01:00 2026-10-25T01:30:00+00:00');
  });
});

describe('America/New_York', () => {
  const zone = 'America/New_York';

  it('spring forward 2026-03-08: no 02:xx, -05:00 then -04:00, 23 hourly slots', () => {
    const hourly = findSlots(query(zone, '2026-03-08', { grid: 60, duration: 60 }));
    expect(hourly).toHaveLength(23);
    expect(starts(hourly, zone).slice(1, 3)).toEqual([
      '2026-03-08T01:00:00-05:00',
      '2026-03-08T03:00:00-04:00',
    ]);
    const halfHourly = findSlots(query(zone, '2026-03-08', { grid: 30, duration: 60 }));
    expect(starts(halfHourly, zone).filter((s) => s.includes('T02:'))).toEqual([]);
    expect(spans(halfHourly, zone)).toContain('2026-03-08T01:30:00-05:00 2026-03-08T03:30:00-04:00');
  });

  it('fall back 2026-11-01: 01:00 and 01:30 twice (-04:00 then -05:00), 25 hourly slots', () => {
    const slots = findSlots(
      query(zone, '2026-11-01', { grid: 30, duration: 30, from: '00:30', to: '02:30' }),
    );
    expect(starts(slots, zone)).toEqual([
      '2026-11-01T00:30:00-04:00',
      '2026-11-01T01:00:00-04:00',
      '2026-11-01T01:30:00-04:00',
      '2026-11-01T01:00:00-05:00',
      '2026-11-01T01:30:00-05:00',
      '2026-11-01T02:00:00-05:00',
    ]);
    expect(findSlots(query(zone, '2026-11-01', { grid: 60, duration: 60 }))).toHaveLength(25);
  });
});

describe('Australia/Lord_Howe (30-minute DST)', () => {
  const zone = 'Australia/Lord_Howe';

  it('spring forward 2026-10-04 02:00 -> 02:30: 02:00 and 02:15 are not offered, 02:30 is', () => {
    const slots = findSlots(query(zone, '2026-10-04', { grid: 15, duration: 60 }));
    const s = starts(slots, zone);
    expect(s.slice(6, 9)).toEqual([
      '2026-10-04T01:30:00+10:30',
      '2026-10-04T01:45:00+10:30',
      '2026-10-04T02:30:00+11:00',
    ]);
    expect(s.filter((x) => x.includes('T02:00') || x.includes('T02:15'))).toEqual([]);
  });

  it('spring forward: 60 minutes from 01:45+10:30 ends 03:15+11:00', () => {
    const slots = findSlots(query(zone, '2026-10-04', { grid: 15, duration: 60 }));
    expect(spans(slots, zone)).toContain('2026-10-04T01:45:00+10:30 2026-10-04T03:15:00+11:00');
  });

  it('fall back 2026-04-05 02:00 -> 01:30: 01:30 and 01:45 are offered twice', () => {
    const slots = findSlots(
      query(zone, '2026-04-05', { grid: 15, duration: 15, from: '01:00', to: '03:00' }),
    );
    expect(starts(slots, zone)).toEqual([
      '2026-04-05T01:00:00+11:00',
      '2026-04-05T01:15:00+11:00',
      '2026-04-05T01:30:00+11:00',
      '2026-04-05T01:45:00+11:00',
      '2026-04-05T01:30:00+10:30',
      '2026-04-05T01:45:00+10:30',
      '2026-04-05T02:00:00+10:30',
      '2026-04-05T02:15:00+10:30',
      '2026-04-05T02:30:00+10:30',
      '2026-04-05T02:45:00+10:30',
    ]);
  });
});

describe('Asia/Kathmandu (+05:45, no DST)', () => {
  const zone = 'Asia/Kathmandu';

  it('puts the hourly grid on local :00, i.e. :15 UTC', () => {
    const slots = findSlots(
      query(zone, '2026-11-23', { grid: 60, duration: 60, from: '09:00', to: '11:00' }),
    );
    expect(slots.map((s) => s.startsAt)).toEqual([
      Date.parse('2026-11-23T03:15:00Z'),
      Date.parse('2026-11-23T04:15:00Z'),
    ]);
    expect(starts(slots, zone)).toEqual(['2026-11-23T09:00:00+05:45', '2026-11-23T10:00:00+05:45']);
  });

  it('counts minNotice in elapsed minutes from a UTC now', () => {
    // now = 03:00Z = 08:45 local; 75 minutes later is exactly 10:00 local.
    const base = {
      grid: 60,
      duration: 60,
      from: '09:00',
      to: '12:00',
      now: Date.parse('2026-11-23T03:00:00Z'),
    };
    expect(starts(findSlots(query(zone, '2026-11-23', { ...base, minNotice: 75 })), zone)).toEqual([
      '2026-11-23T10:00:00+05:45',
      '2026-11-23T11:00:00+05:45',
    ]);
    expect(starts(findSlots(query(zone, '2026-11-23', { ...base, minNotice: 76 })), zone)).toEqual([
      '2026-11-23T11:00:00+05:45',
    ]);
  });
});

describe('America/Santiago (changes at midnight)', () => {
  const zone = 'America/Santiago';

  it('spring forward 2026-09-06 00:00 -> 01:00: no 00:xx slots, the day starts at 01:00-03:00', () => {
    const slots = findSlots(query(zone, '2026-09-06', { grid: 60, duration: 60, to: '03:00' }));
    expect(spans(slots, zone)).toEqual([
      '2026-09-06T01:00:00-03:00 2026-09-06T02:00:00-03:00',
      '2026-09-06T02:00:00-03:00 2026-09-06T03:00:00-03:00',
    ]);
  });

  it('fall back 2026-04-05 00:00 -> 2026-04-04 23:00: 23:xx of 04-04 is offered twice', () => {
    const slots = findSlots(
      query(zone, '2026-04-04', { grid: 30, duration: 30, from: '22:00', to: '24:00' }),
    );
    expect(starts(slots, zone)).toEqual([
      '2026-04-04T22:00:00-03:00',
      '2026-04-04T22:30:00-03:00',
      '2026-04-04T23:00:00-03:00',
      '2026-04-04T23:30:00-03:00',
      '2026-04-04T23:00:00-04:00',
      '2026-04-04T23:30:00-04:00',
    ]);
    expect(formatLocal(slots[5]!.endsAt, zone)).toBe('2026-04-05T00:00:00-04:00');
  });
});
