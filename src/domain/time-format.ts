import { IANAZone } from 'luxon';

const HOUR = 3_600_000;

/**
 * RFC 3339 with seconds and no fractions, in UTC with a Z suffix: the contract's form for system
 * metadata times (created_at, updated_at, cancelled_at, ...).
 */
export function formatUtc(epochMs: number): string {
  return `${new Date(toWholeSecond(epochMs)).toISOString().slice(0, 19)}Z`;
}

/** RFC 3339 with seconds and no fractions, in an IANA zone, carrying the offset in force at that instant. */
export function formatLocal(epochMs: number, zone: string): string {
  const instant = toWholeSecond(epochMs);
  // Before standard time (local mean time, as in London before 1847) an offset can have seconds,
  // which RFC 3339 cannot write: the whole minutes of it are written, the local time with them, so
  // the text still names the same instant.
  const offsetMinutes = Math.trunc(offsetAt(zone, instant));
  const local = new Date(instant + offsetMinutes * 60_000).toISOString().slice(0, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * The instant an RFC 3339 date-time names, in epoch milliseconds (NaN for none). Date.parse drops the
 * digits past the millisecond. A time between two milliseconds is no time of any location's grid
 * (whole minutes), as 10:00:00.5 is not: it is read as whichever of the two is no whole second, so
 * that it is refused as such, never booked at the grid time it is a hair before or after.
 */
export function instantOfDateTime(text: string): number {
  const at = Date.parse(text);
  const finer = /\.\d{3}(\d+)/.exec(text)?.[1];
  if (finer === undefined || !/[1-9]/.test(finer)) return at;
  return at % 1000 === 999 ? at : at + 1;
}

/** The local calendar date ('YYYY-MM-DD') of an instant in an IANA zone. */
export function localDateAt(epochMs: number, zone: string): string {
  // Whole minutes of the offset, as formatLocal writes it, so both name the same date.
  return new Date(epochMs + Math.trunc(offsetAt(zone, epochMs)) * 60_000).toISOString().slice(0, 10);
}

/**
 * The zone's offset (minutes) at an instant. Asking the time-zone database costs microseconds and a
 * response formats hundreds of times, so a UTC hour whose offset is the same at both ends is
 * remembered as steady (no zone changes offset twice within an hour); an hour with a change in it is
 * asked afresh each time, so the answer is always exact.
 */
export function offsetAt(zoneName: string, instant: number): number {
  const hour = Math.floor(instant / HOUR);
  const key = `${zoneName}|${hour}`;
  const steady = steadyHours.get(key);
  if (steady !== undefined) return steady;
  const zone = zoneFor(zoneName);
  const atStart = zone.offset(hour * HOUR);
  const atEnd = zone.offset((hour + 1) * HOUR - 1);
  if (atStart !== atEnd) return zone.offset(instant);
  if (steadyHours.size >= MAX_REMEMBERED_HOURS) steadyHours.clear();
  steadyHours.set(key, atStart);
  return atStart;
}

const MAX_REMEMBERED_HOURS = 100_000;
const steadyHours = new Map<string, number>();
const zones = new Map<string, IANAZone>();

function zoneFor(name: string): IANAZone {
  let zone = zones.get(name);
  if (!zone) {
    zone = IANAZone.create(name);
    if (!zone.isValid) throw new Error(`Unknown time zone: ${name}`);
    zones.set(name, zone);
  }
  return zone;
}

const toWholeSecond = (epochMs: number) => Math.floor(epochMs / 1000) * 1000;
const pad = (n: number) => String(n).padStart(2, '0');
