import { z } from 'zod';
import { addDays } from '../../domain/availability/zone-calendar.ts';
import { instantOfWallTime } from '../../domain/booking/series.ts';
import { twinInstant } from '../../domain/repeated-wall-times.ts';
import { formatLocal, localDateAt } from '../../domain/time-format.ts';
import { dateForms, timeForms } from '../argument-forms.ts';
import type { BookingApi, LocationInfo, Staff } from '../booking-api.ts';
import { speakWorkplaces } from '../refusals.ts';
import { zoneCalendar } from '../repeated-times.ts';
import { type Place, resolveLocation, resolveServices, resolveStaffIfNamed } from '../resolution.ts';
import { speakFreeTimes } from '../slot-list-words.ts';
import {
  bookableDays,
  daysUpTo,
  inWindow,
  lastBookableDate,
  localMinute,
  type MinutesWindow,
  minutesWindow,
  needsOpeningHours,
  openDuring,
  partOfDay,
  readTimeArguments,
  searchableDays,
} from '../slot-window.ts';
import { speakClock, speakDate, speakNotice, speakOnDate, speakTime } from '../speech.ts';
import { nearest, spokenSlots } from '../spoken-bookings.ts';
import { resolveSpokenDate } from '../spoken-dates.ts';
import { speakWeeklyHours } from '../spoken-hours.ts';
import { type MinuteSpan, parseSpokenTime, type SpokenTime, type TimeOfDay } from '../spoken-times.ts';
import { carriesOwnName, namesAZone, readInNamedZone } from '../spoken-zones.ts';
import { BadArgument, fail, readAll, SpokenSlot } from '../tool-kit.ts';
import { defineTool, READ_ONLY } from '../tool-spec.ts';
import { datesSomeoneWorks } from '../working-days.ts';
import { speakBookingTerms } from './booking-terms.ts';

/** How far ahead alternatives are looked for when nothing is free in the range asked. */
const ALTERNATIVE_DAYS = 14;
const DEFAULT_LIMIT = 5;
/** Slots offered together are this far apart where the diary allows: choices that sound different. */
const SPREAD_MINUTES = 30;

export const ServicesArgument = z
  .union([z.string(), z.array(z.string()).min(1).max(10)])
  .describe('Names as said, or ids; several back to back.');

/**
 * What to say of an earliest or latest start given with a zone ("10am EST"): they are times on the
 * location's clock, so the time is said there, on the first day asked (or today), as the argument to
 * pass; a zone that names several is asked about, as book asks. Undefined when the words are no time
 * with a zone.
 */
function zonedTimeReason(place: Place, date: string, now: number) {
  return (param: 'earliest' | 'latest', said: string): SpokenTime | string | undefined => {
    const words = said.trim().toLowerCase().split(/\s+/);
    const word = words.at(-1)!;
    const time = words.length > 1 ? parseSpokenTime(words.slice(0, -1).join(' ')) : undefined;
    if (!time || time.halfDay || !namesAZone(word, place.zone)) return undefined;
    const read = resolveSpokenDate(date, place.zone, now, place.locale);
    const day = read.ok ? read.date : localDateAt(now, place.zone);
    // One of the location's own names, that time carries it that day: that time (of either pass, in
    // an hour the clocks repeat: the search goes by the wall time, as for a time said without a zone).
    if (carriesOwnName(word, day, time.minute, place.zone)) return time;
    const clock = speakClock(time.minute, place.locale);
    const context = { zone: place.zone, locale: place.locale };
    const reading = readInNamedZone(word, day, time.minute, clock, context);
    if (!reading.ok) return reading.reason;
    const localDate = localDateAt(reading.instant, place.zone);
    // The location's own clock under another name ("1:30 am UTC" in London the night the clocks go
    // back): that time, of either pass.
    const first = instantOfWallTime(place.zone, day, time.minute);
    const passes = first === null ? [] : [first, twinInstant(first, place.zone)];
    if (localDate === day && passes.includes(reading.instant)) return time;
    const there = speakTime(reading.instant, place.zone, place.locale);
    const on = speakOnDate(localDate, place.locale, localDateAt(now, place.zone));
    const here = place.zone.slice(place.zone.lastIndexOf('/') + 1).replaceAll('_', ' ');
    return (
      `${param} is a time in ${here}; ${clock} ${word.toUpperCase()} is ${there} there ${on}: ` +
      `ask the caller whether that suits and pass ${param} "${there}".`
    );
  };
}

export const findSlotsTool = defineTool({
  name: 'find_slots',
  title: 'Find free times',
  description:
    "Free times for services, by staff, part of day or time range; dates and times as said, in the location's zone.",
  input: {
    location: z.string().optional(),
    services: ServicesArgument,
    date: z.string().describe('YYYY-MM-DD or as said ("next tuesday", "the 8th").'),
    days: z.int().min(1).max(14).optional().describe('1 to 14; default 1.'),
    staff: z.string().optional().describe('Name (first is enough) or id.'),
    time_of_day: z
      .enum(['morning', 'afternoon', 'evening'])
      .optional()
      .describe('morning <12:00, afternoon 12-17:00, evening from 17:00.'),
    earliest: z.string().optional().describe('Local time, e.g. "2pm".'),
    latest: z.string().optional().describe('Latest start, local time.'),
    limit: z.int().min(1).max(20).optional().describe('Default 5.'),
  },
  output: {
    slots: z.array(SpokenSlot),
    more_available: z.boolean().describe('More free times match than were returned.'),
    spoken: z.string().describe('All to say: the times, length, price, and any deposit or card on file.'),
  },
  annotations: READ_ONLY,
  failureMembers: ['choices', 'alternatives', 'reason'],
  formProblems: (given) => [...dateForms(given, 'date'), ...timeForms(given)],
  async run(args, { api }) {
    const now = api.now();
    const place = await resolveLocation(api, args.location);
    const services = await resolveServices(api, place, args.services);
    const team = await api.listStaff(place.location.slug);
    const staff = await resolveStaffIfNamed(api, place, args.staff, services);
    // The date and the times are read together: an agent that got both wrong hears of both at once.
    const [resolved, said] = readAll(
      () => {
        const reading = resolveSpokenDate(args.date, place.zone, now, place.locale);
        if (!reading.ok) throw new BadArgument('date', reading.reason);
        return reading;
      },
      () => readTimeArguments(undefined, args.earliest, args.latest, zonedTimeReason(place, args.date, now)),
    );
    const times = {
      ...said,
      part: args.time_of_day ?? resolved.timeOfDay,
      partSaidIn: args.time_of_day ? ('time_of_day' as const) : ('date' as const),
    };
    const limit = args.limit ?? DEFAULT_LIMIT;
    const today = localDateAt(now, place.zone);
    // Days already over are not searched; none is made past 9999-12-31.
    const span = searchableDays(resolved.date, args.days ?? resolved.days ?? 1, today);

    const search = (date: string, days: number) =>
      api.availability(place.location.slug, {
        serviceIds: services.map((s) => s.id),
        date,
        days: daysUpTo(date, days),
        staffId: staff?.id,
      });
    // Asked at most once, and only when needed: to place a time without am/pm inside the opening
    // hours, or, when nothing is free, to tell "too far ahead" from "nothing free".
    let info: Promise<LocationInfo> | undefined;
    const locationInfo = () => {
      info ??= api.locationInfo(place.location.slug);
      return info;
    };
    const [found, hours] = await Promise.all([
      span.passed ? undefined : search(span.from, span.days),
      needsOpeningHours(times) ? locationInfo().then((i) => i.opening_hours) : [],
    ]);
    const window = minutesWindow(times, openDuring(hours, place.zone, span.from, span.days), place.locale);
    const matching = found?.slots.filter((slot) => inWindow(slot.starts_at, window)) ?? [];
    if (!found || matching.length === 0) {
      const alternatives = (from: string) => alternativesFor(search, place, team, from, window, limit, now);
      const days = (from: string, count: number) => speakDays(place, from, count, today);
      if (!found) {
        const offered = await alternatives(today);
        fail(
          'days_passed',
          { days: days(span.from, span.days), count: span.days, alternatives: offered.length },
          { alternatives: offered, reason: 'too_soon' },
        );
      }
      const { policy } = await locationInfo();
      // Counted from the same today as every other date of this answer.
      const lastBookable = lastBookableDate(today, policy.max_advance_days);
      const bookable = bookableDays(span, lastBookable);
      if (bookable.tooFarAhead) {
        fail(
          'days_too_far_ahead',
          {
            asked: days(span.from, span.days),
            location: place.location.name,
            maxAdvanceDays: policy.max_advance_days,
            last: speakDate(lastBookable, place.locale, today),
          },
          { reason: 'too_far_ahead' },
        );
      }
      const offered = await alternatives(span.from);
      // Every bookable day asked for closed: say so, not "nothing free", which sounds fully booked.
      const closed = found.closed_days.filter((c) => c.date <= lastBookable);
      if (closed.length === bookable.days) {
        const first = speakDate(closed[0]!.date, place.locale, today, { relative: false });
        let day = bookable.days === 1 ? first : `${first} and the ${daysAfter(bookable.days - 1)} after`;
        if (bookable.cut) day += `, the last ${bookable.days === 1 ? 'day' : 'days'} it takes bookings for`;
        const closure = closed.every((c) => c.reason === 'closure');
        // Open those days when anyone works there (time off counts), for any service: not just that
        // weekday's opening hours.
        const { opening_hours } = await locationInfo();
        const unstaffed = closed.filter((c) => c.reason === 'nobody_works').map((c) => c.date);
        const worked = await datesSomeoneWorks(api, place, opening_hours, unstaffed);
        // A stylist's day off is not the salon closed, even when nobody else does these services that
        // day: the caller asked for that stylist (design.md 8.2).
        if (staff && !closure && found.staff_works && worked.size > 0) {
          fail(
            'staff_not_working',
            {
              staff: staff.name,
              when: `on ${day}`,
              works: speakWorkplaces(found.staff_works, place),
              alternatives: offered.length,
              away: usualDays(found.staff_works, place.location.slug, closed),
            },
            { alternatives: offered, reason: 'staff_not_working' },
          );
        }
        // Open those days, for other services: nobody who does these works (design.md 8.2).
        const opens = closed.filter((c) => worked.has(c.date));
        if (opens.length > 0) {
          fail(
            'nobody_does_it_day',
            {
              location: place.location.name,
              day,
              open: opens.length === closed.length && closed.length === 1,
              alternatives: offered.length,
            },
            {
              alternatives: offered,
              reason: 'closed',
              said: `Nobody who does that is working at ${place.location.name} on ${day}.`,
            },
          );
        }
        // Shut by its opening hours (a Sunday): closed, with no why; a closure says its reason.
        const shut = closed.every((c) => openDuring(opening_hours, place.zone, c.date, 1).length === 0);
        const why = closure
          ? (closed[0]!.closure_reason ?? null)
          : shut
            ? null
            : 'nobody who does that works then';
        fail(
          'closed_day',
          { location: place.location.name, day, why, alternatives: offered.length },
          {
            alternatives: offered,
            reason: 'closed',
            said: `${place.location.name} is closed on ${day}${closure && why ? ` (${why})` : ''}.`,
          },
        );
      }
      let when = describeRange(place, span.from, bookable.days, times.part, window, now);
      if (bookable.cut) when += `, the last day ${place.location.name} takes bookings for`;
      // A part of the day outside everyone's hours (the evening at a salon that closes at 5): nothing
      // there can free up, so "nothing is free" would send the caller to a waitlist that never offers.
      const { opening_hours } = await locationInfo();
      // So too where it opens then, but closes before what was asked could end (a 90-minute colour
      // asked for the evening at a salon closing at 6): no start then fits within the hours.
      const open = openDuring(opening_hours, place.zone, span.from, bookable.days);
      const length = found.duration.minutes;
      const fits = (hours: MinuteSpan) =>
        window.from <= hours.to - length && window.to >= hours.from && hours.to - length >= hours.from;
      if (!open.some(fits)) {
        fail(
          'not_open_then',
          {
            location: place.location.name,
            when,
            hours: speakWeeklyHours(opening_hours, place.locale, { closedDays: false }),
            alternatives: offered.length,
            tooLong: open.some((hours) => window.from < hours.to && window.to >= hours.from),
          },
          { alternatives: offered },
        );
      }
      // Today's times asked for are all over ("this morning" at 1 pm): said so, not "nothing free",
      // which sends the caller to a waitlist for times that cannot come back.
      const nowMinute = localMinute(formatLocal(now, place.zone));
      if (bookable.days === 1 && span.from === today && window.to < nowMinute) {
        fail(
          'times_passed',
          { when, alternatives: offered.length },
          { alternatives: offered, reason: 'too_soon', said: 'Those times today have already passed.' },
        );
      }
      // So too today asked for after the last start that fits in today's hours (after closing time),
      // or that the notice bookings need still allows: no time of today can free up for the caller.
      const lastStart = Math.max(...open.filter(fits).map((hours) => hours.to - length));
      const noticeEnds = nowMinute + policy.min_notice_minutes;
      if (bookable.days === 1 && span.from === today && lastStart < noticeEnds) {
        const location = place.location.name;
        const over = lastStart < nowMinute;
        fail(
          'day_over',
          {
            location,
            day: speakOnDate(today, place.locale, today),
            notice: over ? null : speakNotice(policy.min_notice_minutes),
            alternatives: offered.length,
          },
          {
            alternatives: offered,
            reason: 'too_soon',
            said: over
              ? `${location}'s working day is over for today.`
              : `${location} needs ${speakNotice(policy.min_notice_minutes)}, and has no time left today after that.`,
          },
        );
      }
      fail('no_slots', { when, alternatives: offered.length }, { alternatives: offered });
    }
    const protectedHere = place.location.booking_protection_policy.applies;
    const windowHours = protectedHere ? (await locationInfo()).policy.cancellation_window_hours : null;
    const slots = spokenSlots(
      nearest(matching, Date.parse(matching[0]!.starts_at), limit, SPREAD_MINUTES),
      place,
      team,
      now,
    );
    const more = matching.length > limit;
    return {
      slots,
      more_available: more,
      // Everything to say, so the agent reads one field (issue 44): the times, then what it costs and
      // asks of the caller. Nothing else is repeated beside it: each slot's five fields are the
      // contract's, and these are most of the answer (docs/decisions/spoken-is-what-to-say.md).
      spoken:
        `${speakFreeTimes(slots)}${more ? ' There are other times too.' : ''} ` +
        speakBookingTerms(place, services, found.duration.minutes, windowHours),
    };
  },
});

/**
 * The free times nearest to the start of what was asked, from that day on: in the part of the day or
 * the times asked for ("afternoon" offers afternoons on the days after), any time of day only when
 * none of those is free in the weeks searched.
 */
async function alternativesFor(
  search: (date: string, days: number) => ReturnType<BookingApi['availability']>,
  place: Place,
  team: readonly Staff[],
  date: string,
  window: MinutesWindow,
  limit: number,
  now: number,
) {
  const later = await search(date, ALTERNATIVE_DAYS);
  const calendar = zoneCalendar(place.zone);
  const day = calendar.day(date);
  const target = calendar.instantsAt(day, window.from)[0] ?? day.start;
  const fitting = later.slots.filter((slot) => inWindow(slot.starts_at, window));
  const offered = fitting.length > 0 ? fitting : later.slots;
  return spokenSlots(nearest(offered, target, limit, SPREAD_MINUTES), place, team, now);
}

/** "tomorrow, Tuesday 24 November in the afternoon", "from Monday 23 to Friday 27 November after 5 pm". */
function describeRange(
  place: Place,
  date: string,
  days: number,
  part: TimeOfDay | undefined,
  window: MinutesWindow,
  now: number,
): string {
  const today = localDateAt(now, place.zone);
  let when =
    days === 1
      ? speakOnDate(date, place.locale, today)
      : `from ${speakDate(date, place.locale, today)} to ${speakDate(addDays(date, days - 1), place.locale, today)}`;
  if (part) when += ` in the ${part}`;
  const limits = partOfDay(part);
  const clock = (minutes: number) => speakClock(minutes, place.locale);
  if (window.from > limits.from) when += ` from ${clock(window.from)}`;
  if (window.to < limits.to) when += ` until ${clock(window.to)}`;
  return when;
}

/** "the day after", "the 6 days after". */
function daysAfter(count: number): string {
  return count === 1 ? 'day' : `${count} days`;
}

/** "Monday 1 January 1900", "Monday 16 November to Sunday 22 November": the days asked for. */
function speakDays(place: Place, from: string, days: number, today: string): string {
  const first = speakDate(from, place.locale, today);
  return days === 1 ? first : `${first} to ${speakDate(addDays(from, days - 1), place.locale, today)}`;
}

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

/**
 * Whether every one of the days is a weekday the staff member works at this location: they are off
 * then (time off, a busy calendar), not on a usual day off.
 */
function usualDays(
  works: readonly {
    location_slug: string;
    hours: readonly { weekday: string; intervals: readonly unknown[] }[];
  }[],
  slug: string,
  days: readonly { date: string }[],
): boolean {
  const worked = new Set(
    works
      .filter((w) => w.location_slug === slug)
      .flatMap((w) => w.hours.filter((d) => d.intervals.length > 0).map((d) => d.weekday)),
  );
  return days.every(({ date }) => worked.has(WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()]!));
}
