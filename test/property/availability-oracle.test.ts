import { describe, expect, it } from 'vitest';
import type { AvailabilityQuery, StaffSchedule } from '../../src/domain/availability/types.ts';
import { oracleSlots } from '../helpers/availability-oracle.ts';

// Hand-checked answers, so the oracle itself is not taken on trust.
const staff = (id: string, name: string, startMinute: number, endMinute: number): StaffSchedule => ({
  id,
  name,
  workingHours: [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, startMinute, endMinute })),
  timeOff: [],
  bookings: [],
});

const query = (over: Partial<AvailabilityQuery>): AvailabilityQuery => ({
  timezone: 'Europe/London',
  slotIntervalMinutes: 60,
  minNoticeMinutes: 0,
  maxAdvanceDays: 30,
  closedDates: new Set(),
  services: [{ id: 'svc', durationMinutes: 60, bufferAfterMinutes: 0 }],
  staff: [staff('s', 'Sam', 0, 180)],
  fromDate: '2026-03-29',
  days: 1,
  now: Date.parse('2026-03-20T00:00:00Z'),
  ...over,
});

const starts = (q: AvailabilityQuery) => oracleSlots(q).map((s) => new Date(s.startsAt).toISOString());

describe('availability oracle', () => {
  it('skips the spring-forward gap and measures elapsed time', () => {
    // London 2026-03-29: 01:00-02:00 local does not exist; working 00:00 GMT .. 03:00 BST = 02:00Z.
    expect(
      starts(
        query({
          slotIntervalMinutes: 30,
          services: [{ id: 'x', durationMinutes: 30, bufferAfterMinutes: 0 }],
        }),
      ),
    ).toEqual([
      '2026-03-29T00:00:00.000Z',
      '2026-03-29T00:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T01:30:00.000Z',
    ]);
  });

  it('offers both instants of a repeated wall-clock time', () => {
    // London 2026-10-25: 00:00 BST = 23:00Z; 01:00 BST and 01:00 GMT; working until 03:00 GMT = 03:00Z.
    expect(starts(query({ fromDate: '2026-10-25', now: Date.parse('2026-10-20T00:00:00Z') }))).toEqual([
      '2026-10-24T23:00:00.000Z',
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T02:00:00.000Z',
    ]);
  });

  it('starts a day without a midnight at its first instant and merges intervals touching across a gap', () => {
    // Santiago 2026-09-06 starts at 01:00 -03 (04:00Z); 00:00-01:30 and 01:30-02:00 touch.
    const split: StaffSchedule = {
      ...staff('s', 'Sam', 0, 90),
      workingHours: [
        { weekday: 7, startMinute: 0, endMinute: 90 },
        { weekday: 7, startMinute: 90, endMinute: 120 },
      ],
    };
    const q = query({
      timezone: 'America/Santiago',
      fromDate: '2026-09-06',
      staff: [split],
      now: Date.parse('2026-09-01T00:00:00Z'),
    });
    expect(starts(q)).toEqual(['2026-09-06T04:00:00.000Z']);
    // London: 00:00-00:30 ends at 00:30Z; a 01:30 end falls in the gap and maps to 02:00 BST = 01:00Z,
    // where 02:00-03:00 starts, so 00:00 GMT .. 03:00 BST is one stretch.
    const gap: StaffSchedule = {
      ...split,
      workingHours: [
        { weekday: 7, startMinute: 0, endMinute: 90 },
        { weekday: 7, startMinute: 120, endMinute: 180 },
      ],
    };
    const long = [{ id: 'x', durationMinutes: 120, bufferAfterMinutes: 0 }];
    expect(starts(query({ staff: [gap], services: long }))).toEqual(['2026-03-29T00:00:00.000Z']);
  });

  it('applies notice, advance, closures, buffers, live holds and the any-staff rule', () => {
    const now = Date.parse('2026-06-01T08:10:00Z'); // 09:10 BST, Monday
    const busy: StaffSchedule = {
      ...staff('a', 'ana', 540, 720),
      bookings: [
        {
          startsAt: now + 50 * 60_000,
          endsAt: now + 110 * 60_000,
          blockedUntil: now + 120 * 60_000,
          holdExpiresAt: null,
        },
        {
          startsAt: now - 70 * 60_000,
          endsAt: now + 590 * 60_000,
          blockedUntil: now + 590 * 60_000,
          holdExpiresAt: now,
        },
      ],
    };
    const q = query({
      fromDate: '2026-06-01',
      days: 3,
      now,
      minNoticeMinutes: 50, // 10:00 BST
      maxAdvanceDays: 1,
      closedDates: new Set(['2026-06-02']),
      services: [{ id: 'x', durationMinutes: 50, bufferAfterMinutes: 10 }],
      staff: [busy, staff('b', 'Ana', 540, 660), staff('c', 'Ana', 600, 720)],
    });
    // 10:00: a busy; b (Ana) before c (Ana) by id. 11:00: a free with 60 booked minutes, c with 0.
    expect(oracleSlots(q).map((s) => [new Date(s.startsAt).toISOString(), s.staffId])).toEqual([
      ['2026-06-01T09:00:00.000Z', 'b'],
      ['2026-06-01T10:00:00.000Z', 'c'],
    ]);
  });

  it('blocks external busy times like time off, across the spring-forward gap', () => {
    // Busy 00:30 GMT .. 02:30 BST (00:30Z .. 01:30Z): only 00:00 and 01:30 remain for 30 minutes.
    const busy = new Map([
      ['s', [{ start: Date.parse('2026-03-29T00:30:00Z'), end: Date.parse('2026-03-29T01:30:00Z') }]],
    ]);
    const q = query({
      slotIntervalMinutes: 30,
      services: [{ id: 'x', durationMinutes: 30, bufferAfterMinutes: 0 }],
    });
    expect(oracleSlots(q, busy).map((s) => new Date(s.startsAt).toISOString())).toEqual([
      '2026-03-29T00:00:00.000Z',
      '2026-03-29T01:30:00.000Z',
    ]);
  });
});
