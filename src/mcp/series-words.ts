import { isCalendarDate, LAST_CALENDAR_DATE } from '../domain/availability/zone-calendar.ts';
import { STAFF_CANNOT_TAKE_IT } from '../domain/booking/change-policy.ts';
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

/**
 * Up to this many visits are each said by date; more (a series runs to 26) are said as a run, its first
 * and last dates and rhythm, which a caller can follow on the phone.
 */
export const VISITS_SAID_IN_FULL = 4;

/** "every week" or "every 6 weeks". */
function rhythm(everyWeeks: number): string {
  return everyWeeks === 1 ? 'every week' : `every ${everyWeeks} weeks`;
}

/**
 * "every 6 weeks, 4 visits: Tuesday 16 March, Tuesday 27 April, ... at 10 am" (each with its own time
 * when they are not all at one); more than VISITS_SAID_IN_FULL visits as a run: "every 6 weeks, 26
 * visits from Tuesday 16 March to Tuesday 1 June at 10 am" (see visitsRun).
 */
export function speakSeriesDates(
  starts: readonly string[],
  everyWeeks: number,
  place: Place,
  now: number,
): string {
  if (starts.length > VISITS_SAID_IN_FULL) {
    return `${rhythm(everyWeeks)}, ${starts.length} visits ${visitsRun(starts, place, now, null)}`;
  }
  const today = localDateAt(now, place.zone);
  const visits = starts.map((start) => ({
    date: speakDate(localDateAt(Date.parse(start), place.zone), place.locale, today),
    time: speakTime(Date.parse(start), place.zone, place.locale),
  }));
  const times = new Set(visits.map((v) => v.time));
  // Visits not all at one time of day (one was moved): each is said with its own.
  const when =
    times.size === 1
      ? `${listed(visits.map((v) => v.date))} at ${[...times][0]}`
      : listed(visits.map((v) => `${v.date} at ${v.time}`));
  return `${rhythm(everyWeeks)}, ${starts.length} visits: ${when}`;
}

/**
 * The visits of a series with another stylist than its first ("; Tuesday 9 March is with Bo"), said
 * after its dates: a series booked with no stylist named keeps the first one's where free and takes
 * anyone free otherwise, and "Booked: Cut with Ana" alone would have the caller expect Ana every time.
 * Up to VISITS_SAID_IN_FULL dates per stylist are named, more counted. Empty when all share one.
 */
export function speakOtherStylists(
  visits: readonly { starts_at: string; staff_id: string }[],
  team: ReadonlyMap<string, string>,
  place: Place,
  now: number,
): string {
  const first = visits[0]?.staff_id;
  const others = new Map<string, string[]>();
  for (const visit of visits) {
    if (visit.staff_id === first) continue;
    others.set(visit.staff_id, [...(others.get(visit.staff_id) ?? []), visit.starts_at]);
  }
  if (others.size === 0) return '';
  const today = localDateAt(now, place.zone);
  const parts = [...others].map(([staffId, starts]) => {
    const name = team.get(staffId) ?? 'another stylist';
    if (starts.length > VISITS_SAID_IN_FULL) return `${starts.length} of them are with ${name}`;
    const dates = starts.map((start) =>
      speakDate(localDateAt(Date.parse(start), place.zone), place.locale, today),
    );
    return `${listed(dates)} ${starts.length === 1 ? 'is' : 'are'} with ${name}`;
  });
  return `; ${listed(parts)}`;
}

/**
 * Visits of a series as a caller hears them after "Its 3 later visits moved too": up to
 * VISITS_SAID_IN_FULL each with its time (": Tuesday 16 March at 10 am and ..."), more as a run
 * (", every 2 weeks from Tuesday 16 March to Tuesday 1 June at 10 am"), its rhythm read from the
 * dates. The structured answer keeps every visit; only the words are shorter.
 */
export function speakVisits(starts: readonly string[], place: Place, now: number): string {
  if (starts.length <= VISITS_SAID_IN_FULL) return `: ${listed(speakInstants(starts, place, now))}`;
  const every = weeksBetweenVisits(starts, place.zone);
  return `, ${visitsRun(starts, place, now, every === null ? null : rhythm(every))}`;
}

/**
 * "[every 2 weeks ]from Tuesday 16 March to Tuesday 1 June at 10 am": the visits' first and last dates
 * and the time most of them are at, naming (up to VISITS_SAID_IN_FULL) any at another time ("except
 * Tuesday 13 April at 11 am"); with more of those, "at different times".
 */
function visitsRun(starts: readonly string[], place: Place, now: number, every: string | null): string {
  const today = localDateAt(now, place.zone);
  const dateOf = (start: string) =>
    speakDate(localDateAt(Date.parse(start), place.zone), place.locale, today);
  const timeOf = (start: string) => speakTime(Date.parse(start), place.zone, place.locale);
  const counts = new Map<string, number>();
  for (const start of starts) counts.set(timeOf(start), (counts.get(timeOf(start)) ?? 0) + 1);
  const [usual] = [...counts].reduce((most, entry) => (entry[1] > most[1] ? entry : most));
  const others = starts.filter((start) => timeOf(start) !== usual);
  const at =
    others.length === 0
      ? ` at ${usual}`
      : others.length <= VISITS_SAID_IN_FULL
        ? ` at ${usual}, except ${listed(others.map((start) => `${dateOf(start)} at ${timeOf(start)}`))}`
        : ' at different times';
  const from = `from ${dateOf(starts[0]!)} to ${dateOf(starts.at(-1)!)}${at}`;
  return every === null ? from : `${every} ${from}`;
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
  message?: string;
  alternatives: { starts_at: string; staff_id: string }[];
}

/**
 * Each clash in words: the date, and the free times that day with whom; a time taken by a booking of
 * `clientId` itself (one they made on its own) is said as theirs, not as "not free".
 */
export async function speakClashes(
  api: BookingApi,
  clashes: unknown,
  place: Place,
  clientId?: string,
): Promise<SpokenClash[]> {
  if (!Array.isArray(clashes)) return [];
  const team = new Map((await api.listStaff(place.location.slug)).map((s: Staff) => [s.id, s.name]));
  const now = api.now();
  const today = localDateAt(now, place.zone);
  // Read once (over REST each read is a request), for the times a booking of theirs takes.
  const anyTaken = (clashes as Clash[]).some((c) => c.reason === 'slot_unavailable' && c.starts_at !== null);
  const theirs =
    clientId !== undefined && anyTaken
      ? (await api.upcomingBookings(clientId))
          .filter((b) => b.location_slug === place.location.slug)
          .map((b) => Date.parse(b.starts_at))
      : [];
  const held = (clashes as Clash[]).map(
    (clash) =>
      clash.reason === 'slot_unavailable' &&
      clash.starts_at !== null &&
      theirs.includes(Date.parse(clash.starts_at)),
  );
  return (clashes as Clash[]).map((clash, index) => {
    const day = clashDay(clash.date, place, today);
    const alternatives = clash.alternatives.map((a) => ({
      ...a,
      spoken: `${speakTime(Date.parse(a.starts_at), place.zone, place.locale)} with ${team.get(a.staff_id) ?? 'someone'}`,
    }));
    // A wall time the clocks skip: the engine offers the free times nearest the end of the gap. (A visit
    // past 9999-12-31 has no start either, but no calendar date.)
    const skipped = clash.starts_at === null && clash.reason === 'not_on_grid' && isCalendarDate(clash.date);
    const free =
      alternatives.length > 0
        ? `free ${skipped ? 'nearest it' : 'that day'}: ${listed(alternatives.map((a) => a.spoken))}`
        : 'nothing else free that day';
    const opening = `${day.charAt(0).toUpperCase()}${day.slice(1)}`;
    const why = skipped
      ? `${opening}: that time does not exist, as the clocks go forward that night`
      : held[index]
        ? `${opening}: the caller already has a booking at that time`
        : clashCause(clash, place.location.name, day, (date) => clashDay(date, place, today));
    // A closed day, or one too far ahead, has nothing else free: only free times found there are said.
    const nothingThatDay = clash.reason === 'closed' || clash.reason === 'too_far_ahead';
    const spoken = why
      ? `${why}${alternatives.length > 0 || !nothingThatDay ? ` (${free})` : ''}`
      : `${day} is not free (${free})`;
    return {
      occurrence: clash.occurrence,
      date: clash.date,
      starts_at: clash.starts_at,
      reason: clash.reason,
      alternatives,
      spoken,
    };
  });
}

/**
 * The clashes of a series as a caller hears them: up to VISITS_SAID_IN_FULL each in its words (joined
 * by "; "), more counted with the first and last clashing dates ("5 of the visits clash, from Tuesday
 * 6 April to Tuesday 4 May"); the structured clashes keep every one.
 */
export function speakClashList(clashes: readonly SpokenClash[], place: Place, now: number): string {
  if (clashes.length <= VISITS_SAID_IN_FULL) return clashes.map((c) => c.spoken).join('; ');
  const today = localDateAt(now, place.zone);
  const first = clashDay(clashes[0]!.date, place, today);
  const last = clashDay(clashes.at(-1)!.date, place, today);
  return `${clashes.length} of the visits clash, from ${first} to ${last}`;
}

/**
 * A clash's date as said. A weekly series from late 9999 has visits the engine writes past YYYY-MM-DD
 * (+010000-01-07): said as what they are rather than failing the whole answer.
 */
function clashDay(date: string, place: Place, today: string): string {
  return isCalendarDate(date)
    ? speakDate(date, place.locale, today)
    : `a visit after ${speakDate(LAST_CALENDAR_DATE, place.locale, today)}`;
}

/**
 * Why a visit clashes, when it is not that its time is taken, as its REST message says it
 * (docs/recurring.md): "Soho is closed on Tuesday 23 March (Staff training)", "Nobody who does that
 * works at Soho on Tuesday 30 March", "Ana is away at that time on Tuesday 30 March", "Monday 3 May
 * is further ahead than Soho takes bookings (until Friday 30 April)"; null otherwise.
 */
function clashCause(
  clash: Clash,
  locationName: string,
  day: string,
  sayDate: (date: string) => string,
): string | null {
  const message = typeof clash.message === 'string' ? clash.message : '';
  if (clash.reason === 'closed') {
    if (/nobody who offers these services works/i.test(message)) {
      return `Nobody who does that works at ${locationName} on ${day}`;
    }
    // "Soho is closed on 2027-03-23 (Staff training)." names the closure's reason.
    const opening = `is closed on ${clash.date} (`;
    const at = message.indexOf(opening);
    const reason = at >= 0 && message.endsWith(').') ? message.slice(at + opening.length, -2) : '';
    return `${locationName} is closed on ${day}${reason ? ` (${reason})` : ''}`;
  }
  // A later visit whose stylist has left: no time that day helps, another stylist does (that visit alone).
  if (message === STAFF_CANNOT_TAKE_IT) {
    return `${day.charAt(0).toUpperCase()}${day.slice(1)}: the stylist of that visit can no longer take it here; move it alone with another stylist (staff)`;
  }
  // "That date is too far ahead: Soho takes bookings up to 60 days ahead (until 2027-04-30)."
  if (clash.reason === 'too_far_ahead') {
    const until = /\(until (\d{4}-\d{2}-\d{2})\)/.exec(message)?.[1];
    const by = until && isCalendarDate(until) ? ` (until ${sayDate(until)})` : '';
    return `${day.charAt(0).toUpperCase()}${day.slice(1)} is further ahead than ${locationName} takes bookings${by}`;
  }
  if (clash.reason === 'too_soon') {
    return `${day.charAt(0).toUpperCase()}${day.slice(1)}: that time is too soon to book`;
  }
  if (clash.reason === 'staff_not_working') {
    // "Ana does not work then (time off); Ana works at Soho Monday 09:00-17:00, ...".
    const said = /^(.+?) does not work then( \(time off\))?[;,]/.exec(message);
    const name = said?.[1] ?? 'The stylist';
    return `${name} ${said?.[2] ? 'is away' : 'does not work'} at that time on ${day}`;
  }
  return null;
}

/** "Tuesday 16 March at 10 am" for each instant, in order. */
export function speakInstants(starts: readonly string[], place: Place, now: number): string[] {
  return starts.map((start) => speakDateTime(Date.parse(start), place.zone, place.locale, now));
}
