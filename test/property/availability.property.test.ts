import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { busyTimes } from '../../src/app/calendars/busy-times.ts';
import { busyPieces } from '../../src/data/calendar-repository.ts';
import { findSlots } from '../../src/domain/availability/find-slots.ts';
import type { AvailabilityQuery, Slot, StaffSchedule } from '../../src/domain/availability/types.ts';
import { holdEnd, LEAST_MINUTES_TO_FINISH, noticeMinutes } from '../../src/domain/booking/state-machine.ts';
import { formatLocal } from '../../src/domain/time-format.ts';
import {
  addDays,
  bookedMinutes,
  isLive,
  localDateOf,
  localMinutes,
  oracleSlots,
  workingBlocks,
} from '../helpers/availability-oracle.ts';
import {
  busyQueryArbitrary,
  type ExternalEvent,
  eventsAsBusy,
  eventsAsIcs,
  queryArb,
  queryArbitrary,
} from './availability-arbitraries.ts';

const MINUTE = 60_000;
const RUNS = { numRuns: 150 };

const totalMinutes = (q: AvailabilityQuery) => q.services.reduce((sum, s) => sum + s.durationMinutes, 0);
const bufferMinutes = (q: AvailabilityQuery) => q.services[q.services.length - 1]?.bufferAfterMinutes ?? 0;
const staffOf = (q: AvailabilityQuery, slot: Slot): StaffSchedule => {
  const staff = q.staff.find((s) => s.id === slot.staffId);
  if (!staff) throw new Error(`slot names unknown staff ${slot.staffId}`);
  return staff;
};
const only = (q: AvailabilityQuery, staff: StaffSchedule): AvailabilityQuery => ({ ...q, staff: [staff] });
const show = (q: AvailabilityQuery, slots: Slot[]) =>
  slots.map((s) => `${DateTime.fromMillis(s.startsAt, { zone: q.timezone }).toISO()} ${s.staffId}`);

// The oracle walks every minute, so these run for seconds each; allow for a loaded machine.
describe('findSlots properties (against a brute-force oracle)', { timeout: 60_000 }, () => {
  const matchesOracle = (q: AvailabilityQuery) => {
    const [actual, expected] = [findSlots(q), oracleSlots(q)];
    expect(show(q, actual)).toEqual(show(q, expected)); // readable diff first
    expect(actual).toEqual(expected);
    for (const staff of q.staff) {
      expect(findSlots(only(q, staff))).toEqual(oracleSlots(only(q, staff)));
    }
  };

  it('a. equals the oracle, for any staff and for each staff member alone', () => {
    fc.assert(fc.property(queryArb, matchesOracle), RUNS);
  });

  it('a. equals the oracle within days of an offset change', () => {
    fc.assert(fc.property(queryArbitrary(true), matchesOracle), RUNS);
  });

  /**
   * External busy calendars (design.md 9.6) as production reads them: each staff member's events
   * written as an iCalendar file, expanded by ical.js (busy-times.ts), kept in pieces (as the
   * database keeps them) and given as the staff member's busy times (as calendarsOf does, apart from
   * their time off: StaffSchedule.busy); the oracle reads the same
   * events itself, occurrence by occurrence in wall time, and blocks them whole.
   */
  const matchesOracleWithBusy = ({
    query,
    events,
  }: {
    query: AvailabilityQuery;
    events: ExternalEvent[];
  }) => {
    const base = Date.parse(`${query.fromDate}T00:00:00Z`);
    const window = { start: base - 3 * 86_400_000, end: base + 8 * 86_400_000 };
    const engineQuery: AvailabilityQuery = {
      ...query,
      staff: query.staff.map((s) => {
        const mine = events.filter((e) => e.staffId === s.id);
        const busy = mine.length === 0 ? [] : busyTimes(eventsAsIcs(query.timezone, mine), window, 'UTC');
        return { ...s, busy: busyPieces(busy) };
      }),
    };
    const expected = oracleSlots(query, eventsAsBusy(query.timezone, events));
    const actual = findSlots(engineQuery);
    expect(show(query, actual)).toEqual(show(query, expected));
    expect(actual).toEqual(expected);
  };

  it('a. equals the oracle with external busy calendars', () => {
    fc.assert(fc.property(busyQueryArbitrary(), matchesOracleWithBusy), RUNS);
  });

  it('a. equals the oracle with external busy calendars within days of an offset change', () => {
    fc.assert(fc.property(busyQueryArbitrary(true), matchesOracleWithBusy), RUNS);
  });

  it("b. no slot's block overlaps its staff member's live bookings or time off", () => {
    fc.assert(
      fc.property(queryArb, (q) => {
        for (const slot of findSlots(q)) {
          const staff = staffOf(q, slot);
          const blockEnd = slot.endsAt + bufferMinutes(q) * MINUTE;
          for (const off of staff.timeOff) {
            expect(off.start < blockEnd && slot.startsAt < off.end, 'overlaps time off').toBe(false);
          }
          for (const b of staff.bookings) {
            // A done booking (completed, needs checkout, no-show) only counts; it blocks nothing.
            if (b.done === true || !isLive(b.holdExpiresAt, q.now)) continue;
            expect(b.startsAt < blockEnd && slot.startsAt < b.blockedUntil, 'overlaps a booking').toBe(false);
          }
        }
      }),
      RUNS,
    );
  });

  it('c. every slot is inside working hours of its local date, on an open date in range', () => {
    fc.assert(
      fc.property(queryArb, (q) => {
        const table = localMinutes(q.timezone, q.fromDate, q.days);
        const lastDate = addDays(q.fromDate, q.days - 1);
        const lastBookable = addDays(localDateOf(q.now, q.timezone), q.maxAdvanceDays);
        for (const slot of findSlots(q)) {
          const date = localDateOf(slot.startsAt, q.timezone);
          expect(date >= q.fromDate && date <= lastDate && date <= lastBookable).toBe(true);
          expect(q.closedDates.has(date)).toBe(false);
          expect(slot.startsAt >= q.now + q.minNoticeMinutes * MINUTE).toBe(true);
          const blocks = workingBlocks(table, staffOf(q, slot), date);
          expect(blocks.some((w) => w.start <= slot.startsAt && slot.endsAt <= w.end)).toBe(true);
        }
      }),
      RUNS,
    );
  });

  /**
   * With no minimum notice, a booking held for its customer (a deposit, Booking Protection's card)
   * gets noticeMinutes' notice: exactly the starts sooner than it go, each other start keeps its
   * staff member, and every start left leaves the customer that long (or the whole hold) to finish.
   */
  it('c. with min_notice 0, a held booking loses only the starts its hold would not fit before', () => {
    fc.assert(
      fc.property(
        queryArb.map((q) => ({ ...q, minNoticeMinutes: 0 })),
        fc.integer({ min: 1, max: 10_080 }),
        (q, holdMinutes) => {
          const notice = noticeMinutes(q.minNoticeMinutes, holdMinutes);
          expect(notice).toBe(Math.min(holdMinutes, LEAST_MINUTES_TO_FINISH));
          const held = findSlots({ ...q, minNoticeMinutes: notice });
          expect(held).toEqual(findSlots(q).filter((slot) => slot.startsAt >= q.now + notice * MINUTE));
          expect(held).toEqual(oracleSlots({ ...q, minNoticeMinutes: notice }));
          for (const slot of held) {
            expect(holdEnd(q.now, holdMinutes, slot.startsAt) - q.now).toBeGreaterThanOrEqual(
              Math.min(holdMinutes, LEAST_MINUTES_TO_FINISH) * MINUTE,
            );
          }
        },
      ),
      RUNS,
    );
  });

  it('d. elapsed length is the total duration and starts lie on the local grid', () => {
    fc.assert(
      fc.property(queryArb, (q) => {
        for (const slot of findSlots(q)) {
          expect(slot.endsAt - slot.startsAt).toBe(totalMinutes(q) * MINUTE);
          const local = DateTime.fromMillis(slot.startsAt, { zone: q.timezone });
          expect(local.second * 1000 + local.millisecond).toBe(0);
          expect((local.hour * 60 + local.minute) % q.slotIntervalMinutes).toBe(0);
        }
      }),
      RUNS,
    );
  });

  it('e. times carry the offset in force and round-trip to the same instant', () => {
    fc.assert(
      fc.property(queryArb, (q) => {
        for (const slot of findSlots(q)) {
          for (const t of [slot.startsAt, slot.endsAt]) {
            const local = DateTime.fromMillis(t, { zone: q.timezone });
            const parsed = DateTime.fromISO(local.toISO()!, { setZone: true });
            expect(parsed.toMillis()).toBe(t);
            expect(parsed.offset).toBe(local.offset);
            expect(Date.parse(formatLocal(t, q.timezone))).toBe(t);
          }
        }
      }),
      RUNS,
    );
  });

  it('f. any staff: one slot per start, carrying the free member with fewest booked minutes', () => {
    fc.assert(
      fc.property(queryArb, (q) => {
        const slots = findSlots(q);
        for (let i = 1; i < slots.length; i++) {
          expect(slots[i]!.startsAt).toBeGreaterThan(slots[i - 1]!.startsAt);
        }
        // Who is free at each start, according to the engine's own single-staff answers.
        const freeAt = new Map<number, StaffSchedule[]>();
        for (const staff of q.staff) {
          for (const slot of findSlots(only(q, staff))) {
            expect(slot.staffId).toBe(staff.id);
            freeAt.set(slot.startsAt, [...(freeAt.get(slot.startsAt) ?? []), staff]);
          }
        }
        expect(slots.map((s) => s.startsAt)).toEqual([...freeAt.keys()].sort((a, b) => a - b));
        for (const slot of slots) {
          const date = localDateOf(slot.startsAt, q.timezone);
          const rank = (s: StaffSchedule) =>
            [bookedMinutes(s, date, q.timezone, q.now), s.name, s.id] as const;
          const best = [...freeAt.get(slot.startsAt)!].sort((a, b) => {
            const [x, y] = [rank(a), rank(b)];
            return x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : x[2] < y[2] ? -1 : 1);
          })[0]!;
          expect(slot.staffId).toBe(best.id);
        }
      }),
      RUNS,
    );
  });
});
