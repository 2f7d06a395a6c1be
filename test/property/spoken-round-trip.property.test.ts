import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ZoneCalendar } from '../../src/domain/availability/zone-calendar.ts';
import { formatLocal, localDateAt } from '../../src/domain/time-format.ts';
import { type SpeechLocale, speakClock, speakDate, speakDateTime } from '../../src/mcp/speech.ts';
import { resolveSpokenDate } from '../../src/mcp/spoken-dates.ts';
import { readSpokenStart } from '../../src/mcp/spoken-starts.ts';
import { parseSpokenTime } from '../../src/mcp/spoken-times.ts';

/**
 * Whatever the tools say, the tools read back: a slot's or a booking's spoken date and time, given
 * back as starts_at, is the same instant; a spoken date, given back as find_slots' date, is the same
 * date. Instants are drawn around the DST changes of zones with whole-hour, half-hour (Lord Howe) and
 * unnamed (Santiago) changes, and Kathmandu's +05:45, relative to a "now" before or after them.
 */

const ZONES = [
  'Europe/London',
  'America/New_York',
  'Australia/Sydney',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'America/Santiago',
] as const;
const LOCALES: readonly SpeechLocale[] = ['en-GB', 'en-US'];
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const FROM = Date.parse('2026-01-01T00:00:00Z');
const TO = Date.parse('2030-01-01T00:00:00Z');
const RUNS = { numRuns: 400 };

/** The instants a zone's offset changed at, 2026-2029 (to the hour: the draws spread around them). */
function offsetChanges(zone: string): number[] {
  const calendar = new ZoneCalendar(zone);
  const changes: number[] = [];
  let before = calendar.offsetAt(FROM);
  for (let instant = FROM + HOUR; instant < TO; instant += HOUR) {
    const offset = calendar.offsetAt(instant);
    if (offset !== before) changes.push(instant);
    before = offset;
  }
  return changes;
}
const CHANGES = new Map(ZONES.map((zone) => [zone, offsetChanges(zone)]));

/** A whole-minute instant: anywhere in the years drawn, or within three hours of an offset change. */
const instantIn = (zone: (typeof ZONES)[number]) => {
  const changes = CHANGES.get(zone)!;
  const anywhere = fc.integer({ min: FROM / MINUTE, max: TO / MINUTE - 1 }).map((m) => m * MINUTE);
  if (changes.length === 0) return anywhere;
  const nearChange = fc
    .tuple(fc.constantFrom(...changes), fc.integer({ min: -180, max: 180 }))
    .map(([change, minutes]) => Math.floor(change / MINUTE) * MINUTE + minutes * MINUTE);
  return fc.oneof(nearChange, anywhere);
};

/** "Now": moments before the instant (today, tomorrow, weeks, more than a year), or after it. */
const nowRelativeTo = (instant: number) =>
  fc
    .oneof(
      fc.integer({ min: -2 * DAY, max: 0 }),
      fc.integer({ min: -400 * DAY, max: 0 }),
      fc.integer({ min: 0, max: 200 * DAY }),
    )
    .map((delta) => instant + delta);

const case_ = fc
  .tuple(fc.constantFrom(...ZONES), fc.constantFrom(...LOCALES))
  .chain(([zone, locale]) =>
    instantIn(zone).chain((instant) => nowRelativeTo(instant).map((now) => ({ zone, locale, instant, now }))),
  );

describe('what the tools say reads back to what they meant', () => {
  it('a spoken date and time (speakDateTime, the slots’ `spoken`) is the same instant as starts_at (resolveStart reads it so)', () => {
    fc.assert(
      fc.property(case_, ({ zone, locale, instant, now }) => {
        const spoken = speakDateTime(instant, zone, locale, now);
        expect(readSpokenStart(spoken, { zone, locale, now }), spoken).toEqual({
          ok: true,
          startsAt: formatLocal(instant, zone),
        });
      }),
      RUNS,
    );
  });

  it('a spoken date (speakDate, with "today"/"tomorrow" and the year as the tools add them) is the same date', () => {
    fc.assert(
      fc.property(case_, ({ zone, locale, instant, now }) => {
        const date = localDateAt(instant, zone);
        const spoken = speakDate(date, locale, localDateAt(now, zone));
        expect(resolveSpokenDate(spoken, zone, now, locale), spoken).toEqual({ ok: true, date });
      }),
      RUNS,
    );
  });

  it('every minute of the day, as spoken, is the same minute read back', () => {
    for (const locale of LOCALES) {
      for (let minute = 0; minute < 1440; minute += 1) {
        const spoken = speakClock(minute, locale);
        expect(parseSpokenTime(spoken), spoken).toEqual({ minute, halfDay: false });
      }
    }
  });
});
