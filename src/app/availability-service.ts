import {
  closedDatesBetween,
  eligibleStaff,
  offeredServicesByIds,
  schedulesOf,
} from '../data/availability-repository.ts';
import type { Db } from '../data/database.ts';
import { findSlotAt, findSlots } from '../domain/availability/find-slots.ts';
import type { AvailabilityQuery, Slot, StaffSchedule } from '../domain/availability/types.ts';
import { addDays, searchWindow } from '../domain/availability/zone-calendar.ts';
import { bookingSpanMinutes, MAX_BOOKING_SPAN_MINUTES } from '../domain/booking/booking.ts';
import type { Location, OfferedService } from '../domain/catalogue.ts';
import { AppError } from '../domain/errors.ts';
import { localDateAt } from '../domain/time-format.ts';

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
}

export interface Availability {
  services: OfferedService[];
  totalMinutes: number;
  slots: Slot[];
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
  const { services, query } = await loadQuery(
    db,
    organisationId,
    request,
    request.fromDate,
    request.days,
    now,
  );
  return { services, totalMinutes: totalMinutes(services), slots: query ? findSlots(query) : [] };
}

/**
 * The slot starting exactly at `startsAt`, as availability offers it, or null: what booking and
 * rescheduling check (inside their transaction) before they write.
 */
export async function getSlotAt(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  startsAt: number,
  now: number,
): Promise<{ services: OfferedService[]; slot: Slot | null }> {
  const date = localDateAt(startsAt, request.location.timezone);
  const { services, query } = await loadQuery(db, organisationId, request, date, 1, now, startsAt);
  return { services, slot: query ? findSlotAt(query, startsAt) : null };
}

/**
 * Everything the engine needs for `days` local days from `fromDate`, loaded in a fixed number of
 * queries; null when nobody can deliver these services there. With `onlyAt`, only the slot starting
 * then will be asked about, so less may be loaded. Exported for the engine benchmark, which
 * times findSlots on exactly what the service would pass it.
 */
export async function loadQuery(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  fromDate: string,
  days: number,
  now: number,
  onlyAt?: number,
): Promise<{ services: OfferedService[]; query: AvailabilityQuery | null }> {
  const { location } = request;
  // Asked at once: on PostgreSQL, outside a transaction, that is one wait for the database, not two.
  const [services, staff] = await Promise.all([
    requireBookableServices(db, organisationId, location, request.serviceIds),
    eligibleStaff(db, organisationId, location.id, request.serviceIds, request.staffId),
  ]);
  if (request.staffId !== undefined) {
    if (staff.length === 0) {
      throw new AppError(
        'invalid_request',
        'That staff member does not work here, is not active, or does not deliver all these services.',
        'staff_id',
      );
    }
  }
  if (staff.length === 0) return { services, query: null };

  const window = searchWindow(fromDate, days);
  // Whether one staff member is free at one start depends only on the bookings overlapping that
  // booking's block; with several staff, the any-staff rule also weighs each one's booked minutes that
  // day, so the whole day is needed.
  const bookingsWindow =
    onlyAt !== undefined && staff.length === 1
      ? { start: onlyAt, end: onlyAt + bookingSpanMinutes(services) * 60_000 }
      : window;
  const ids = staff.map((s) => s.id);
  const [schedules, closedDates] = await Promise.all([
    schedulesOf(db, organisationId, location.id, ids, { window, bookingsWindow }, request.excludeBookingId),
    closedDatesBetween(db, organisationId, location.id, fromDate, addDays(fromDate, days - 1)),
  ]);
  const staffSchedules: StaffSchedule[] = staff.map((s) => ({
    id: s.id,
    name: s.name,
    workingHours: schedules.workingHours.get(s.id) ?? [],
    timeOff: schedules.timeOff.get(s.id) ?? [],
    bookings: schedules.bookings.get(s.id) ?? [],
  }));
  return {
    services,
    query: {
      timezone: location.timezone,
      slotIntervalMinutes: location.policy.slotIntervalMinutes,
      minNoticeMinutes: location.policy.minNoticeMinutes,
      maxAdvanceDays: location.policy.maxAdvanceDays,
      closedDates,
      services: services.map((s) => ({
        id: s.id,
        durationMinutes: s.durationMinutes,
        bufferAfterMinutes: s.bufferAfterMinutes,
      })),
      staff: staffSchedules,
      fromDate,
      days,
      now,
    },
  };
}

export function totalMinutes(services: readonly OfferedService[]): number {
  return services.reduce((total, s) => total + s.durationMinutes, 0);
}
