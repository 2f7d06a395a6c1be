import { requireBookableServices } from '../../src/app/availability-service.ts';
import { requireLocation } from '../../src/app/directory-service.ts';
import { closedDatesBetween, eligibleStaff, schedulesOf } from '../../src/data/availability-repository.ts';
import type { Db } from '../../src/data/database.ts';
import type { AvailabilityQuery, StaffSchedule } from '../../src/domain/availability/types.ts';
import { addDays, searchWindow } from '../../src/domain/availability/zone-calendar.ts';

/**
 * The AvailabilityQuery that getAvailability (src/app/availability-service.ts) builds for an any-staff
 * search, rebuilt with the same repository calls in the same way (its loader is not exported). The
 * engine benchmark checks that findSlots of this query equals getAvailability's slots, so the two
 * cannot drift apart unnoticed.
 */
export async function loadAvailabilityQuery(
  db: Db,
  organisationId: string,
  request: { locationSlug: string; serviceIds: string[]; fromDate: string; days: number },
  now: number,
): Promise<AvailabilityQuery> {
  const { fromDate, days, serviceIds } = request;
  const location = await requireLocation(db, organisationId, request.locationSlug);
  const services = await requireBookableServices(db, organisationId, location, serviceIds);
  const staff = await eligibleStaff(db, organisationId, location.id, serviceIds);
  const window = searchWindow(fromDate, days);
  const ids = staff.map((s) => s.id);
  const [schedules, closedDates] = await Promise.all([
    schedulesOf(db, organisationId, location.id, ids, window),
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
  };
}
