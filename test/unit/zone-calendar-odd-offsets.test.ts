import { describe, expect, it } from 'vitest';
import { ZoneCalendar } from '../../src/domain/availability/zone-calendar.ts';

/**
 * Offsets that are not whole minutes, as in the time-zone database's local mean times (London kept
 * GMT-0:01:15 until 1847-12-01): a day, its bounds and its change of the clocks are found to the
 * millisecond, and finding them ends. Every zone's first change from local mean time is checked,
 * since an offset a minute and a bit from the next made the minute-by-minute search loop for ever.
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const YEAR = 365 * 24 * 60 * MINUTE;

/** The instant a zone's clocks first changed after `from` (to the millisecond), or null by `to`: a
 * year at a time, so a change and its undoing within one year may be stepped over (this finds another). */
function firstChange(calendar: ZoneCalendar, from: number, to: number): number | null {
  const before = calendar.offsetAt(from);
  let step = from;
  while (step < to && calendar.offsetAt(step) === before) step += YEAR;
  if (step >= to) return null;
  let lo = step - YEAR;
  let hi = step;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (calendar.offsetAt(mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

describe('ZoneCalendar with offsets in seconds (local mean time)', () => {
  it('London on 1 December 1847: the day, its bounds and the change, to the millisecond', () => {
    const calendar = new ZoneCalendar('Europe/London');
    const day = calendar.day('1847-12-01');
    // Local mean time is GMT-0:01:15: midnight came at 00:01:15 GMT, and the clocks then read GMT.
    expect(day.start).toBe(Date.UTC(1847, 11, 1, 0, 1, 15));
    expect(day.end).toBe(Date.UTC(1847, 11, 2));
    const change = calendar.clockChangeNear(day)!;
    expect(change.at).toBe(Date.UTC(1847, 11, 1, 0, 1, 15));
    expect(calendar.offsetAt(change.at - 1)).toBe(-75_000);
    expect(calendar.offsetAt(change.at)).toBe(0);
    // 09:00 that day is 09:00 GMT; the wall minutes skipped are those of the 1 min 15 s jump.
    expect(calendar.boundary(day, 9 * 60)).toBe(Date.UTC(1847, 11, 1, 9));
    expect(calendar.instantsAt(day, 0)).toEqual([]);
  });

  it("every zone's first change from local mean time: the day around it has exact bounds", () => {
    const from = Date.UTC(1800, 0, 1);
    const to = Date.UTC(1990, 0, 1);
    let checked = 0;
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      const calendar = new ZoneCalendar(zone);
      const change = firstChange(calendar, from, to);
      // Not Alaska's change of side of the date line in 1867, a day back: 18 October happened twice.
      if (change === null || Math.abs(calendar.offsetAt(change) - calendar.offsetAt(change - 1)) > 12 * HOUR)
        continue;
      // The exact local date (localDateAt writes whole minutes of the offset, as RFC 3339 does).
      const localDateAt = (instant: number, _zone: string) =>
        new Date(instant + calendar.offsetAt(instant)).toISOString().slice(0, 10);
      for (const instant of [change - 1, change]) {
        const date = localDateAt(instant, zone);
        const day = calendar.day(date);
        // The bounds are the day's first instant and the next day's: the instant before is another day.
        expect(localDateAt(day.start, zone), `${zone} ${date} start`).toBe(date);
        expect(localDateAt(day.start - 1, zone), `${zone} ${date} before start`).not.toBe(date);
        expect(localDateAt(day.end - 1, zone), `${zone} ${date} end`).toBe(date);
        expect(localDateAt(day.end, zone), `${zone} ${date} after end`).not.toBe(date);
        expect(day.start).toBeLessThanOrEqual(instant);
        expect(day.end).toBeGreaterThan(instant);
        const near = calendar.clockChangeNear(day);
        if (near) expect(calendar.offsetAt(near.at - 1)).not.toBe(calendar.offsetAt(near.at));
      }
      checked += 1;
    }
    expect(checked).toBeGreaterThan(300);
  });
});
