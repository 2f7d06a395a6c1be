import { z } from 'zod';
import { addDays, ZoneCalendar } from '../../domain/availability/zone-calendar.ts';
import { localDateAt } from '../../domain/time-format.ts';
import type { BookingApi, Staff } from '../booking-api.ts';
import { type Place, resolveLocation, resolveServices, resolveStaff } from '../resolution.ts';
import { speakDate, speakDuration, speakTime } from '../speech.ts';
import { nearest, spokenSlots } from '../spoken-bookings.ts';
import { parseSpokenTime, resolveSpokenDate, TIME_OF_DAY_MINUTES, type TimeOfDay } from '../spoken-dates.ts';
import { BadArgument, fail, SpokenSlot } from '../tool-kit.ts';
import { defineTool, READ_ONLY } from '../tool-spec.ts';
import { BookingTerms, bookingTerms } from './booking-terms.ts';

/** How far ahead alternatives are looked for when nothing is free in the range asked. */
const ALTERNATIVE_DAYS = 14;
const DEFAULT_LIMIT = 5;
/** Slots offered together are this far apart where the diary allows: choices that sound different. */
const SPREAD_MINUTES = 30;

export const ServicesArgument = z
  .union([z.string(), z.array(z.string()).min(1).max(10)])
  .describe('Service names as the caller said them (or ids), one or several back to back, e.g. "cut".');

export const findSlotsTool = defineTool({
  name: 'find_slots',
  title: 'Find free times',
  description:
    'Free appointment times for one or more services at a location, optionally with one staff member, within a ' +
    'part of the day or between two times. Dates may be YYYY-MM-DD, today, tomorrow or a weekday name, read in ' +
    "the location's time zone. When nothing is free, ok is false with code no_slots and the nearest free times " +
    "in alternatives. Pass a slot's starts_at to book unchanged.",
  input: {
    location: z.string().optional().describe('Slug or name; optional with a single location.'),
    services: ServicesArgument,
    date: z
      .string()
      .describe('YYYY-MM-DD, today, tomorrow, a weekday ("friday", "next tuesday") or "24 November".'),
    days: z.int().min(1).max(14).optional().describe('Days searched from date, 1 to 14 (default 1).'),
    staff: z.string().optional().describe('A staff member by name (first name is enough) or id.'),
    time_of_day: z
      .enum(['morning', 'afternoon', 'evening'])
      .optional()
      .describe('morning: before 12:00; afternoon: 12:00-17:00; evening: from 17:00.'),
    earliest: z.string().optional().describe('Earliest start, local time, e.g. "14:00" or "2pm".'),
    latest: z.string().optional().describe('Latest start, local time.'),
    limit: z.int().min(1).max(20).optional().describe('How many slots to return (default 5).'),
  },
  output: {
    location: z.object({ slug: z.string(), name: z.string() }),
    services: z.array(z.object({ id: z.string(), name: z.string() })),
    duration_minutes: z.int(),
    duration_spoken: z.string(),
    slots: z.array(SpokenSlot),
    more_available: z.boolean().describe('More free times match than were returned.'),
    ...BookingTerms,
  },
  annotations: READ_ONLY,
  async run(args, { api }) {
    const now = api.now();
    const place = await resolveLocation(api, args.location);
    const services = await resolveServices(api, place, args.services);
    const team = await api.listStaff(place.location.slug);
    const staff = args.staff === undefined ? undefined : await resolveStaff(api, place, args.staff, services);
    const resolved = resolveSpokenDate(args.date, place.zone, now);
    if (!resolved.ok) throw new BadArgument('date', resolved.reason);
    const window = minutesWindow(args.time_of_day, args.earliest, args.latest);
    const days = args.days ?? 1;
    const limit = args.limit ?? DEFAULT_LIMIT;

    const search = (date: string, span: number) =>
      api.availability(place.location.slug, {
        serviceIds: services.map((s) => s.id),
        date,
        days: span,
        staffId: staff?.id,
      });
    const found = await search(resolved.date, days);
    const matching = found.slots.filter((slot) => inWindow(slot.starts_at, window));
    if (matching.length === 0) {
      const alternatives = await alternativesFor(search, place, team, resolved.date, window, limit, now);
      // Every day asked for closed: say so, not "nothing free", which sounds fully booked.
      const closed = found.closed_days;
      if (closed.length === days) {
        const today = localDateAt(now, place.zone);
        const first = speakDate(closed[0]!.date, place.locale, today);
        const day = days === 1 ? first : `${first} and the ${days - 1} days after`;
        const why = closed.every((c) => c.reason === 'closure')
          ? (closed[0]!.closure_reason ?? null)
          : 'nobody who does that works then';
        fail(
          'closed_day',
          { location: place.location.name, day, why, alternatives: alternatives.length },
          { alternatives, reason: 'closed' },
        );
      }
      const when = describeRange(place, resolved.date, days, args.time_of_day, window, now);
      fail('no_slots', { when, alternatives: alternatives.length }, { alternatives });
    }
    return {
      ...bookingTerms(place, services),
      location: { slug: place.location.slug, name: place.location.name },
      services: services.map((s) => ({ id: s.id, name: s.name })),
      duration_minutes: found.duration.minutes,
      duration_spoken: speakDuration(found.duration.minutes),
      slots: spokenSlots(
        nearest(matching, Date.parse(matching[0]!.starts_at), limit, SPREAD_MINUTES),
        place,
        team,
        now,
      ),
      more_available: matching.length > limit,
    };
  },
});

interface MinutesWindow {
  from: number;
  /** Inclusive: the latest start accepted. */
  to: number;
}

/** The starts a part of the day allows (the whole day without one), latest start inclusive. */
function partOfDay(part: TimeOfDay | undefined): MinutesWindow {
  return part
    ? { from: TIME_OF_DAY_MINUTES[part].from, to: TIME_OF_DAY_MINUTES[part].to - 1 }
    : { from: 0, to: 1439 };
}

function minutesWindow(part: TimeOfDay | undefined, earliest?: string, latest?: string): MinutesWindow {
  const window = partOfDay(part);
  const time = (param: string, said: string | undefined) => {
    if (said === undefined) return undefined;
    const minutes = parseSpokenTime(said);
    if (minutes === undefined)
      throw new BadArgument(param, 'give a time of day such as "14:30" or "2:30pm".');
    return minutes;
  };
  const from = time('earliest', earliest);
  const to = time('latest', latest);
  return { from: Math.max(window.from, from ?? 0), to: Math.min(window.to, to ?? 1439) };
}

/** The local minute of day of an RFC 3339 time with offset: its wall-clock digits. */
function localMinute(startsAt: string): number {
  return Number(startsAt.slice(11, 13)) * 60 + Number(startsAt.slice(14, 16));
}

function inWindow(startsAt: string, window: MinutesWindow): boolean {
  const minute = localMinute(startsAt);
  return minute >= window.from && minute <= window.to;
}

/** The free times nearest to the start of what was asked, from that day on (any time of day). */
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
  const calendar = new ZoneCalendar(place.zone);
  const day = calendar.day(date);
  const target = calendar.instantsAt(day, window.from)[0] ?? day.start;
  return spokenSlots(nearest(later.slots, target, limit, SPREAD_MINUTES), place, team, now);
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
      ? `on ${speakDate(date, place.locale, today)}`
      : `from ${speakDate(date, place.locale, today)} to ${speakDate(addDays(date, days - 1), place.locale, today)}`;
  if (part) when += ` in the ${part}`;
  const limits = partOfDay(part);
  const clock = (minutes: number) => speakTime(Date.UTC(2000, 0, 1, 0, minutes), 'UTC', place.locale);
  if (window.from > limits.from) when += ` from ${clock(window.from)}`;
  if (window.to < limits.to) when += ` until ${clock(window.to)}`;
  return when;
}
