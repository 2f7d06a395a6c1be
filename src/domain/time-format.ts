import { DateTime } from 'luxon';

const toWholeSecond = (epochMs: number) => Math.floor(epochMs / 1000) * 1000;

/**
 * RFC 3339 with seconds and no fractions, in UTC with a Z suffix: the contract's form for system
 * metadata times (created_at, updated_at, cancelled_at, ...).
 */
export function formatUtc(epochMs: number): string {
  return DateTime.fromMillis(toWholeSecond(epochMs), { zone: 'utc' }).toISO({ suppressMilliseconds: true })!;
}

/** RFC 3339 with seconds and no fractions, in an IANA zone, carrying the offset in force at that instant. */
export function formatLocal(epochMs: number, zone: string): string {
  return DateTime.fromMillis(toWholeSecond(epochMs), { zone }).toISO({ suppressMilliseconds: true })!;
}
