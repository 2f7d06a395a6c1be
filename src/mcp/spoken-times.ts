import { type DayHours, WEEKDAY_NAMES } from '../domain/availability/opening-hours.ts';
import { clockWordsAsTimes } from './spoken-clock-words.ts';

/**
 * Times of day as callers say them ("2:30", "2 pm", "noon", "14:30"), read on the location's
 * clock. "2:30" alone is 2:30 in the afternoon at a salon open 9 to 6, and 2:30 in the morning nowhere
 * a caller would book: an hour said without am or pm is read inside the opening hours.
 */

export type TimeOfDay = 'morning' | 'afternoon' | 'evening';

/** Local minutes since midnight, half-open [from, to): "in the morning" means before noon, and so on. */
export const TIME_OF_DAY_MINUTES: Record<TimeOfDay, { from: number; to: number }> = {
  morning: { from: 0, to: 720 },
  afternoon: { from: 720, to: 1020 },
  evening: { from: 1020, to: 1440 },
};

/** A time as said, before it is placed on the clock. */
export interface SpokenTime {
  /** Local minutes since midnight, as written on a 24-hour clock ("2:30" is 150). */
  minute: number;
  /**
   * Said on a 12-hour clock without am or pm ("2:30", "2", "12:15", "2 o'clock"): the time twelve
   * hours on is as likely. False for "14:30", "09:30" (a leading zero is the 24-hour clock), "2 pm",
   * "noon".
   */
  halfDay: boolean;
}

const NAMED_TIMES: ReadonlyMap<string, number> = new Map([
  ['noon', 720],
  ['midday', 720],
  ['12 noon', 720],
  ['12 midday', 720],
  ['midnight', 0],
  ['12 midnight', 0],
]);

/** "14:30", "9:05", "14.30", "2", "14", "2 o'clock": hour, optional minutes; "0930" would be a guess. */
const CLOCK = /^(\d{1,2})(?:[:.](\d{2}))?(?: ?o'?clock)?$/;
/** "2pm", "2 pm", "2:30pm", "2.30 p.m.", "12 am", "3 o'clock pm". */
const MERIDIEM = /^(\d{1,2})(?:[:.](\d{2}))?(?: ?o'?clock)? ?([ap])\.? ?m\.?$/;

/**
 * A local time of day, or undefined when the words are not one. Hours run 0-23 on a 24-hour clock and
 * 1-12 with am/pm; "12 am" is midnight and "12 pm" noon. An hour from 1 to 12 without am/pm, without a
 * leading zero, is `halfDay`: where it falls is for readTimeInHours to say.
 */
export function parseSpokenTime(text: string): SpokenTime | undefined {
  const spoken = clockWordsAsTimes(text.trim().toLowerCase().replace(/\s+/g, ' '));
  if (spoken.length > 20) return undefined;
  const named = NAMED_TIMES.get(spoken);
  if (named !== undefined) return { minute: named, halfDay: false };

  const clock = CLOCK.exec(spoken);
  if (clock) {
    const hour = Number(clock[1]);
    const minute = clock[2] === undefined ? 0 : Number(clock[2]);
    if (hour > 23 || minute > 59) return undefined;
    const halfDay = hour >= 1 && hour <= 12 && !clock[1]!.startsWith('0');
    return { minute: hour * 60 + minute, halfDay };
  }

  const meridiem = MERIDIEM.exec(spoken);
  if (meridiem) {
    const hour = Number(meridiem[1]);
    const minute = meridiem[2] === undefined ? 0 : Number(meridiem[2]);
    if (hour < 1 || hour > 12 || minute > 59) return undefined;
    return { minute: ((hour % 12) + (meridiem[3] === 'p' ? 12 : 0)) * 60 + minute, halfDay: false };
  }

  return undefined;
}

/** Local minutes [from, to], both ends included: "until 6" at a salon that closes at 6 is 6 pm. */
export interface MinuteSpan {
  from: number;
  to: number;
}

/** The opening hours of the given weekdays (1 = Monday .. 7 = Sunday), as minute spans. */
export function openSpans(hours: readonly DayHours[], weekdays: Iterable<number>): MinuteSpan[] {
  const spans: MinuteSpan[] = [];
  for (const weekday of new Set(weekdays)) {
    const day = hours.find((h) => h.weekday === WEEKDAY_NAMES[weekday - 1]);
    for (const interval of day?.intervals ?? []) {
      spans.push({ from: clockMinutes(interval.start), to: clockMinutes(interval.end) });
    }
  }
  return spans;
}

export type TimeReading = { ok: true; minute: number } | { ok: false; readings: readonly [number, number] };

/**
 * Where a time said without am/pm falls: the reading inside `part` of the day when one was said
 * ("tomorrow afternoon at 2:30"), else the reading inside the opening hours `open`. Not ok, with both
 * readings for the agent to ask about, when nothing tells them apart: both are open (7:30 at a salon
 * open 7 am to 9 pm) or the hours are not known (`open` undefined). When neither is open, the one
 * nearer the opening hours; when the location is closed all day (`open` empty), the time as written on
 * a 24-hour clock (nothing will be free either way, and the answer will say why).
 */
export function readTimeInHours(
  time: SpokenTime,
  open: readonly MinuteSpan[] | undefined,
  part?: TimeOfDay | undefined,
): TimeReading {
  if (!time.halfDay) return { ok: true, minute: time.minute };
  const readings = [time.minute, (time.minute + 720) % 1440] as const;
  if (part) {
    const { from, to } = TIME_OF_DAY_MINUTES[part];
    const inPart = readings.filter((minute) => minute >= from && minute < to);
    if (inPart.length === 1) return { ok: true, minute: inPart[0]! };
  }
  if (open === undefined) return { ok: false, readings };
  const inside = readings.filter((minute) => open.some((span) => minute >= span.from && minute <= span.to));
  if (inside.length === 1) return { ok: true, minute: inside[0]! };
  if (inside.length === 2) return { ok: false, readings };
  if (open.length === 0) return { ok: true, minute: time.minute };
  const distance = (minute: number) =>
    Math.min(...open.map((span) => (minute < span.from ? span.from - minute : minute - span.to)));
  return { ok: true, minute: distance(readings[1]) < distance(readings[0]) ? readings[1] : readings[0] };
}

/** 'HH:MM' (up to '24:00') as minutes since midnight. */
function clockMinutes(clock: string): number {
  return Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));
}
