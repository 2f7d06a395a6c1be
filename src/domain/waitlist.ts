/**
 * The waitlist (design.md 9.4): what an entry waits for, and which freed times suit it. Pure: the
 * service layer reads the entries and the availability, and makes the offers.
 */
import { DateTime } from 'luxon';

/** Parts of the day a caller may ask for, by the appointment's local start. */
export const TIMES_OF_DAY = ['morning', 'afternoon', 'evening'] as const;
export type TimeOfDay = (typeof TIMES_OF_DAY)[number];

/** Morning is before 12:00, afternoon from 12:00 to before 17:00, evening from 17:00. */
export function timeOfDay(localMinutes: number): TimeOfDay {
  if (localMinutes < 12 * 60) return 'morning';
  return localMinutes < 17 * 60 ? 'afternoon' : 'evening';
}

/** The status of an entry: waiting for an offer, or ended (booked, left, or past its last date). */
export const WAITLIST_STATUSES = ['waiting', 'booked', 'left', 'ended'] as const;
export type WaitlistStatus = (typeof WAITLIST_STATUSES)[number];

/** The step of an offered hold that is the customer's claim (a booking's pending requirements). */
export const WAITLIST_CLAIM = 'waitlist_claim';

/**
 * A time the waitlist holds for an entry that its customer has not claimed yet: offered, never taken.
 * Withdrawing it (a cancellation by the desk or an agent) is never late and tells the customer nothing,
 * as an offer that lapses or is let go.
 */
export function awaitsWaitlistClaim(booking: { pendingRequirements: readonly string[] }): boolean {
  return booking.pendingRequirements.includes(WAITLIST_CLAIM);
}

/** How long an offer holds a freed time when the location's policy says nothing. */
export const DEFAULT_OFFER_MINUTES = 15;

/** The longest span of dates one entry may wait for. */
export const MAX_WAIT_DAYS = 92;

/** The offer an entry holds now, if any: its booking, the time held and until when. */
export interface WaitlistOffer {
  bookingReference: string;
  staffId: string;
  startsAt: number;
  /** The location's zone: the time held is said on its clock, as every appointment time is. */
  timezone: string;
  expiresAt: number;
}

export interface WaitlistEntry {
  id: string;
  locationSlug: string;
  clientId: string;
  serviceIds: string[];
  staffId: string | null;
  fromDate: string;
  toDate: string;
  times: TimeOfDay[] | null;
  status: WaitlistStatus;
  bookingId: string | null;
  /** The reference of that booking (what GET /v1/bookings/{reference} takes). */
  bookingReference: string | null;
  createdAt: number;
  endedAt: number | null;
  offer: WaitlistOffer | null;
}

export interface WaitlistWants {
  /** Local dates (YYYY-MM-DD), inclusive. */
  fromDate: string;
  toDate: string;
  /** null: any time of day. */
  times: readonly TimeOfDay[] | null;
}

/** The local dates still worth searching for `wants` on `today` (the location's): null when none are. */
export function datesToSearch(wants: WaitlistWants, today: string): { from: string; to: string } | null {
  const from = wants.fromDate > today ? wants.fromDate : today;
  return from <= wants.toDate ? { from, to: wants.toDate } : null;
}

/**
 * Whether two lists name the same things whatever their order (an entry's services, its parts of the
 * day): a client waiting for a cut and a colour waits for a colour and a cut too.
 */
export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((item) => right.has(item));
}

/** Whether an entry is past its last date on `today` (the location's local date). */
export function isPastLastDate(wants: WaitlistWants, today: string): boolean {
  return today > wants.toDate;
}

/** A start as the waitlist sees it: its local date and part of the day at the location. */
export interface LocalStart {
  date: string;
  part: TimeOfDay;
}

export function localStartOf(startsAt: number, timezone: string): LocalStart {
  const local = DateTime.fromMillis(startsAt, { zone: timezone });
  return { date: local.toISODate()!, part: timeOfDay(local.hour * 60 + local.minute) };
}

/** Whether a start suits `wants`: its local date within the dates, its part of the day among the times. */
export function startSuits(wants: WaitlistWants, start: LocalStart): boolean {
  if (start.date < wants.fromDate || start.date > wants.toDate) return false;
  return wants.times === null || wants.times.includes(start.part);
}

/** Whether a start (an instant) suits `wants` in the location's zone. */
export function suitsWants(wants: WaitlistWants, startsAt: number, timezone: string): boolean {
  return startSuits(wants, localStartOf(startsAt, timezone));
}

/**
 * Why a new entry's dates cannot be waited for, or null: `from_date` after `to_date`, a `to_date`
 * already past on `today`, or more than MAX_WAIT_DAYS days from the first to the last date, both
 * counted (to_date at most MAX_WAIT_DAYS - 1 days after from_date).
 */
export function datesRefusal(fromDate: string, toDate: string, today: string): string | null {
  if (fromDate > toDate) return 'from_date is after to_date.';
  if (toDate < today) return `to_date is already past (today is ${today} at the location).`;
  // Dates as days of UTC: in the server's own zone a day may be 23 or 25 hours (or lack its midnight).
  const day = (date: string) => DateTime.fromISO(date, { zone: 'utc' });
  const days = day(toDate).diff(day(fromDate), 'days').days + 1;
  if (days > MAX_WAIT_DAYS)
    return `An entry waits for at most ${MAX_WAIT_DAYS} days: from_date to to_date spans ${days}.`;
  return null;
}

/** Where each part of the day ends on the location's clock, in minutes from midnight (timeOfDay). */
const PART_ENDS: Record<TimeOfDay, number> = { morning: 12 * 60, afternoon: 17 * 60, evening: 24 * 60 };

/**
 * Why a new entry can never be offered anything because every part of the day it wants is already
 * over on its last date, today at the location (`now` read on `timezone`'s clock), or null. A part is
 * over once the clock is past its end (morning at 12:00, afternoon at 17:00); the evening lasts until
 * the day does, and a day already past is datesRefusal's. Names `times`: a later part of the day helps.
 */
export function wantsOverRefusal(
  wants: WaitlistWants,
  now: number,
  timezone: string,
): { param: 'times'; message: string } | null {
  const local = DateTime.fromMillis(now, { zone: timezone });
  if (wants.toDate !== local.toISODate()) return null;
  const minutes = local.hour * 60 + local.minute;
  const wanted = TIMES_OF_DAY.filter((part) => wants.times === null || wants.times.includes(part));
  if (wanted.some((part) => minutes < PART_ENDS[part])) return null;
  const parts = wanted.length === 1 ? wanted[0]! : `${wanted.slice(0, -1).join(', ')} and ${wanted.at(-1)!}`;
  const day = local.setLocale('en-GB').toFormat('cccc d LLLL');
  return {
    param: 'times',
    message: `The ${parts} of ${day} ${wanted.length === 1 ? 'is' : 'are'} over; choose a later part of the day or a later date.`,
  };
}

/** What of an entry a booking is measured against (entryFitsBooking). */
export interface EntryWants extends WaitlistWants {
  serviceIds: readonly string[];
  /** null: anyone. */
  staffId: string | null;
}

/**
 * Whether a booking gives an entry what it waits for (design.md 9.4, "an entry ends when booked"):
 * the entry's services, in any order, with its staff member if it named one, starting within its
 * dates and parts of the day in the location's zone. The location is the caller's to match.
 */
export function entryFitsBooking(
  entry: EntryWants,
  booking: { serviceIds: readonly string[]; staffId: string; startsAt: number },
  timezone: string,
): boolean {
  if (!sameSet(entry.serviceIds, booking.serviceIds)) return false;
  if (entry.staffId !== null && entry.staffId !== booking.staffId) return false;
  return suitsWants(entry, booking.startsAt, timezone);
}

/**
 * Of a client's coming confirmed bookings at an entry's location, the one that ends the entry as
 * booked when its offer ends unclaimed: made or changed (moved, paid) since the offer was made, and
 * giving what the entry waits for. One the client already had as it is did not stop the entry
 * waiting then, and does not end it now.
 */
export function bookedWhileOffered<
  B extends { serviceIds: readonly string[]; staffId: string; startsAt: number },
>(
  entry: EntryWants,
  offerMadeAt: number,
  coming: readonly (B & { updatedAt: number })[],
  timezone: string,
): B | undefined {
  return coming.find(
    (booking) => booking.updatedAt >= offerMadeAt && entryFitsBooking(entry, booking, timezone),
  );
}
