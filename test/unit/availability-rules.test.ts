import { describe, expect, it } from 'vitest';
import { findSlots } from '../../src/domain/availability/find-slots.ts';
import type {
  AvailabilityQuery,
  BusyBooking,
  Slot,
  StaffSchedule,
  WorkingInterval,
} from '../../src/domain/availability/types.ts';
import { formatLocal } from '../../src/domain/time-format.ts';

// Europe/London in winter (+00:00). 2026-01-12 is a Monday. Expectations are written out by hand.
const ZONE = 'Europe/London';
const NOW = Date.parse('2026-01-01T00:00:00Z');
const at = (hhmm: string, date = '2026-01-12') => Date.parse(`${date}T${hhmm}:00Z`);

const minute = (hhmm: string) => {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
};

const everyDay = (from: string, to: string): WorkingInterval[] =>
  [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, startMinute: minute(from), endMinute: minute(to) }));

const staff = (over: Partial<StaffSchedule> = {}): StaffSchedule => ({
  id: 'st_1',
  name: 'Sam',
  workingHours: everyDay('09:00', '13:00'),
  timeOff: [],
  bookings: [],
  ...over,
});

const booking = (
  from: string,
  to: string,
  blockedTo = to,
  holdExpiresAt: number | null = null,
): BusyBooking => ({
  startsAt: at(from),
  endsAt: at(to),
  blockedUntil: at(blockedTo),
  holdExpiresAt,
});

const query = (over: Partial<AvailabilityQuery> = {}): AvailabilityQuery => ({
  timezone: ZONE,
  slotIntervalMinutes: 60,
  minNoticeMinutes: 0,
  maxAdvanceDays: 60,
  closedDates: new Set(),
  services: [{ id: 'svc', durationMinutes: 60, bufferAfterMinutes: 0 }],
  staff: [staff()],
  fromDate: '2026-01-12',
  days: 1,
  now: NOW,
  ...over,
});

const starts = (slots: Slot[]) => slots.map((s) => formatLocal(s.startsAt, ZONE));
const hhmm = (slots: Slot[]) => slots.map((s) => formatLocal(s.startsAt, ZONE).slice(11, 16));

describe('closures and time off', () => {
  it('offers nothing on a closed date but keeps the next day', () => {
    const slots = findSlots(query({ closedDates: new Set(['2026-01-12']), days: 2 }));
    expect(starts(slots)).toEqual([
      '2026-01-13T09:00:00+00:00',
      '2026-01-13T10:00:00+00:00',
      '2026-01-13T11:00:00+00:00',
      '2026-01-13T12:00:00+00:00',
    ]);
  });

  it('time off splits the working day', () => {
    const slots = findSlots(
      query({
        slotIntervalMinutes: 30,
        staff: [staff({ timeOff: [{ start: at('10:30'), end: at('11:30') }] })],
      }),
    );
    expect(hhmm(slots)).toEqual(['09:00', '09:30', '11:30', '12:00']);
  });
});

describe('bookings and buffers', () => {
  it('a booking blocks up to its blocked_until; a slot may start exactly there', () => {
    const slots = findSlots(
      query({ slotIntervalMinutes: 15, staff: [staff({ bookings: [booking('10:00', '11:00', '11:15')] })] }),
    );
    expect(hhmm(slots)).toEqual(['09:00', '11:15', '11:30', '11:45', '12:00']);
  });

  it("a new slot's buffer may not overlap the next booking but may run past working hours", () => {
    const slots = findSlots(
      query({
        slotIntervalMinutes: 15,
        services: [{ id: 'svc', durationMinutes: 60, bufferAfterMinutes: 15 }],
        staff: [staff({ bookings: [booking('11:00', '12:00')] })],
      }),
    );
    // 10:00 would end at 11:00 but its buffer runs to 11:15; 12:00 ends at 13:00, buffer to 13:15.
    expect(hhmm(slots)).toEqual(['09:00', '09:15', '09:30', '09:45', '12:00']);
    expect(slots.map((s) => s.endsAt - s.startsAt)).toEqual(Array(5).fill(60 * 60_000));
  });

  it('a lapsed pending hold does not block, a live one does', () => {
    const now = at('08:00');
    const lapsed = findSlots(
      query({ now, staff: [staff({ bookings: [booking('10:00', '11:00', '11:00', now)] })] }),
    );
    expect(hhmm(lapsed)).toEqual(['09:00', '10:00', '11:00', '12:00']);
    const live = findSlots(
      query({ now, staff: [staff({ bookings: [booking('10:00', '11:00', '11:00', now + 1)] })] }),
    );
    expect(hhmm(live)).toEqual(['09:00', '11:00', '12:00']);
  });

  it('runs several services back to back; only the last buffer blocks', () => {
    const slots = findSlots(
      query({
        slotIntervalMinutes: 15,
        services: [
          { id: 'cut', durationMinutes: 30, bufferAfterMinutes: 10 },
          { id: 'dry', durationMinutes: 45, bufferAfterMinutes: 5 },
        ],
        // 09:00 ends 10:15 and blocks to 10:20, exactly the next booking's start.
        staff: [staff({ workingHours: everyDay('09:00', '12:00'), bookings: [booking('10:20', '10:50')] })],
      }),
    );
    expect(slots.map((s) => `${formatLocal(s.startsAt, ZONE)} ${formatLocal(s.endsAt, ZONE)}`)).toEqual([
      '2026-01-12T09:00:00+00:00 2026-01-12T10:15:00+00:00',
    ]);
  });
});

describe('notice and advance window', () => {
  it('offers a slot exactly at now + minNotice, not one before', () => {
    const base = query({ slotIntervalMinutes: 30, minNoticeMinutes: 60 });
    expect(hhmm(findSlots({ ...base, now: at('09:00') }))[0]).toBe('10:00');
    expect(hhmm(findSlots({ ...base, now: at('09:00') + 1 }))[0]).toBe('10:30');
  });

  it('offers local today + maxAdvanceDays, not the day after', () => {
    const slots = findSlots(query({ now: at('08:00'), maxAdvanceDays: 2, fromDate: '2026-01-13', days: 3 }));
    expect([...new Set(starts(slots).map((s) => s.slice(0, 10)))]).toEqual(['2026-01-13', '2026-01-14']);
  });

  it('counts maxAdvanceDays from the local date, not the UTC one', () => {
    // 2026-01-11T20:00Z is 2026-01-12 01:45 in Kathmandu: today is the 12th there.
    const slots = findSlots(
      query({
        timezone: 'Asia/Kathmandu',
        now: Date.parse('2026-01-11T20:00:00Z'),
        maxAdvanceDays: 1,
        fromDate: '2026-01-13',
        days: 2,
      }),
    );
    expect(slots.map((s) => formatLocal(s.startsAt, 'Asia/Kathmandu').slice(0, 10))).toEqual(
      Array(4).fill('2026-01-13'),
    );
  });
});

describe('any staff', () => {
  it('picks the free member with fewer booked minutes that day, buffers excluded', () => {
    const alice = staff({ id: 'st_a', name: 'Alice', bookings: [booking('09:00', '10:00')] }); // 60 min
    const bob = staff({ id: 'st_b', name: 'Bob', bookings: [booking('09:00', '09:30', '10:30')] }); // 30 min
    const slots = findSlots(query({ staff: [alice, bob] }));
    expect(slots.map((s) => `${formatLocal(s.startsAt, ZONE).slice(11, 16)} ${s.staffId}`)).toEqual([
      '10:00 st_a',
      '11:00 st_b',
      '12:00 st_b',
    ]);
  });

  it('breaks ties by name, then by id', () => {
    const byName = findSlots(
      query({ staff: [staff({ id: 'st_1', name: 'Bea' }), staff({ id: 'st_9', name: 'Ann' })] }),
    );
    expect(new Set(byName.map((s) => s.staffId))).toEqual(new Set(['st_9']));
    const byId = findSlots(
      query({ staff: [staff({ id: 'st_b', name: 'Sam' }), staff({ id: 'st_a', name: 'Sam' })] }),
    );
    expect(new Set(byId.map((s) => s.staffId))).toEqual(new Set(['st_a']));
    expect(byId).toHaveLength(4);
  });
});

describe('days', () => {
  it('spans 14 local days and maps weekdays with Monday = 1', () => {
    const workingHours: WorkingInterval[] = [
      { weekday: 1, startMinute: minute('09:00'), endMinute: minute('10:00') },
      { weekday: 7, startMinute: minute('09:00'), endMinute: minute('10:00') },
    ];
    const slots = findSlots(query({ staff: [staff({ workingHours })], days: 14 }));
    expect(starts(slots)).toEqual([
      '2026-01-12T09:00:00+00:00',
      '2026-01-18T09:00:00+00:00',
      '2026-01-19T09:00:00+00:00',
      '2026-01-25T09:00:00+00:00',
    ]);
  });
});
