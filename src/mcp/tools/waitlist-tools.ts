import { z } from 'zod';
import { addDays } from '../../domain/availability/zone-calendar.ts';
import { instantOfWallTime } from '../../domain/booking/series.ts';
import { AppError } from '../../domain/errors.ts';
import { localDateAt } from '../../domain/time-format.ts';
import { bookedWhileOffered, type EntryWants, TIMES_OF_DAY, type TimeOfDay } from '../../domain/waitlist.ts';
import { alsoNamingContact, contactForms, dateForms, dateOrder, nameForms } from '../argument-forms.ts';
import type { Booking, BookingApi, WaitlistEntry } from '../booking-api.ts';
import { CALLER_TEXT_NOTE } from '../caller-text.ts';
import { resolveLocation, resolveServices, resolveStaffIfNamed } from '../resolution.ts';
import { speakDate } from '../speech.ts';
import { speakBookings } from '../spoken-bookings.ts';
import { resolveSpokenDate } from '../spoken-dates.ts';
import { BadArgument, fail, isError, readAll } from '../tool-kit.ts';
import { defineTool } from '../tool-spec.ts';
import { clientForEntry, NewClientInput } from './client-tools.ts';
import { ServicesArgument } from './find-slots.ts';

/** Words that name a day from today, whatever else was said. */
const OF_TODAY = /\b(?:today|tonight|tomorrow)\b/;

/**
 * join_waitlist (design.md 9.4): when find_slots finds nothing, the caller waits for a time to free up;
 * the first that suits them is held for them and sent by text or e-mail with a link to claim it.
 */
export const joinWaitlistTool = defineTool({
  name: 'join_waitlist',
  title: 'Join the waitlist',
  description: `When nothing suits: the first time freed between the dates is held and sent to the caller to claim. ${CALLER_TEXT_NOTE}`,
  input: {
    location: z.string().optional(),
    services: ServicesArgument,
    client_id: z.string().optional(),
    client: NewClientInput.optional().describe('A new caller, instead of client_id.'),
    staff: z.string().optional(),
    from_date: z.string().describe('As find_slots reads date.'),
    to_date: z.string().describe('The last day that suits.'),
    times: z.array(z.enum(TIMES_OF_DAY)).optional(),
  },
  output: { entry_id: z.string(), spoken: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  failureMembers: ['choices'],
  // A caller whose phone or e-mail is on file under another name is answered with that name to choose
  // (clientForEntry, as book answers it): written by whoever registered it, so marked as theirs.
  callerSupplied: ['choices'],
  formProblems: (given) => [
    ...dateForms(given, 'from_date', 'to_date'),
    ...dateOrder(given, 'from_date', 'to_date'),
    ...contactForms(given, true),
    ...nameForms(given, true),
  ],
  async run(args, { api }) {
    const now = api.now();
    const place = await resolveLocation(api, args.location);
    const services = await resolveServices(api, place, args.services);
    const staff = await resolveStaffIfNamed(api, place, args.staff, services);
    const partsSaid: Partial<Record<'from_date' | 'to_date', TimeOfDay>> = {};
    const read =
      (name: 'from_date' | 'to_date', at = now) =>
      () => {
        const reading = resolveSpokenDate(args[name], place.zone, at, place.locale);
        if (!reading.ok) throw new BadArgument(name, reading.reason);
        if (reading.timeOfDay) partsSaid[name] = reading.timeOfDay;
        // "next week" as to_date waits until its last day.
        return name === 'to_date' && reading.days ? addDays(reading.date, reading.days - 1) : reading.date;
      };
    const [from, asRead] = await Promise.resolve()
      .then(() => readAll(read('from_date'), read('to_date')))
      .catch(alsoNamingContact(args));
    // A span is said from its first day: "Wednesday to Monday" ends on the Monday after that
    // Wednesday, "the 28th to the 3rd" in the next month. Dates given as dates read the same either
    // way, and words of today ("tomorrow") mean today's: those the wrong way round are still refused.
    const fromFirstDay = asRead < from && !OF_TODAY.test(args.to_date.toLowerCase());
    const to = fromFirstDay ? read('to_date', instantOfWallTime(place.zone, from, 12 * 60) ?? now)() : asRead;
    // An offer goes by text or e-mail alone: a new caller without either could never hear of one.
    const { client } = args;
    if (client && !args.client_id?.trim() && !client.phone?.trim() && !client.email?.trim()) {
      fail('waitlist_contact_needed', {});
    }
    const whose = await clientForEntry(api, args, place.location.country);
    const times = args.times ? { times: args.times } : timesSaidInDates(from, to, partsSaid);
    const entry = await api
      .joinWaitlist({
        location_slug: place.location.slug,
        service_ids: services.map((s) => s.id),
        ...whose,
        from_date: from,
        to_date: to,
        ...(staff && { staff_id: staff.id }),
        ...times,
      })
      .catch((error: unknown) => {
        // The one conflict joining has: an entry for these services is already waiting.
        if (isError(error, 'conflict')) fail('already_waiting', {});
        if (isError(error, 'invalid_request') && (error.param === 'client_id' || error.param === 'client'))
          refuseClient(error);
        // The parts of the day asked for are over on the last day, today (domain wantsOverRefusal); the
        // other refusal of times is of a list longer than the parts of the day, told as refused.
        const listed = times.times?.length ?? 0;
        if (isError(error, 'invalid_request') && error.param === 'times' && listed <= TIMES_OF_DAY.length) {
          const parts = TIMES_OF_DAY.filter((part) => !times.times || times.times.includes(part));
          fail('waitlist_times_over', {
            parts,
            day: speakDate(to, place.locale, localDateAt(now, place.zone)),
          });
        }
        throw error;
      });
    const today = localDateAt(now, place.zone);
    // A wait said from a day already past ("since last Friday") can be offered a time from today on.
    const first = from < today ? today : from;
    const days =
      first === to
        ? `for ${speakDate(first, place.locale, today)}`
        : `from ${speakDate(first, place.locale, today)} to ${speakDate(to, place.locale, today)}`;
    // What was asked, said back: the stylist when named, the parts of the day when given.
    const withStaff = staff ? ` with ${staff.name}` : '';
    return {
      entry_id: entry.id,
      spoken: `You're on the waitlist${withStaff} ${days}${speakTimesOfDay(times.times)}. If a time frees up, it's held for you and we'll send you a link to book it.`,
    };
  },
});

/** The new caller's own fields, as a refusal of one names it ("client.phone ..."). */
const CLIENT_FIELD = new RegExp(`^client\\.(${Object.keys(NewClientInput.shape).join('|')})\\b`);

/**
 * A refusal of the entry's client: one of a new caller's own fields, named as book names it
 * (client.first_name) so the agent asks the caller again; else the client's only refusal, no e-mail
 * and a phone the organisation does not text (abroad).
 */
function refuseClient(error: AppError): never {
  const field = CLIENT_FIELD.exec(error.message)?.[1];
  if (field) throw new AppError(error.code, error.message, `client.${field}`, error.details);
  fail('waitlist_contact_unreachable', {});
}

/** ", in the morning", ", in the morning or evening": the parts of the day waited for ("" for any). */
function speakTimesOfDay(times: readonly TimeOfDay[] | undefined): string {
  // In the day's order, whatever order they were given in.
  const parts = TIMES_OF_DAY.filter((part) => times?.includes(part));
  if (parts.length === 0) return '';
  const last = parts[parts.length - 1]!;
  const listed = parts.length === 1 ? last : `${parts.slice(0, -1).join(', ')} or ${last}`;
  return `, in the ${listed}`;
}

/**
 * The part of the day said in the dates, waited for when `times` is not given: an entry for any time
 * would be offered the morning a caller who said "Tuesday afternoon" cannot come. One day said with a
 * part ("Tuesday afternoon", "tonight"), or the same part at both ends ("Monday evening to Friday
 * evening"); parts that differ ("tomorrow morning to Wednesday evening") mark where a span starts and
 * ends, not the times of each day, so any time suits.
 */
function timesSaidInDates(
  from: string,
  to: string,
  said: Partial<Record<'from_date' | 'to_date', TimeOfDay>>,
): { times: TimeOfDay[] } | Record<string, never> {
  const first = said.from_date;
  const last = said.to_date;
  if (first && last) return first === last ? { times: [first] } : {};
  const only = first ?? last;
  return only && from === to ? { times: [only] } : {};
}

/**
 * What releasing a waitlist offer leaves of its entry: it waits on for another time, or it ends as
 * booked with a time the caller booked meanwhile that it waits for (bookedWhileOffered: the engine
 * ends it so), which the caller is told rather than that they still wait. A dry run foresees it from
 * the caller's coming bookings (the first 20 live ones: GET /clients/{id}/bookings); a release reads
 * the entry as the release left it.
 */
export async function waitlistAfterRelease(
  api: BookingApi,
  offer: Booking,
  offeredTo: WaitlistEntry | undefined,
  zone: string,
  dryRun: boolean,
): Promise<string> {
  if (!offeredTo) return '.';
  if (dryRun) {
    const coming = (await api.upcomingBookings(offeredTo.client_id))
      .filter((b) => b.status === 'confirmed' && b.location_slug === offeredTo.location_slug)
      .map((b) => ({ ...asFilling(b), updatedAt: Date.parse(b.updated_at) }));
    const filling = bookedWhileOffered(wantsOfEntry(offeredTo), Date.parse(offer.created_at), coming, zone);
    if (!filling) return '; the caller stays on the waitlist.';
    const [booked] = await speakBookings(api, [filling.booking]);
    return `. The caller would be off the waitlist: they have booked ${booked!.spoken}, a time they are waiting for.`;
  }
  try {
    const entry = await api.getWaitlistEntry(offeredTo.id);
    if (entry.status === 'waiting') return '; the caller stays on the waitlist.';
    if (entry.status !== 'booked' || entry.booking_reference === null) {
      return '. The caller is no longer on the waitlist.';
    }
    const [booked] = await speakBookings(api, [await api.getBooking(entry.booking_reference)]);
    return `. The caller is off the waitlist: they have booked ${booked!.spoken}, a time they were waiting for.`;
  } catch {
    // Released already: a read failing now must not make the agent ask again for a release done.
    return '.';
  }
}

/** A booking as bookedWhileOffered measures it. */
function asFilling(booking: Booking) {
  return {
    booking,
    serviceIds: booking.service_ids,
    staffId: booking.staff_id,
    startsAt: Date.parse(booking.starts_at),
  };
}

/** What an entry waits for, as bookedWhileOffered measures it. */
function wantsOfEntry(entry: WaitlistEntry): EntryWants {
  return {
    serviceIds: entry.service_ids,
    staffId: entry.staff_id,
    fromDate: entry.from_date,
    toDate: entry.to_date,
    times: entry.times,
  };
}
