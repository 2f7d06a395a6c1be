import { ALREADY_STARTED, type BookingStatus, LIVE_STATUSES } from '../domain/booking/state-machine.ts';
import { AWAITING_PROOF } from '../domain/public-booking-policy.ts';
import { localDateAt } from '../domain/time-format.ts';
import type { Booking, BookingApi, Service, Staff } from './booking-api.ts';
import { refusedNoticeNeeding } from './hold-notice.ts';
import type { Place } from './resolution.ts';
import { speakClashes, speakClashList } from './series-words.ts';
import { speakDate, speakDateTime, speakNotice, speakOnDate } from './speech.ts';
import { nearest, spokenSlots } from './spoken-bookings.ts';
import { speakWeeklyHours } from './spoken-hours.ts';
import { failure, isError, type SpokenSlot } from './tool-kit.ts';
import { listed } from './word-lists.ts';
import { datesSomeoneWorks } from './working-days.ts';

/**
 * A refused booking or move, made conversational. The engine (the service layer, shared with REST)
 * says why in the 409's `reason` and `details`; this only puts it into words for the caller and
 * adds free times to offer instead. Every refusal answers ok false with `code` conflict and its
 * `reason`, so an agent can tell "too soon" from "taken" from "closed".
 */

/** How many free times are offered instead. */
const ALTERNATIVES = 3;
/** How far a day-level refusal (closed, too soon) looks for free times. */
const ALTERNATIVE_DAYS = 14;

export interface RefusedStart {
  place: Place;
  /** The booking's services, in order (empty for a cancellation: no times are offered then). */
  services: readonly Service[];
  /** The start asked for, RFC 3339. */
  startsAt: string;
  /** The staff member asked for (or the booking's own), if any. */
  staffId?: string | undefined;
  /** The booking being changed, if any. */
  booking?: Booking | undefined;
  /** A cancellation (not a move): one of a booking cancelled already is said as done. */
  cancelling?: boolean;
  /** Who the booking is for: a date of a series they hold at that time already is said as theirs. */
  clientId?: string | undefined;
}

/** The outcome to report for a refused booking, move or cancellation; anything else unchanged. */
export async function explainRefusal(api: BookingApi, error: unknown, asked: RefusedStart): Promise<unknown> {
  if (!isError(error, 'conflict') || error.reason === undefined) {
    // A move the engine refuses for the booking's own staff member or services (REST 409 without a
    // reason): the catalogue changed since it was booked; no other time would be taken either.
    if (isError(error, 'conflict') && asked.booking && !asked.cancelling) {
      const base = {
        reason: error.param === 'staff_id' ? 'staff_not_working' : 'not_changeable',
        detail: error.message,
      };
      if (error.param === 'staff_id') return failure('staff_cannot_take', {}, base);
      if (error.param === 'service_ids') return failure('service_not_online', {}, base);
    }
    if (isError(error, 'booking_protection_required')) {
      return failure('protection_required', {
        location: asked.place.location.name,
        phone: asked.place.phoneSpoken,
      });
    }
    return error;
  }
  const { place } = asked;
  const details = error.details ?? {};
  const reason = error.reason;
  const base = { reason, detail: error.message };
  const today = localDateAt(api.now(), place.zone);
  const day = (date: unknown) =>
    typeof date === 'string' ? speakDate(date, place.locale, today) : 'that day';
  const onDay = (date: unknown) =>
    typeof date === 'string' ? speakOnDate(date, place.locale, today) : 'that day';
  const offer = async (days: number, from?: string) => {
    const alternatives = await freeTimesNear(api, asked, days, from);
    return { ...base, alternatives };
  };
  switch (reason) {
    case 'slot_unavailable': {
      const extra = await offer(2);
      const alternatives = extra.alternatives.length;
      return details.outside_hours === true
        ? failure('nobody_works_then', { day: onDay(details.date), alternatives }, extra)
        : failure('slot_taken', { alternatives }, extra);
    }
    case 'too_soon': {
      // As REST words it: a start at this very instant is not past (bookable with no notice), just too soon.
      if (Date.parse(asked.startsAt) < api.now()) {
        const extra = await offer(2, today);
        return failure('time_passed', { alternatives: extra.alternatives.length }, extra);
      }
      const minutes = Number(details.min_notice_minutes);
      const extra = await offer(ALTERNATIVE_DAYS, today);
      const needing = refusedNoticeNeeding(details);
      const notice = Number.isFinite(minutes) ? speakNotice(minutes) : 'more notice';
      return failure('too_soon', { notice, needing, alternatives: extra.alternatives.length }, extra);
    }
    case 'too_far_ahead':
      return failure('too_far_ahead', { location: place.location.name, until: day(details.last_date) }, base);
    case 'closed': {
      // Closed for good, not on a day (a location made inactive): no time there is offered instead.
      if (typeof details.date !== 'string') {
        return failure('location_closed', { location: place.location.name }, base);
      }
      const extra = await offer(ALTERNATIVE_DAYS);
      if (details.closed_because === 'nobody_works' && typeof details.date === 'string') {
        const { opening_hours } = await api.locationInfo(place.location.slug);
        // Open for others only if anyone works there that date (time off counts), not just that weekday.
        if ((await datesSomeoneWorks(api, place, opening_hours, [details.date])).has(details.date)) {
          return failure(
            'nobody_does_it',
            {
              location: place.location.name,
              day: speakDate(details.date, place.locale, today, { relative: false }),
              open: true,
              alternatives: extra.alternatives.length,
            },
            extra,
          );
        }
      }
      const why =
        details.closed_because === 'nobody_works'
          ? 'nobody who does that works that day'
          : typeof details.closure_reason === 'string'
            ? details.closure_reason
            : null;
      return failure(
        'closed',
        {
          location: place.location.name,
          // "closed on Tuesday 24 November", never "closed on tomorrow, …".
          day:
            typeof details.date === 'string'
              ? speakDate(details.date, place.locale, today, { relative: false })
              : 'that day',
          why,
          alternatives: extra.alternatives.length,
        },
        extra,
      );
    }
    case 'not_on_grid': {
      const extra = await offer(2);
      const every = Number(details.slot_interval_minutes);
      return failure(
        'not_on_grid',
        { every: Number.isFinite(every) ? every : null, alternatives: extra.alternatives.length },
        extra,
      );
    }
    case 'staff_not_working': {
      // A week: every weekday they work comes round, so a stylist in twice a week is offered too.
      const extra = await offer(7);
      const name = typeof details.staff_name === 'string' ? details.staff_name : 'That staff member';
      return failure(
        'staff_not_working',
        {
          staff: name,
          works: speakWorkplaces(details.works, place),
          alternatives: extra.alternatives.length,
          away: details.on_time_off === true,
        },
        extra,
      );
    }
    case 'series_clash': {
      const clientId = asked.clientId ?? asked.booking?.client_id;
      const clashes = await speakClashes(api, details.clashes, place, clientId);
      return failure(
        'series_clash',
        { dates: speakClashList(clashes, place, api.now()), done: asked.booking ? 'moved' : 'booked' },
        { ...base, clashes },
      );
    }
    case 'late_change':
      return failure('late_change', { detail: error.message, phone: place.phoneSpoken }, { reason });
    case 'not_changeable':
      if (asked.cancelling && asked.booking?.status === 'cancelled') {
        const when = speakDateTime(Date.parse(asked.booking.starts_at), place.zone, place.locale, api.now());
        return failure('already_cancelled', { when }, base);
      }
      if (asked.booking && LIVE_STATUSES.includes(asked.booking.status as BookingStatus)) {
        // The engine's clock decided it, as its words say (an MCP process over REST has its own).
        if (error.message.includes(ALREADY_STARTED)) {
          const when = speakDateTime(
            Date.parse(asked.booking.starts_at),
            place.zone,
            place.locale,
            api.now(),
          );
          return failure('appointment_started', { when }, base);
        }
        if (error.message === AWAITING_PROOF) return failure('awaiting_code', {}, base);
      }
      return failure('not_changeable', { status: asked.booking?.status ?? null }, base);
  }
}

/**
 * A move to "anyone" refused for the booking's own staff member (busy, or not in then) when nobody
 * else who does its services is free then either: said of everyone, with anyone's nearest free times
 * (the refusal of the stylist alone would offer "anyone else", which was asked for).
 */
export async function explainNobodyFree(
  api: BookingApi,
  error: unknown,
  asked: RefusedStart,
): Promise<unknown> {
  if (!isError(error, 'conflict')) return error;
  if (!refusedForOwnStaff(error)) return explainRefusal(api, error, asked);
  const { place } = asked;
  const alternatives = await freeTimesNear(api, { ...asked, staffId: undefined }, 2);
  const today = localDateAt(api.now(), place.zone);
  const day = speakOnDate(localDateAt(Date.parse(asked.startsAt), place.zone), place.locale, today);
  return failure(
    'nobody_free_then',
    { day, alternatives: alternatives.length },
    { reason: 'slot_unavailable', detail: error.message, alternatives },
  );
}

/**
 * Whether a move was refused for the booking's own staff member alone, someone else perhaps taking
 * it: busy or not in then, or no longer taking it here at all (made inactive, or no longer doing its
 * services: the engine's 409 without a reason, naming staff_id).
 */
export function refusedForOwnStaff(error: unknown): boolean {
  if (!isError(error, 'conflict')) return false;
  if (error.reason === undefined) return error.param === 'staff_id';
  return error.reason === 'slot_unavailable' || error.reason === 'staff_not_working';
}

/** "Tuesday to Thursday 9 am to 5 pm at Northside Camden", from a refusal's `works`, or null. */
export function speakWorkplaces(works: unknown, place: Place): string | null {
  if (!Array.isArray(works) || works.length === 0) return null;
  const said = works.flatMap((w) => {
    const where = w as { location_name?: unknown; hours?: unknown };
    if (typeof where.location_name !== 'string' || !Array.isArray(where.hours)) return [];
    const week = where.hours as Parameters<typeof speakWeeklyHours>[0];
    // A refusal lists only the days they work: the rest of the week is not "closed" for them.
    const open = speakWeeklyHours(week, place.locale, { closedDays: false });
    return [`${open} at ${where.location_name}`];
  });
  return said.length === 0 ? null : listed(said);
}

/**
 * Free times of the same services (and staff member, if one was named) nearest to the time asked,
 * from its day (or `from`) over `days` days; none for a cancellation.
 */
async function freeTimesNear(
  api: BookingApi,
  asked: RefusedStart,
  days: number,
  from?: string,
): Promise<SpokenSlot[]> {
  const { place, services } = asked;
  if (services.length === 0) return [];
  const target = Date.parse(asked.startsAt);
  const askedDate = localDateAt(target, place.zone);
  const date = from !== undefined && from > askedDate ? from : askedDate;
  const [found, team] = await Promise.all([
    api.availability(place.location.slug, {
      serviceIds: services.map((s) => s.id),
      date,
      days,
      staffId: asked.staffId,
    }),
    api.listStaff(place.location.slug),
  ]);
  const others = found.slots.filter(
    (slot) =>
      Date.parse(slot.starts_at) !== target &&
      // The booking being moved does not block its own time; it is not an alternative to itself.
      slot.starts_at !== asked.booking?.starts_at,
  );
  return spokenSlots(nearest(others, target, ALTERNATIVES), place, team as Staff[], api.now());
}
