import { isCalendarDate, LAST_CALENDAR_DATE } from '../domain/availability/zone-calendar.ts';
import { localDateAt } from '../domain/time-format.ts';
import type { BookingApi, Staff } from './booking-api.ts';
import type { Place } from './resolution.ts';
import { speakDate, speakDateTime, speakTime } from './speech.ts';
import type { SpokenClash } from './tool-kit.ts';
import { listed } from './word-lists.ts';

/**
 * What a caller hears about a recurring series (design.md 9.5): when its visits are, and, when some
 * dates are not free, which ones and what is free instead that day.
 */

/** "every 6 weeks, 4 visits: Tuesday 16 March, Tuesday 27 April, ... at 10 am". */
export function speakSeriesDates(
  starts: readonly string[],
  everyWeeks: number,
  place: Place,
  now: number,
): string {
  const today = localDateAt(now, place.zone);
  const dates = starts.map((start) =>
    speakDate(localDateAt(Date.parse(start), place.zone), place.locale, today),
  );
  const times = new Set(starts.map((start) => speakTime(Date.parse(start), place.zone, place.locale)));
  const every = everyWeeks === 1 ? 'every week' : `every ${everyWeeks} weeks`;
  const at = times.size === 1 ? ` at ${[...times][0]}` : '';
  return `${every}, ${starts.length} visits: ${listed(dates)}${at}`;
}

/**
 * The weeks between the visits of a series already booked, read from its dates (an answer that
 * returns a series the caller holds tells its own rule, not the one asked for): the greatest common
 * gap, so a visit cancelled in between does not change it; null when the dates keep no weekly rule
 * (visits moved one by one) or there is only one.
 */
export function weeksBetweenVisits(starts: readonly string[], zone: string): number | null {
  const days = starts.map(
    (start) => Date.parse(`${localDateAt(Date.parse(start), zone)}T00:00:00Z`) / 86_400_000,
  );
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  let common = 0;
  for (let i = 1; i < days.length; i++) common = gcd(common, Math.abs(days[i]! - days[i - 1]!));
  return common > 0 && common % 7 === 0 ? common / 7 : null;
}

/** A clash as the series_clash refusal lists it (REST details.clashes). */
interface Clash {
  occurrence: number;
  date: string;
  starts_at: string | null;
  reason: string;
  alternatives: { starts_at: string; staff_id: string }[];
}

/** Each clash in words: the date, and the free times that day with whom. */
export async function speakClashes(api: BookingApi, clashes: unknown, place: Place): Promise<SpokenClash[]> {
  if (!Array.isArray(clashes)) return [];
  const team = new Map((await api.listStaff(place.location.slug)).map((s: Staff) => [s.id, s.name]));
  const now = api.now();
  const today = localDateAt(now, place.zone);
  return (clashes as Clash[]).map((clash) => {
    // A weekly series from late 9999 has visits the engine writes past YYYY-MM-DD (+010000-01-07):
    // said as what they are rather than failing the whole answer.
    const day = isCalendarDate(clash.date)
      ? speakDate(clash.date, place.locale, today)
      : `a visit after ${speakDate(LAST_CALENDAR_DATE, place.locale, today)}`;
    const alternatives = clash.alternatives.map((a) => ({
      ...a,
      spoken: `${speakTime(Date.parse(a.starts_at), place.zone, place.locale)} with ${team.get(a.staff_id) ?? 'someone'}`,
    }));
    const free =
      alternatives.length > 0
        ? `free that day: ${listed(alternatives.map((a) => a.spoken))}`
        : 'nothing else free that day';
    return {
      occurrence: clash.occurrence,
      date: clash.date,
      reason: clash.reason,
      alternatives,
      spoken: `${day} is not free (${free})`,
    };
  });
}

/** "Tuesday 16 March at 10 am" for each instant, in order. */
export function speakInstants(starts: readonly string[], place: Place, now: number): string[] {
  return starts.map((start) => speakDateTime(Date.parse(start), place.zone, place.locale, now));
}
