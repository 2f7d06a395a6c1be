import { findBookingsOfSeries } from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import { daysBetween } from '../domain/availability/zone-calendar.ts';
import type { Booking, CreatedBooking } from '../domain/booking/booking.ts';
import {
  type Occurrence,
  type Repeat,
  seriesOccurrences,
  wallTimeOf,
  wantedInstant,
  withSeriesHorizon,
} from '../domain/booking/series.ts';
import { AppError, conflict, type Refusal, refusalOf } from '../domain/errors.ts';
import { formatLocal } from '../domain/time-format.ts';
import { type AvailabilityRequest, getAvailability, requireWritableStart } from './availability-service.ts';
import {
  type Caller,
  type CheckoutContext,
  createBooking,
  heldFirstFor,
  type NewBooking,
  SlotTakenMeanwhile,
} from './booking-service.ts';
import { requireLocation } from './directory-service.ts';
import { restateSeriesNote } from './outbox-service.ts';
import { otherStaffOf } from './series-note.ts';
import { slotOrRefusal } from './start-check.ts';
import { timeOrderedId } from './time-ordered-id.ts';

/** A series just booked: its id and rule, and each occurrence as a booking made now. */
export interface CreatedSeries {
  id: string;
  repeat: Repeat;
  occurrences: CreatedBooking[];
}

/** An occurrence that cannot be booked, why, and the nearest free starts that date. */
export interface SeriesClash {
  position: number;
  date: string;
  /** The start wanted, or null when that wall time does not exist that day (clocks go forward). */
  startsAt: number | null;
  refusal: Refusal;
  alternatives: { startsAt: number; staffId: string }[];
}

/** How many free starts are offered for a date that clashes. */
const ALTERNATIVES_PER_CLASH = 3;

/**
 * Books a recurring series (design.md 9.5) inside the caller's write transaction: every occurrence
 * is checked, at the first one's local wall time, and booked as a single booking would be (its own
 * deposit, hold and Booking Protection snapshot); only the first sends a confirmation, the later ones
 * their reminders. If any occurrence is not free, nothing is kept: the 409 conflict (reason
 * series_clash) lists every clash with nearby free starts that date, and the caller's transaction
 * rolls back what was written. Without a staff member named, later occurrences keep the first one's
 * stylist when free, and take anyone free otherwise.
 */
export async function createSeries(
  trx: Db,
  caller: Caller,
  input: NewBooking,
  repeat: Repeat,
  now: number,
  checkout: CheckoutContext,
): Promise<CreatedSeries> {
  const location = await requireLocation(
    trx,
    caller.organisationId,
    input.locationSlug,
    'location_slug',
    caller.catalogueVersion,
  );
  requireWritableStart(input.startsAt, location.timezone);
  const id = timeOrderedId();
  await trx
    .insertInto('booking_series')
    .values({
      id,
      organisation_id: caller.organisationId,
      every_weeks: repeat.everyWeeks,
      count: repeat.count,
      created_at: now,
    })
    .execute();
  const occurrences: CreatedBooking[] = [];
  const clashes: SeriesClash[] = [];
  let stylist = input.staffId;
  const asked = {
    location,
    serviceIds: input.serviceIds,
    staffId: input.staffId,
    heldFor: heldFirstFor(checkout),
  };
  // The first occurrence is booked within max_advance_days itself, and each later one as far beyond
  // it as it lies after the first (so are their alternatives): a later one is too far ahead exactly
  // when the first is, never on its own.
  const visits = seriesOccurrences(input.startsAt, location.timezone, repeat);
  const extraDaysOf = (occurrence: Occurrence) => daysBetween(visits[0]!.date, occurrence.date);
  const askedOf = (occurrence: Occurrence) => ({
    ...asked,
    location: withSeriesHorizon(location, extraDaysOf(occurrence)),
  });
  let firstTooFar: Refusal | undefined;
  // Every visit wants the first one's wall time of day: where the clocks skip it, the free times
  // nearest it are offered instead.
  const { minute } = wallTimeOf(input.startsAt, location.timezone);
  // The first visit's confirmation tells the whole series; the later visits send only their reminders.
  const seriesNote = {
    following: visits.length - 1,
    everyWeeks: repeat.everyWeeks,
    lastStartsAt: visits.at(-1)?.startsAt ?? undefined,
  };
  for (const occurrence of visits) {
    if (occurrence.startsAt === null) {
      const refusal = missingWallTime(occurrence);
      clashes.push(
        await clashOf(trx, caller.organisationId, askedOf(occurrence), occurrence, refusal, now, minute),
      );
      continue;
    }
    const ask = {
      ...input,
      startsAt: occurrence.startsAt,
      seriesId: id,
      extraAdvanceDays: extraDaysOf(occurrence),
      seriesNote: occurrence.position === 1 ? seriesNote : undefined,
    };
    // Once one occurrence clashes nothing will be kept: the rest are only checked, to list every clash.
    const outcome =
      clashes.length === 0
        ? await bookOccurrence(
            trx,
            caller,
            ask,
            stylist,
            input.staffId === undefined,
            occurrence,
            now,
            checkout,
          )
        : await checkOccurrence(
            trx,
            caller,
            ask,
            askedOf(occurrence),
            stylist,
            input.staffId === undefined,
            now,
          );
    if ('refusal' in outcome) {
      // Too far ahead as its first is: said as the first's (the location's own max_advance_days).
      const tooFar = outcome.refusal.reason === 'too_far_ahead';
      if (tooFar && occurrence.position === 1) firstTooFar = outcome.refusal;
      const refusal = tooFar && firstTooFar ? firstTooFar : outcome.refusal;
      clashes.push(await clashOf(trx, caller.organisationId, askedOf(occurrence), occurrence, refusal, now));
    } else if (outcome.created) {
      occurrences.push(outcome.created);
      stylist ??= outcome.created.booking.staffId;
    }
  }
  if (clashes.length > 0) throw seriesClashError(clashes, location.timezone);
  const [first, ...later] = occurrences.map((created) => created.booking);
  const otherStaff = first && (await otherStaffOf(trx, caller.organisationId, first.staffId, later));
  if (first && otherStaff) {
    await restateSeriesNote(trx, caller.organisationId, first.id, { ...seriesNote, otherStaff });
  }
  return { id, repeat, occurrences };
}

type Outcome = { created: CreatedBooking | null } | { refusal: Refusal };

/** One occurrence booked, with the series' stylist, or anyone free when the caller named nobody. */
async function bookOccurrence(
  trx: Db,
  caller: Caller,
  ask: NewBooking,
  stylist: string | undefined,
  anyone: boolean,
  occurrence: Occurrence,
  now: number,
  checkout: CheckoutContext,
): Promise<Outcome> {
  const later = occurrence.position > 1;
  // A public series proves its contact once, with its first visit (contact-proof.ts).
  const own: CheckoutContext =
    later && checkout.publicContact
      ? { ...checkout, publicContact: undefined, awaitsSeriesProof: checkout.publicContact.askProof }
      : checkout;
  const book = (staffId: string | undefined) =>
    createBooking(trx, caller, { ...ask, staffId, confirmedWithSeries: later }, now, own);
  try {
    return { created: await book(stylist) };
  } catch (error) {
    const refusal = refusalOf(error);
    // The database's own overlap guard ends the transaction on PostgreSQL: nothing more can be asked.
    if (!refusal || error instanceof SlotTakenMeanwhile) throw error;
    if (!anyone || stylist === undefined) return { refusal };
    try {
      return { created: await book(undefined) };
    } catch (second) {
      const again = refusalOf(second);
      if (!again || second instanceof SlotTakenMeanwhile) throw second;
      return { refusal: again };
    }
  }
}

/** Whether an occurrence could be booked (nothing written), as bookOccurrence would decide it. */
async function checkOccurrence(
  trx: Db,
  caller: Caller,
  ask: NewBooking,
  asked: AvailabilityRequest,
  stylist: string | undefined,
  anyone: boolean,
  now: number,
): Promise<Outcome> {
  const check = (staffId: string | undefined) =>
    slotOrRefusal(trx, caller.organisationId, { ...asked, staffId }, ask.startsAt, now);
  const first = await check(stylist);
  if (first.slot) return { created: null };
  if (!anyone || stylist === undefined) return { refusal: first.refusal };
  const second = await check(undefined);
  return second.slot ? { created: null } : { refusal: second.refusal };
}

export function missingWallTime(occurrence: Occurrence): Refusal {
  return {
    reason: 'not_on_grid',
    message: `That time does not exist on ${occurrence.date}: the clocks go forward over it.`,
    param: 'starts_at',
  };
}

/**
 * The clash of one occurrence, with the free starts of its date nearest the time wanted. An occurrence
 * whose wall time the clocks skip (startsAt null) wants `wallMinute` of its date, read as availability
 * reads a time in a gap: the end of the gap.
 */
export async function clashOf(
  trx: Db,
  organisationId: string,
  request: AvailabilityRequest,
  occurrence: Occurrence,
  refusal: Refusal,
  now: number,
  wallMinute = 12 * 60,
): Promise<SeriesClash> {
  // A visit that may not be changed at all would be refused any other time of its date too.
  if (refusesAnyTime(refusal.reason)) return { ...occurrence, refusal, alternatives: [] };
  const wanted = occurrence.startsAt ?? wantedInstant(request.location.timezone, occurrence.date, wallMinute);
  const free = await getAvailability(
    trx,
    organisationId,
    { ...request, fromDate: occurrence.date, days: 1 },
    now,
  ).catch((error: unknown) => {
    // A date availability cannot search (beyond what the location takes) simply has no alternatives.
    if (error instanceof AppError && error.status < 500) return null;
    throw error;
  });
  const alternatives = (free?.slots ?? [])
    .map((slot) => ({ startsAt: slot.startsAt, staffId: slot.staffId }))
    .sort((a, b) => Math.abs(a.startsAt - wanted) - Math.abs(b.startsAt - wanted))
    .slice(0, ALTERNATIVES_PER_CLASH)
    .sort((a, b) => a.startsAt - b.startsAt);
  return { ...occurrence, refusal, alternatives };
}

/**
 * Whether a refusal is of the visit itself rather than of the time asked (too late to change under the
 * policy window, or not live): another time would be refused alike, so none is offered.
 */
export function refusesAnyTime(reason: string): boolean {
  return reason === 'late_change' || reason === 'not_changeable';
}

/**
 * 409 conflict (reason series_clash): nothing was booked, or with `done` "moved" (a move of the
 * following visits), nothing moved; details.clashes says which dates and why.
 */
export function seriesClashError(
  clashes: readonly SeriesClash[],
  zone: string,
  done: 'booked' | 'moved' = 'booked',
): AppError {
  const dates = clashes.map((c) => c.date).join(', ');
  return conflict(
    'series_clash',
    `Nothing was ${done}: ${clashes.length === 1 ? 'one date of the series is' : `${clashes.length} dates of the series are`} not free (${dates}). Each clash lists the nearest free times that day.`,
    'starts_at',
    {
      clashes: clashes.map((clash) => ({
        occurrence: clash.position,
        date: clash.date,
        starts_at: clash.startsAt === null ? null : formatLocal(clash.startsAt, zone),
        reason: clash.refusal.reason,
        message: clash.refusal.message,
        alternatives: clash.alternatives.map((a) => ({
          starts_at: formatLocal(a.startsAt, zone),
          staff_id: a.staffId,
        })),
      })),
    },
  );
}

/** The occurrences of a series, in time order; 404 (param series_id) when the organisation has none. */
export async function listSeries(db: Db, organisationId: string, seriesId: string): Promise<Booking[]> {
  const bookings = await findBookingsOfSeries(db, organisationId, seriesId);
  if (bookings.length === 0) throw new AppError('not_found', 'No series has this id.', 'series_id');
  return bookings;
}
