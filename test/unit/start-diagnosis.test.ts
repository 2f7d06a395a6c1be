import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { dayClosure, diagnoseStart, type SlotQuery } from '../../src/domain/availability/diagnose-start.ts';
import { findSlotAt } from '../../src/domain/availability/find-slots.ts';
import { clockTime, weeklyHours } from '../../src/domain/availability/opening-hours.ts';
import { startRefusal } from '../../src/domain/availability/start-refusal.ts';
import type { AvailabilityQuery, StaffSchedule } from '../../src/domain/availability/types.ts';
import { noticeMinutes } from '../../src/domain/booking/state-machine.ts';
import { addDays, localDateOf, localMinutes, workingBlocks } from '../helpers/availability-oracle.ts';
import { queryArbitrary } from '../property/availability-arbitraries.ts';

const MINUTE = 60_000;
const at = (iso: string) => Date.parse(iso);
const weekdays = (startMinute: number, endMinute: number, days = [1, 2, 3, 4, 5, 6, 7]) =>
  days.map((weekday) => ({ weekday, startMinute, endMinute }));

/**
 * London. Ana works every day 09:00-17:00 (time off all of Wednesday 25 Nov, and Thursday 26 Nov
 * 10:00-12:00); Bo works Sundays
 * 00:00-06:00 (over the spring-forward night) and Mondays 09:00-12:00. Now: Monday 23 Nov 09:00 GMT,
 * 60 minutes' notice, 30 days ahead, 15-minute grid, closed on 24 Dec. One 45-minute service.
 */
const ana: StaffSchedule = {
  id: 'ana',
  name: 'Ana',
  workingHours: weekdays(540, 1020),
  timeOff: [
    { start: at('2026-11-25T00:00:00Z'), end: at('2026-11-26T00:00:00Z') },
    { start: at('2026-11-26T10:00:00Z'), end: at('2026-11-26T12:00:00Z') },
  ],
  bookings: [
    {
      startsAt: at('2026-11-24T10:00:00Z'),
      endsAt: at('2026-11-24T10:45:00Z'),
      blockedUntil: at('2026-11-24T11:00:00Z'),
      holdExpiresAt: null,
    },
  ],
};
const bo: StaffSchedule = {
  id: 'bo',
  name: 'Bo',
  workingHours: [...weekdays(0, 360, [7]), ...weekdays(540, 720, [1])],
  timeOff: [],
  bookings: [],
};
const london: SlotQuery = {
  timezone: 'Europe/London',
  slotIntervalMinutes: 15,
  minNoticeMinutes: 60,
  maxAdvanceDays: 30,
  closedDates: new Set(['2026-12-24']),
  services: [{ id: 'cut', durationMinutes: 45, bufferAfterMinutes: 15 }],
  staff: [ana, bo],
  now: at('2026-11-23T09:00:00Z'),
};

describe('diagnoseStart', () => {
  it.each([
    ['a slot', '2026-11-24T09:00:00Z', undefined, 'ok'],
    ['the past', '2026-11-23T08:00:00Z', undefined, 'too_soon'],
    ['inside the minimum notice', '2026-11-23T09:45:00Z', undefined, 'too_soon'],
    ['the last date in reach', '2026-12-23T09:00:00Z', undefined, 'ok'],
    ['beyond max_advance_days', '2026-12-24T09:00:00Z', undefined, 'too_far_ahead'],
    ['off the grid', '2026-11-24T09:05:00Z', undefined, 'not_on_grid'],
    ['a taken slot', '2026-11-24T10:00:00Z', undefined, 'slot_unavailable'],
    ['a start whose buffer meets a booking', '2026-11-24T09:30:00Z', undefined, 'slot_unavailable'],
    ['outside everyone’s hours (any staff)', '2026-11-24T17:00:00Z', undefined, 'slot_unavailable'],
    ['a named staff member off that weekday', '2026-11-24T09:00:00Z', 'bo', 'staff_not_working'],
    ['a named staff member after hours', '2026-11-23T11:30:00Z', 'bo', 'staff_not_working'],
    ['a named staff member on time off', '2026-11-26T10:30:00Z', 'ana', 'staff_not_working'],
    ['a named staff member who is taken', '2026-11-24T10:00:00Z', 'ana', 'slot_unavailable'],
    ['someone unknown', '2026-11-24T09:00:00Z', 'zed', 'staff_not_working'],
  ])('%s: %s', (_, start, staffId, expected) => {
    const diagnosis = diagnoseStart(london, at(start), staffId);
    expect(diagnosis.ok ? 'ok' : diagnosis.reason).toBe(expected);
  });

  it('tells a start outside everyone’s hours from a taken one', () => {
    const outside = (start: string, staffId?: string) =>
      (diagnoseStart(london, at(start), staffId) as { outsideHours?: boolean }).outsideHours;
    expect(outside('2026-11-24T17:00:00Z')).toBe(true);
    // Ana's 45 minutes would run past 17:00.
    expect(outside('2026-11-24T16:30:00Z')).toBe(true);
    // Her time off on Thursday morning: nobody is working then either.
    expect(outside('2026-11-26T10:30:00Z')).toBe(true);
    expect(outside('2026-11-24T10:00:00Z')).toBe(false);
    expect(outside('2026-11-24T09:30:00Z')).toBe(false);
    expect(outside('2026-11-24T10:00:00Z', 'ana')).toBe(false);
  });

  it('tells a time off from hours not worked, and the last date in reach', () => {
    expect(diagnoseStart(london, at('2026-11-26T10:30:00Z'), 'ana')).toMatchObject({ onTimeOff: true });
    expect(diagnoseStart(london, at('2026-11-24T09:00:00Z'), 'bo')).toMatchObject({ onTimeOff: false });
    expect(diagnoseStart(london, at('2026-12-24T09:00:00Z'))).toMatchObject({ lastDate: '2026-12-23' });
  });

  it('says closed for a closure, and for a day nobody works (all their time off counts)', () => {
    const further = { ...london, maxAdvanceDays: 60 };
    expect(diagnoseStart(further, at('2026-12-24T10:00:00Z'))).toEqual({
      ok: false,
      reason: 'closed',
      date: '2026-12-24',
      cause: 'closure',
    });
    // Wednesday: only Ana works Wednesdays, and she is off all day.
    expect(diagnoseStart(london, at('2026-11-25T10:00:00Z'))).toMatchObject({
      reason: 'closed',
      cause: 'nobody_works',
    });
    // Closed comes before staff: naming Bo on a closed day says closed.
    expect(diagnoseStart(london, at('2026-11-25T10:00:00Z'), 'bo')).toMatchObject({ reason: 'closed' });
    expect(dayClosure({ ...london, staff: [] }, '2026-11-24')).toBe('nobody_works');
    expect(dayClosure(london, '2026-11-24')).toBeNull();
  });

  it("counts an external calendar's busy time as taken, never as time off or a day nobody works", () => {
    // Ana's private calendar takes all of Friday 27 November and Saturday 28 from 10:00.
    const busyAna: StaffSchedule = {
      ...ana,
      busy: [
        { start: at('2026-11-27T09:00:00Z'), end: at('2026-11-27T17:00:00Z') },
        { start: at('2026-11-28T10:00:00Z'), end: at('2026-11-28T17:00:00Z') },
      ],
    };
    const busy: SlotQuery = { ...london, staff: [busyAna, bo] };
    for (const staffId of [undefined, 'ana']) {
      for (const start of ['2026-11-27T10:00:00Z', '2026-11-28T11:00:00Z']) {
        expect(diagnoseStart(busy, at(start), staffId), `${start} ${staffId}`).toEqual({
          ok: false,
          reason: 'slot_unavailable',
          date: start.slice(0, 10),
          outsideHours: false,
        });
      }
    }
    // A whole day busy is no closed day; and the busy time is no slot.
    expect(dayClosure(busy, '2026-11-27')).toBeNull();
    expect(findSlotAt(busy, at('2026-11-28T09:00:00Z'))).not.toBeNull();
    expect(findSlotAt(busy, at('2026-11-28T09:15:00Z'))).toBeNull();
  });

  it('reads the grid on the local wall clock across the spring-forward gap (45-minute grid)', () => {
    const night: SlotQuery = { ...london, slotIntervalMinutes: 45, now: at('2026-03-27T00:00:00Z') };
    // Sunday 29 March: 01:00 GMT becomes 02:00 BST. Grid minutes 0, 45, (90 = 01:30 does not exist), 135 ...
    expect(diagnoseStart(night, at('2026-03-29T00:45:00Z'), 'bo').ok).toBe(true); // 00:45 GMT
    expect(diagnoseStart(night, at('2026-03-29T01:15:00Z'), 'bo').ok).toBe(true); // 02:15 BST
    // 90 minutes after midnight is 02:30 BST: no grid time (01:30 was skipped), so not a slot.
    expect(diagnoseStart(night, at('2026-03-29T01:30:00Z'), 'bo')).toMatchObject({ reason: 'not_on_grid' });
  });

  it('offers both instants of a repeated wall time (fall back)', () => {
    const autumn: SlotQuery = { ...london, now: at('2026-10-20T00:00:00Z') };
    // Sunday 25 October: 01:30 BST (00:30Z) and 01:30 GMT (01:30Z) both exist.
    expect(diagnoseStart(autumn, at('2026-10-25T00:30:00Z'), 'bo').ok).toBe(true);
    expect(diagnoseStart(autumn, at('2026-10-25T01:30:00Z'), 'bo').ok).toBe(true);
    expect(diagnoseStart(autumn, at('2026-10-25T01:40:00Z'), 'bo')).toMatchObject({ reason: 'not_on_grid' });
  });
});

describe('noticeMinutes', () => {
  it('leaves a hold its customer can finish: 15 minutes, or the whole hold when shorter', () => {
    expect(noticeMinutes(0, null)).toBe(0);
    expect(noticeMinutes(0, 30)).toBe(15);
    expect(noticeMinutes(0, 5)).toBe(5);
    expect(noticeMinutes(60, 30)).toBe(60);
    expect(noticeMinutes(10, 30)).toBe(15);
  });
});

describe('startRefusal', () => {
  const context = {
    timezone: 'Europe/London',
    locationName: 'Soho',
    policy: { minNoticeMinutes: 60, maxAdvanceDays: 30, slotIntervalMinutes: 15 },
    closureReason: 'Christmas Eve',
  };

  it('words each reason and names the field at fault', () => {
    const refuse = (start: string, staffId?: string, q: SlotQuery = london) => {
      const diagnosis = diagnoseStart(q, at(start), staffId);
      if (diagnosis.ok) throw new Error('a slot');
      return startRefusal(diagnosis, at(start), context);
    };
    expect(refuse('2026-11-23T08:00:00Z')).toMatchObject({
      message: 'That time has already passed.',
      param: 'starts_at',
    });
    expect(refuse('2026-11-23T09:45:00Z')).toEqual({
      reason: 'too_soon',
      message: "That time is too soon: bookings here need at least 60 minutes' notice.",
      param: 'starts_at',
      details: { min_notice_minutes: 60, earliest_starts_at: '2026-11-23T10:00:00+00:00' },
    });
    expect(refuse('2026-12-24T09:00:00Z').details).toEqual({ max_advance_days: 30, last_date: '2026-12-23' });
    expect(refuse('2026-12-24T09:00:00Z', undefined, { ...london, maxAdvanceDays: 60 })).toEqual({
      reason: 'closed',
      message: 'Soho is closed on 2026-12-24 (Christmas Eve).',
      param: 'starts_at',
      details: { date: '2026-12-24', closed_because: 'closure', closure_reason: 'Christmas Eve' },
    });
    expect(refuse('2026-11-24T09:05:00Z').details).toEqual({ slot_interval_minutes: 15 });
  });

  it('says one minute and one day in the singular', () => {
    const refuse = (start: string, q: SlotQuery) => {
      const diagnosis = diagnoseStart(q, at(start));
      if (diagnosis.ok) throw new Error('a slot');
      return startRefusal(diagnosis, at(start), {
        ...context,
        policy: { ...context.policy, minNoticeMinutes: q.minNoticeMinutes, maxAdvanceDays: q.maxAdvanceDays },
      });
    };
    const query = { ...london, minNoticeMinutes: 1, maxAdvanceDays: 1 };
    expect(refuse('2026-11-23T09:00:00Z', query).message).toBe(
      "That time is too soon: bookings here need at least 1 minute's notice.",
    );
    expect(refuse('2026-11-25T09:00:00Z', query).message).toBe(
      'That date is too far ahead: Soho takes bookings up to 1 day ahead (until 2026-11-24).',
    );
  });

  it('says why a booking held for its customer needs more notice than the location asks', () => {
    // No notice at the location, but a deposit to pay: 15 minutes (noticeMinutes).
    const query = { ...london, minNoticeMinutes: noticeMinutes(0, 30) };
    const refuse = (start: string, step: 'deposit' | 'protection_setup') => {
      const diagnosis = diagnoseStart(query, at(start));
      if (diagnosis.ok) throw new Error('a slot');
      return startRefusal(diagnosis, at(start), {
        ...context,
        policy: { ...context.policy, minNoticeMinutes: 0 },
        notice: { minutes: 15, step },
      });
    };
    // The start is now: not passed (a cut could be booked), but the deposit needs time.
    expect(refuse('2026-11-23T09:00:00Z', 'deposit')).toEqual({
      reason: 'too_soon',
      message:
        "That time is too soon: its deposit must be paid before the appointment starts, so this booking needs at least 15 minutes' notice.",
      param: 'starts_at',
      details: {
        min_notice_minutes: 15,
        earliest_starts_at: '2026-11-23T09:15:00+00:00',
        hold_step: 'deposit',
      },
    });
    expect(refuse('2026-11-23T09:00:00Z', 'protection_setup').message).toBe(
      "That time is too soon: a card must be saved for Booking Protection before the appointment starts, so this booking needs at least 15 minutes' notice.",
    );
    expect(refuse('2026-11-23T08:45:00Z', 'deposit').message).toBe('That time has already passed.');
  });

  it('says where and when a staff member works', () => {
    const diagnosis = diagnoseStart(london, at('2026-11-24T09:00:00Z'), 'bo');
    if (diagnosis.ok) throw new Error('a slot');
    const hours = weeklyHours(bo.workingHours).filter((d) => d.intervals.length > 0);
    const refusal = startRefusal(diagnosis, at('2026-11-24T09:00:00Z'), {
      ...context,
      staff: { id: 'bo', name: 'Bo', workplaces: [{ locationSlug: 'soho', locationName: 'Soho', hours }] },
    });
    expect(refusal).toEqual({
      reason: 'staff_not_working',
      message: 'Bo does not work then; Bo works at Soho Mon 09:00-12:00; Sun 00:00-06:00.',
      param: 'starts_at',
      details: {
        staff_id: 'bo',
        staff_name: 'Bo',
        on_time_off: false,
        works: [
          {
            location_slug: 'soho',
            location_name: 'Soho',
            hours: [
              { weekday: 'mon', intervals: [{ start: '09:00', end: '12:00' }] },
              { weekday: 'sun', intervals: [{ start: '00:00', end: '06:00' }] },
            ],
          },
        ],
      },
    });
  });
});

describe('weeklyHours', () => {
  it('merges overlapping and touching intervals per weekday, keeps split shifts apart', () => {
    const week = weeklyHours([
      { weekday: 1, startMinute: 540, endMinute: 720 },
      { weekday: 1, startMinute: 780, endMinute: 1020 },
      { weekday: 1, startMinute: 600, endMinute: 700 },
      { weekday: 2, startMinute: 540, endMinute: 720 },
      { weekday: 2, startMinute: 720, endMinute: 1440 },
    ]);
    expect(week.map((d) => d.weekday)).toEqual(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
    expect(week[0]!.intervals).toEqual([
      { start: '09:00', end: '12:00' },
      { start: '13:00', end: '17:00' },
    ]);
    expect(week[1]!.intervals).toEqual([{ start: '09:00', end: '24:00' }]);
    expect(week[2]!.intervals).toEqual([]);
    expect(clockTime(5)).toBe('00:05');
  });
});

/**
 * The rules written out independently (on the brute-force oracle's local minutes, no code shared with
 * the domain): the first rule a start breaks, or null when it breaks none.
 */
function firstBrokenRule(q: SlotQuery, t: number, staffId: string | undefined): string | null {
  const zone = q.timezone;
  if (t < q.now + q.minNoticeMinutes * MINUTE) return 'too_soon';
  const date = localDateOf(t, zone);
  if (date > addDays(localDateOf(q.now, zone), q.maxAdvanceDays)) return 'too_far_ahead';
  if (q.closedDates.has(date)) return 'closed';
  const table = localMinutes(zone, date, 1);
  const length = q.services.reduce((sum, s) => sum + s.durationMinutes, 0) * MINUTE;
  const free = (s: StaffSchedule, from: number, to: number) =>
    !s.timeOff.some((off) => off.start < to && from < off.end);
  const worksThatDay = (s: StaffSchedule) =>
    workingBlocks(table, s, date).some((block) =>
      table.some((m) => m.t >= block.start && m.t < block.end && free(s, m.t, m.t + MINUTE)),
    );
  if (!q.staff.some(worksThatDay)) return 'closed';
  const local = DateTime.fromMillis(t, { zone });
  const onGrid =
    local.second === 0 &&
    local.millisecond === 0 &&
    (local.hour * 60 + local.minute) % q.slotIntervalMinutes === 0;
  if (!onGrid) return 'not_on_grid';
  if (staffId !== undefined) {
    const named = q.staff.find((s) => s.id === staffId);
    const holds =
      named !== undefined &&
      workingBlocks(table, named, date).some((b) => b.start <= t && t + length <= b.end) &&
      free(named, t, t + length);
    if (!holds) return 'staff_not_working';
  }
  return null;
}

const withStart = (nearChangeOnly: boolean) =>
  queryArbitrary(nearChangeOnly).chain((query) => {
    const { fromDate: _from, days: _days, ...q } = query as AvailabilityQuery;
    const base = Date.parse(`${query.fromDate}T00:00:00Z`);
    return fc.record({
      q: fc.constant(q as SlotQuery),
      t: fc.oneof(
        fc.integer({ min: -144, max: 3 * 288 }).map((n) => base + n * 5 * MINUTE),
        fc.integer({ min: -144 * 5, max: 3 * 288 * 5 }).map((n) => base + n * MINUTE),
      ),
      staffId: fc.option(fc.constantFrom(...q.staff.map((s) => s.id), 'nobody'), { nil: undefined }),
    });
  });

describe('diagnoseStart properties', { timeout: 60_000 }, () => {
  const agrees = ({ q, t, staffId }: { q: SlotQuery; t: number; staffId: string | undefined }) => {
    const named = q.staff.filter((s) => s.id === staffId);
    const slot = findSlotAt(staffId === undefined ? q : { ...q, staff: named }, t);
    const diagnosis = diagnoseStart(q, t, staffId);
    const broken = firstBrokenRule(q, t, staffId);
    if (slot) {
      // A slot breaks no rule, and the diagnosis says so with the same slot.
      expect(broken).toBeNull();
      expect(diagnosis).toEqual({ ok: true, slot });
    } else {
      // No slot: the first rule broken, or slot_unavailable exactly when it breaks none.
      expect(diagnosis.ok ? 'ok' : diagnosis.reason).toBe(broken ?? 'slot_unavailable');
    }
    // Without bookings the diagnosis is the same but for slot_unavailable (what explainNoSlot relies on).
    const idle = { ...q, staff: q.staff.map((s) => ({ ...s, bookings: [] })) };
    const withoutBookings = diagnoseStart(idle, t, staffId);
    if (!slot) {
      expect(withoutBookings.ok ? 'slot_unavailable' : withoutBookings.reason).toBe(
        diagnosis.ok ? 'ok' : diagnosis.reason,
      );
    }
  };

  it('is ok exactly when findSlotAt finds the slot, else names the first rule broken', () => {
    fc.assert(fc.property(withStart(false), agrees), { numRuns: 300 });
  });

  it('holds within days of an offset change', () => {
    fc.assert(fc.property(withStart(true), agrees), { numRuns: 300 });
  });
});
