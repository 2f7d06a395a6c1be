import { describe, expect, it } from 'vitest';
import { findSlotAt, findSlots } from '../../src/domain/availability/find-slots.ts';
import type { AvailabilityQuery } from '../../src/domain/availability/types.ts';

const at = (iso: string) => Date.parse(iso);
const everyDay = (startMinute: number, endMinute: number) =>
  [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, startMinute, endMinute }));

/** Two staff, bookings, a pending hold, time off, across London's spring-forward night. */
const query: AvailabilityQuery = {
  timezone: 'Europe/London',
  slotIntervalMinutes: 15,
  minNoticeMinutes: 30,
  maxAdvanceDays: 30,
  closedDates: new Set(['2026-03-31']),
  services: [
    { id: 'cut', durationMinutes: 45, bufferAfterMinutes: 10 },
    { id: 'wash', durationMinutes: 15, bufferAfterMinutes: 5 },
  ],
  staff: [
    {
      id: 'a',
      name: 'Ana',
      workingHours: everyDay(0, 1440),
      timeOff: [{ start: at('2026-03-29T12:00:00Z'), end: at('2026-03-29T13:30:00Z') }],
      bookings: [
        {
          startsAt: at('2026-03-29T09:00:00Z'),
          endsAt: at('2026-03-29T10:00:00Z'),
          blockedUntil: at('2026-03-29T10:10:00Z'),
          holdExpiresAt: null,
        },
        {
          startsAt: at('2026-03-30T09:00:00Z'),
          endsAt: at('2026-03-30T10:00:00Z'),
          blockedUntil: at('2026-03-30T10:00:00Z'),
          holdExpiresAt: at('2026-03-28T23:10:00Z'),
        },
      ],
    },
    {
      id: 'b',
      name: 'Bo',
      workingHours: [...everyDay(480, 720), ...everyDay(780, 1200)],
      timeOff: [],
      bookings: [
        {
          startsAt: at('2026-03-29T14:00:00Z'),
          endsAt: at('2026-03-29T15:00:00Z'),
          blockedUntil: at('2026-03-29T15:05:00Z'),
          holdExpiresAt: null,
        },
      ],
    },
  ],
  fromDate: '2026-03-28',
  days: 4,
  now: at('2026-03-28T23:00:00Z'),
};

describe('findSlotAt', () => {
  it('agrees with findSlots at every grid instant: the offered slot where there is one, null elsewhere', () => {
    const slots = findSlots(query);
    expect(slots.length).toBeGreaterThan(100);
    const byStart = new Map(slots.map((s) => [s.startsAt, s]));
    const { fromDate: _from, days: _days, ...rest } = query;
    // The range's local days: 28 March 00:00 GMT to 1 April 00:00 BST.
    for (let t = at('2026-03-28T00:00:00Z'); t < at('2026-03-31T23:00:00Z'); t += 15 * 60_000) {
      expect(findSlotAt(rest, t), new Date(t).toISOString()).toEqual(byStart.get(t) ?? null);
    }
  });

  it('agrees for one staff member at a time', () => {
    for (const member of query.staff) {
      const single = { ...query, staff: [member] };
      const { fromDate: _from, days: _days, ...rest } = single;
      for (const slot of findSlots(single)) expect(findSlotAt(rest, slot.startsAt)).toEqual(slot);
    }
  });

  it('says no to an instant off the grid', () => {
    const first = findSlots(query)[0]!;
    const { fromDate: _from, days: _days, ...rest } = query;
    expect(findSlotAt(rest, first.startsAt + 60_000)).toBeNull();
  });
});
