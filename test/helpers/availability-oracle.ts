/**
 * A brute-force oracle for the availability engine, written straight from the rules in
 * src/domain/availability/types.ts and sharing no code with src/domain/availability. It walks every
 * whole-minute instant of the searched days and checks each rule literally: simple and slow on purpose.
 *
 * Reading of the rules where they leave a choice:
 * - A working interval of local date D runs from the instant of (D, startMinute) to the instant of
 *   (D, endMinute). The instant of a local (date, minute) is the first minute instant whose local
 *   (date, minute-of-day) is at or after it: a wall time in a spring-forward gap maps to the first
 *   instant after the gap, 1440 to the first instant of the next local date, and a wall time that
 *   exists twice to its earlier instant.
 * - A day's intervals are merged as instants where they touch or overlap.
 * - Any staff: fewest booked minutes, then name by plain `<` (code units), then id by `<`. A done
 *   booking (completed, needs checkout, no-show) blocks nothing but its minutes count.
 */
import { DateTime } from 'luxon';
import type {
  AvailabilityQuery,
  Interval,
  Slot,
  StaffSchedule,
} from '../../src/domain/availability/types.ts';

const MINUTE = 60_000;

/** A whole-minute instant and its local wall clock. */
export interface LocalMinute {
  t: number;
  date: string;
  minute: number;
}

export const addDays = (date: string, days: number): string =>
  DateTime.fromISO(date, { zone: 'utc' }).plus({ days }).toISODate()!;

export const localDateOf = (t: number, zone: string): string => DateTime.fromMillis(t, { zone }).toISODate()!;

export const weekdayOf = (date: string): number => DateTime.fromISO(date, { zone: 'utc' }).weekday;

const tables = new Map<string, LocalMinute[]>();

/**
 * Every minute instant whose local date is fromDate .. fromDate + days - 1, in order, followed by the
 * first minute instant of local date fromDate + days.
 */
export function localMinutes(zone: string, fromDate: string, days: number): LocalMinute[] {
  const key = `${zone}|${fromDate}|${days}`;
  const cached = tables.get(key);
  if (cached) return cached;
  const endDate = addDays(fromDate, days);
  const out: LocalMinute[] = [];
  // No zone is ahead of UTC by 15 hours, so this starts before local midnight of fromDate.
  for (let t = Date.parse(`${fromDate}T00:00:00Z`) - 15 * 60 * MINUTE; ; t += MINUTE) {
    const local = DateTime.fromMillis(t, { zone });
    const date = local.toISODate()!;
    if (date < fromDate) continue;
    out.push({ t, date, minute: local.hour * 60 + local.minute });
    if (date >= endDate) break;
  }
  if (tables.size > 20) tables.clear();
  tables.set(key, out);
  return out;
}

/** The first minute instant at or after local (date, minute); minute may be 1440. */
export function instantOf(table: LocalMinute[], date: string, minute: number): number {
  const hit = table.find((m) => m.date > date || (m.date === date && m.minute >= minute));
  if (!hit) throw new Error(`no instant for ${date} minute ${minute} in the table`);
  return hit.t;
}

/** The staff member's working intervals of a local date as instants, touching ones merged. */
export function workingBlocks(table: LocalMinute[], staff: StaffSchedule, date: string): Interval[] {
  const raw = staff.workingHours
    .filter((w) => w.weekday === weekdayOf(date))
    .map((w) => ({ start: instantOf(table, date, w.startMinute), end: instantOf(table, date, w.endMinute) }))
    .filter((i) => i.start < i.end)
    .sort((a, b) => a.start - b.start);
  const merged: Interval[] = [];
  for (const i of raw) {
    const last = merged[merged.length - 1];
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else merged.push({ ...i });
  }
  return merged;
}

export const isLive = (holdExpiresAt: number | null, now: number): boolean =>
  holdExpiresAt === null || holdExpiresAt > now;

/** Live and done bookings' minutes (end - start, no buffers) whose start falls on the local date. */
export function bookedMinutes(staff: StaffSchedule, date: string, zone: string, now: number): number {
  let total = 0;
  for (const b of staff.bookings) {
    if ((b.done === true || isLive(b.holdExpiresAt, now)) && localDateOf(b.startsAt, zone) === date) {
      total += (b.endsAt - b.startsAt) / MINUTE;
    }
  }
  return total;
}

const overlaps = (aStart: number, aEnd: number, bStart: number, bEnd: number) =>
  aStart < bEnd && bStart < aEnd;

/**
 * `busy`: each staff member's external busy times (design.md 9.6), whole as their calendars mean them;
 * they block exactly as time off does.
 */
export function oracleSlots(
  query: AvailabilityQuery,
  busy: ReadonlyMap<string, readonly Interval[]> = new Map(),
): Slot[] {
  const { timezone: zone, now } = query;
  const table = localMinutes(zone, query.fromDate, query.days);
  const endDate = addDays(query.fromDate, query.days);
  const lastBookableDate = addDays(localDateOf(now, zone), query.maxAdvanceDays);
  const totalMinutes = query.services.reduce((sum, s) => sum + s.durationMinutes, 0);
  const buffer = query.services[query.services.length - 1]?.bufferAfterMinutes ?? 0;
  // Per staff member (by position) and local date: working blocks and booked minutes.
  const memo = new Map<string, { blocks: Interval[]; booked: number }>();
  const dayOf = (s: StaffSchedule, date: string) => {
    const key = `${query.staff.indexOf(s)}|${date}`;
    const day = memo.get(key) ?? {
      blocks: workingBlocks(table, s, date),
      booked: bookedMinutes(s, date, zone, now),
    };
    memo.set(key, day);
    return day;
  };
  const slots: Slot[] = [];
  for (const { t, date, minute } of table) {
    if (date >= endDate || minute % query.slotIntervalMinutes !== 0) continue;
    if (query.closedDates.has(date)) continue;
    if (t < now + query.minNoticeMinutes * MINUTE || date > lastBookableDate) continue;
    const end = t + totalMinutes * MINUTE;
    const blockEnd = end + buffer * MINUTE;
    const free = query.staff.filter(
      (s) =>
        dayOf(s, date).blocks.some((w) => w.start <= t && end <= w.end) &&
        !s.timeOff.some((off) => overlaps(t, blockEnd, off.start, off.end)) &&
        !(busy.get(s.id) ?? []).some((b) => overlaps(t, blockEnd, b.start, b.end)) &&
        !s.bookings.some(
          (b) =>
            b.done !== true &&
            isLive(b.holdExpiresAt, now) &&
            overlaps(t, blockEnd, b.startsAt, b.blockedUntil),
        ),
    );
    const ranked = free
      .map((s) => ({ s, booked: dayOf(s, date).booked }))
      .sort((a, b) => a.booked - b.booked || compare(a.s.name, b.s.name) || compare(a.s.id, b.s.id));
    const chosen = ranked[0];
    if (chosen) slots.push({ startsAt: t, endsAt: end, staffId: chosen.s.id });
  }
  return slots.sort((a, b) => a.startsAt - b.startsAt);
}

function compare(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}
