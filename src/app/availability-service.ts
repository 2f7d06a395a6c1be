import {
  busyBookingsAndHoldsOf,
  busyBookingsOf,
  calendarsOf,
  closedDatesBetween,
  closuresBetween,
  eligibleStaff,
  offeredServicesByIds,
  type ReadHold,
  readAfterTurns,
  type StaffCalendars,
  type StaffCandidate,
} from '../data/availability-repository.ts';
import type { ClientRow } from '../data/client-repository.ts';
import type { Db } from '../data/database.ts';
import type { WaitlistEntryRow } from '../data/waitlist-repository.ts';
import { closedDaysOf } from '../domain/availability/diagnose-start.ts';
import { findSlotAt, findSlots, slotsStableUntil } from '../domain/availability/find-slots.ts';
import type {
  Availability,
  AvailabilityQuery,
  BusyBooking,
  ClosedDay,
  Interval,
  ServiceSpec,
  Slot,
  StaffSchedule,
} from '../domain/availability/types.ts';
import { addDays, isCalendarDate, searchWindow } from '../domain/availability/zone-calendar.ts';
import { bookingSpanMinutes, MAX_BOOKING_SPAN_MINUTES } from '../domain/booking/booking.ts';
import { type HoldStep, type HoldTerms, holdNotice } from '../domain/booking/holds.ts';
import type { Location, OfferedService } from '../domain/catalogue.ts';
import { AppError } from '../domain/errors.ts';
import { localDateAt } from '../domain/time-format.ts';
import { readCatalogue } from './catalogue-cache.ts';
import type { DeferredRecordRead } from './idempotency.ts';
import { workplacesOf } from './staff-workplaces.ts';

/**
 * Availability for REST, MCP and booking alike: the same loading and the same engine, so a booking can
 * never disagree with the slots it was offered.
 */
export interface AvailabilityRequest {
  location: Location;
  /** In booking order, already free of duplicates. */
  serviceIds: string[];
  /** Restricts the search to one staff member; absent means any staff. */
  staffId?: string | undefined;
  /** A booking whose own time does not count as busy (the one being rescheduled). */
  excludeBookingId?: string | undefined;
  /**
   * With excludeBookingId: the terms the booking moved is still held under for its customer (its
   * deposit, its card: heldTermsOf, as it was made, whatever the location asks now), so its new start
   * needs the time to finish it that a new booking on those terms would (bookingNotice). Absent or
   * null: it is confirmed already, and needs only the location's notice.
   */
  movesHold?: HoldTerms | null | undefined;
  /**
   * A new booking held first for more than its location and services ask (Booking Protection, a
   * deposit): a public booking's code (`proofFirst`), a waitlist offer's claim (`offer`). Its notice
   * leaves that hold time before the start too (holdNotice).
   */
  heldFor?: Pick<HoldTerms, 'proofFirst' | 'offer'> | undefined;
}

/**
 * The notice a booking of the request's services needs (holdNotice): the location's, or longer for
 * one whose hold must leave its customer time to finish it before it starts, with the step that makes
 * it longer (for the words of a too_soon refusal). What availability offers and a booking re-checks.
 */
export function bookingNotice(
  request: AvailabilityRequest,
  services: readonly Pick<OfferedService, 'depositMinor'>[],
): { minutes: number; step: HoldStep | null } {
  const { location } = request;
  if (request.excludeBookingId !== undefined) return holdNotice(location.policy, request.movesHold ?? null);
  return holdNotice(location.policy, {
    protection: location.protection.applies,
    deposit: services.some((s) => (s.depositMinor ?? 0) > 0),
    ...request.heldFor,
  });
}

/** The services, in the order asked; 400 (param service_ids) unless each is offered and bookable online here. */
export async function requireBookableServices(
  db: Db,
  organisationId: string,
  location: Location,
  serviceIds: readonly string[],
): Promise<OfferedService[]> {
  const found = new Map(
    (await offeredServicesByIds(db, organisationId, location.id, serviceIds)).map((s) => [s.id, s]),
  );
  const services = serviceIds.map((id) => {
    const service = found.get(id);
    if (!service)
      throw new AppError(
        'invalid_request',
        `Service ${id} is not offered at ${location.slug}.`,
        'service_ids',
      );
    if (!service.onlineBookable) {
      throw new AppError('invalid_request', `${service.name} can only be booked in person.`, 'service_ids');
    }
    return service;
  });
  if (bookingSpanMinutes(services) > MAX_BOOKING_SPAN_MINUTES) {
    throw new AppError(
      'invalid_request',
      `These services together take longer than ${MAX_BOOKING_SPAN_MINUTES / 60} hours; book them as separate appointments.`,
      'service_ids',
    );
  }
  return services;
}

/** The slots of `days` local days from `fromDate` (1..14), any staff or one. */
export async function getAvailability(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest & { fromDate: string; days: number },
  now: number,
): Promise<Availability> {
  return (await computeAvailability(db, organisationId, request, now)).availability;
}

/**
 * Why a day that has begun (today) has no free time left, for the customer pages to say as it is:
 * `notice`, a time later today is free but inside the notice this booking needs (too soon to book
 * online); `booked`, the working time left is all taken (by bookings, or by busy times of the staff's
 * external calendars, which the customer is not told of); `hours_over`, no working time left today fits
 * the services (the day is over for them). A closed day is no question for this: its closure says why.
 */
export type EmptyTodayCause = 'notice' | 'booked' | 'hours_over';

/**
 * What keeps today's remaining time from being offered (EmptyTodayCause): the day searched again
 * without the notice, then without the bookings. `except`: a start not counted as free (the booking
 * being moved, whose own time is no move).
 */
export async function whyNothingIsLeftToday(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  now: number,
  except?: number,
): Promise<EmptyTodayCause> {
  const today = localDateAt(now, request.location.timezone);
  const { query } = await loadQuery(db, organisationId, request, today, 1, now);
  if (!query) return 'hours_over';
  const freeIn = (q: AvailabilityQuery) => findSlots(q).some((slot) => slot.startsAt !== except);
  const withoutNotice: AvailabilityQuery = { ...query, minNoticeMinutes: 0 };
  if (freeIn(withoutNotice)) return 'notice';
  const nobodyBooked: AvailabilityQuery = {
    ...withoutNotice,
    // Nobody booked, and no external calendar busy: what those take is taken, the day is not over.
    staff: withoutNotice.staff.map((member) => ({ ...member, busy: [], bookings: [] })),
  };
  return freeIn(nobodyBooked) ? 'booked' : 'hours_over';
}

/**
 * getAvailability's answer, and the instant until which the same data gives the same answer as the
 * clock moves on (see slotsStableUntil): what lets availability-cache.ts reuse it.
 */
export async function computeAvailability(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest & { fromDate: string; days: number },
  now: number,
  catalogueVersion?: number,
): Promise<{ availability: Availability; stableUntil: number }> {
  const { services, query } = await loadQuery(
    db,
    organisationId,
    request,
    request.fromDate,
    request.days,
    now,
    undefined,
    catalogueVersion,
  );
  const slots = query ? findSlots(query) : [];
  const closedDays = query ? await closedDaysWithReasons(db, organisationId, request.location, query) : [];
  const offDays = request.staffId !== undefined && closedDays.some((day) => day.cause === 'nobody_works');
  return {
    availability: {
      services,
      totalMinutes: totalMinutes(services),
      slots,
      closedDays,
      ...(offDays && { staffWorks: await workplacesOf(db, organisationId, request.staffId!) }),
    },
    stableUntil: query ? slotsStableUntil(query, slots) : Number.POSITIVE_INFINITY,
  };
}

/** The closed days of the search, with a closure's reason (read only when a closure is among them). */
async function closedDaysWithReasons(
  db: Db,
  organisationId: string,
  location: Location,
  query: AvailabilityQuery,
): Promise<ClosedDay[]> {
  const closed = closedDaysOf(query);
  const closures = closed.filter((day) => day.cause === 'closure').map((day) => day.date);
  const reasons =
    closures.length === 0
      ? new Map<string, string | null>()
      : new Map(
          (
            await closuresBetween(
              db,
              organisationId,
              location.id,
              closures[0]!,
              closures[closures.length - 1]!,
            )
          ).map((c) => [c.date, c.reason]),
        );
  return closed.map((day) => ({ ...day, closureReason: reasons.get(day.date) ?? null }));
}

/**
 * The re-check a booking or reschedule makes before it writes, in two steps. `prepareSlotCheck` reads
 * what the catalogue says (services, staff, working hours, time off, closures); `slot` then reads the
 * staff's bookings and decides. Only the second must come after the location's turn is taken (see
 * takeTurn), so a writer does the first before it queues for the turn and holds the turn for fewer
 * queries. The result is what availability offers: the same loading and the same engine. With the
 * catalogue_version the caller read first, the catalogue's part is reused while it stays
 * (readCatalogue); the bookings are always read afresh.
 */
export interface SlotCheck {
  services: OfferedService[];
  /**
   * The slot starting at the asked instant as availability offers it, or null. With a `turn`, that
   * turn is taken first (takeTurn) and held to the end of the transaction; the bookings are read after
   * it is granted, on PostgreSQL in the same statement (one round trip), and with them what else
   * `reads` asks: the client, and an idempotency key's record (settled before the slot is decided).
   */
  slot(db: Db, reads?: SlotCheckReads): Promise<Slot | null>;
  /**
   * After slot() was given a client's id: that client's row as read with the bookings (on PostgreSQL
   * in the same statement: a booking's round trip fewer), or undefined when there is no such client.
   */
  readClient(): ClientRow | undefined;
  /**
   * After slot() was given `waitingAt` with the client's id: that client's waitlist entries still
   * waiting at that location, read with the bookings (on PostgreSQL in the same statement); [] otherwise.
   */
  readWaiting(): readonly WaitlistEntryRow[];
  /**
   * After slot(): the pending holds among the bookings it read, lapsed or not. What it read covers
   * the whole block of any slot it gives (the staff member's bookings over the block, or over the
   * search window around the day), so the lapsed holds in that block are among them (lapsedHoldsIn).
   */
  readHolds(): readonly ReadHold[];
}

/**
 * What a slot check reads with the staff's bookings (the data layer's AfterTurn): the location's turn
 * taken first, the booking's client, and an idempotency key's record, read under the key's turn just
 * before the location's and settled before the slot is decided.
 */
export interface SlotCheckReads {
  turn?: string;
  clientId?: string;
  /** A location's id: the client's waiting entries there are read too (readWaiting). */
  waitingAt?: string;
  keyRecord?: DeferredRecordRead;
}

export async function prepareSlotCheck(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  startsAt: number,
  now: number,
  catalogueVersion?: number,
): Promise<SlotCheck> {
  requireWritableStart(startsAt, request.location.timezone);
  const date = localDateAt(startsAt, request.location.timezone);
  const offer = await loadOffer(db, organisationId, request, date, 1, startsAt, catalogueVersion);
  const { services, scope } = offer;
  let client: ClientRow | undefined;
  let waiting: readonly WaitlistEntryRow[] = [];
  if (!scope) {
    const slot = async (trx: Db, { turn, clientId, keyRecord }: SlotCheckReads = {}) => {
      const read = await readAfterTurns(trx, organisationId, { turn, clientId, keyRecord: keyRecord?.ask });
      keyRecord?.settle(read.keyRecord);
      client = read.client;
      return null;
    };
    return { services, slot, readHolds: () => [], readClient: () => client, readWaiting: () => [] };
  }
  const catalogue = await loadCalendars(db, organisationId, request, scope, catalogueVersion);
  let holds: readonly ReadHold[] = [];
  return {
    services,
    slot: async (trx, { turn, clientId, keyRecord, waitingAt } = {}) => {
      const ids = scope.candidates.map((s) => s.id);
      const read = await busyBookingsAndHoldsOf(
        trx,
        organisationId,
        ids,
        scope.bookingsWindow,
        request.excludeBookingId,
        {
          turn,
          clientId,
          keyRecord: keyRecord?.ask,
          waitingAt: waitingAt === undefined ? undefined : { locationId: waitingAt, now },
        },
      );
      keyRecord?.settle(read.keyRecord);
      holds = read.holds;
      client = read.client;
      waiting = read.waiting ?? [];
      return findSlotAt(assembleQuery(request, services, scope, catalogue, read.busy, now), startsAt);
    },
    readHolds: () => holds,
    readClient: () => client,
    readWaiting: () => waiting,
  };
}

/**
 * 400 (param starts_at) for a start whose local date at the location cannot be written YYYY-MM-DD
 * (before the year 0 or after 9999, as 9999-12-31T23:00:00-12:00 is in London): RFC 3339 allows it,
 * but no day of the calendar holds it, and the dates counted from it (a series' next occurrences)
 * cannot be made (they threw: a 500).
 */
export function requireWritableStart(startsAt: number, timezone: string): void {
  if (isCalendarDate(localDateAt(startsAt, timezone))) return;
  throw new AppError(
    'invalid_request',
    "starts_at must fall between the years 0000 and 9999 in the location's time zone.",
    'starts_at',
  );
}

/** Both steps of the slot check at once, for callers that take no turn in between. */
export async function getSlotAt(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  startsAt: number,
  now: number,
): Promise<{ services: OfferedService[]; slot: Slot | null }> {
  const check = await prepareSlotCheck(db, organisationId, request, startsAt, now);
  return { services: check.services, slot: await check.slot(db) };
}

/**
 * Everything the engine needs for `days` local days from `fromDate`, loaded in a fixed number of
 * queries; null when nobody can deliver these services there. With `onlyAt`, only the slot starting
 * then will be asked about, so less may be loaded. With `catalogueVersion` (read by the caller
 * first), the catalogue's part is reused while it stays (readCatalogue). Exported for the engine
 * benchmark, which times findSlots on exactly what the service would pass it.
 */
export async function loadQuery(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  fromDate: string,
  days: number,
  now: number,
  onlyAt?: number,
  catalogueVersion?: number,
): Promise<{ services: OfferedService[]; query: AvailabilityQuery | null }> {
  const offer = await loadOffer(db, organisationId, request, fromDate, days, onlyAt, catalogueVersion);
  const { services, scope } = offer;
  if (!scope) return { services, query: null };
  const [catalogue, busy] = await Promise.all([
    loadCalendars(db, organisationId, request, scope, catalogueVersion),
    loadBusy(db, organisationId, request, scope),
  ]);
  return { services, query: assembleQuery(request, services, scope, catalogue, busy, now) };
}

/**
 * As loadQuery, but without reading bookings: the calendar alone, everyone free. What explains a
 * refused start needs no more (see explainNoSlot), and it is read while the location's turn is held.
 */
export async function loadCalendarQuery(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  fromDate: string,
  days: number,
  now: number,
): Promise<{ services: OfferedService[]; query: AvailabilityQuery | null }> {
  const { services, scope } = await loadOffer(db, organisationId, request, fromDate, days, undefined);
  if (!scope) return { services, query: null };
  const catalogue = await loadCalendars(db, organisationId, request, scope);
  return { services, query: assembleQuery(request, services, scope, catalogue, new Map(), now) };
}

/** The services asked for, and who can deliver them over which windows (null: nobody can). */
interface Offer {
  services: OfferedService[];
  scope: Scope | null;
}

/** The staff who can deliver the services, and the windows their calendars and bookings are read over. */
interface Scope {
  candidates: StaffCandidate[];
  fromDate: string;
  days: number;
  window: Interval;
  /** Narrower than `window` when only one start of one staff member will be asked about. */
  bookingsWindow: Interval;
}

async function loadOffer(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  fromDate: string,
  days: number,
  onlyAt: number | undefined,
  catalogueVersion?: number,
): Promise<Offer> {
  const { location } = request;
  // Every face checks its dates; this is the last line, so a date no face caught (a console query
  // parameter, say) is the caller's error, not a fault of the engine.
  if (!isCalendarDate(fromDate)) {
    throw new AppError('invalid_request', `"${fromDate.slice(0, 20)}" is not a date (YYYY-MM-DD).`, 'date');
  }
  const offered = `offer|${location.id}|${request.serviceIds.join(',')}|${request.staffId ?? ''}`;
  const { services, staff } = await readCatalogue(db, organisationId, catalogueVersion, offered, async () => {
    // Asked at once: on PostgreSQL, outside a transaction, that is one wait for the database, not two.
    const [services, staff] = await Promise.all([
      requireBookableServices(db, organisationId, location, request.serviceIds),
      eligibleStaff(db, organisationId, location.id, request.serviceIds, request.staffId),
    ]);
    return { services, staff };
  });
  if (request.staffId !== undefined) {
    if (staff.length === 0) {
      throw new AppError(
        'invalid_request',
        'That staff member does not work here, is not active, or does not deliver all these services.',
        'staff_id',
      );
    }
  }
  if (staff.length === 0) return { services, scope: null };

  const window = searchWindow(fromDate, days);
  // Whether one staff member is free at one start depends only on the bookings overlapping that
  // booking's block; with several staff, the any-staff rule also weighs each one's booked minutes that
  // day, so the whole day is needed.
  const bookingsWindow =
    onlyAt !== undefined && staff.length === 1
      ? { start: onlyAt, end: onlyAt + bookingSpanMinutes(services) * 60_000 }
      : window;
  return { services, scope: { candidates: staff, fromDate, days, window, bookingsWindow } };
}

/** What the catalogue says of the candidates over the search window. */
function loadCalendars(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  scope: Scope,
  catalogueVersion?: number,
): Promise<StaffCalendars & { closedDates: Set<string> }> {
  const { location } = request;
  const ids = scope.candidates.map((s) => s.id);
  const key = `calendars|${location.id}|${ids.join(',')}|${scope.fromDate}|${scope.days}`;
  return readCatalogue(db, organisationId, catalogueVersion, key, async () => {
    // Worked out before either query starts: a throw between the two would leave the first one's
    // promise with nobody awaiting it (an unhandled rejection ends the process).
    const lastDate = addDays(scope.fromDate, scope.days - 1);
    const [calendars, closedDates] = await Promise.all([
      calendarsOf(db, organisationId, location.id, ids, scope.window),
      closedDatesBetween(db, organisationId, location.id, scope.fromDate, lastDate),
    ]);
    return { ...calendars, closedDates };
  });
}

function loadBusy(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  scope: Scope,
): Promise<Map<string, BusyBooking[]>> {
  const ids = scope.candidates.map((s) => s.id);
  return busyBookingsOf(db, organisationId, ids, scope.bookingsWindow, request.excludeBookingId);
}

function assembleQuery(
  request: AvailabilityRequest,
  services: readonly OfferedService[],
  scope: Scope,
  catalogue: StaffCalendars & { closedDates: Set<string> },
  busy: Map<string, BusyBooking[]>,
  now: number,
): AvailabilityQuery {
  const { location } = request;
  const staff: StaffSchedule[] = scope.candidates.map((s) => ({
    id: s.id,
    name: s.name,
    workingHours: catalogue.workingHours.get(s.id) ?? [],
    timeOff: catalogue.timeOff.get(s.id) ?? [],
    busy: catalogue.busy.get(s.id) ?? [],
    bookings: busy.get(s.id) ?? [],
  }));
  return {
    ...locationRules(location, bookingNotice(request, services).minutes),
    closedDates: catalogue.closedDates,
    services: serviceSpecs(services),
    staff,
    fromDate: scope.fromDate,
    days: scope.days,
    now,
  };
}

/** What the engine needs of the location: its zone and its slot rules, with the notice the booking needs. */
export function locationRules(
  location: Location,
  minNoticeMinutes: number,
): Pick<AvailabilityQuery, 'timezone' | 'slotIntervalMinutes' | 'minNoticeMinutes' | 'maxAdvanceDays'> {
  return {
    timezone: location.timezone,
    slotIntervalMinutes: location.policy.slotIntervalMinutes,
    minNoticeMinutes,
    maxAdvanceDays: location.policy.maxAdvanceDays,
  };
}

/** What the engine needs of the services: lengths and buffers, in booking order. */
export function serviceSpecs(services: readonly OfferedService[]): ServiceSpec[] {
  return services.map((s) => ({
    id: s.id,
    durationMinutes: s.durationMinutes,
    bufferAfterMinutes: s.bufferAfterMinutes,
  }));
}

export function totalMinutes(services: readonly OfferedService[]): number {
  return services.reduce((total, s) => total + s.durationMinutes, 0);
}
