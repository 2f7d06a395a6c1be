import { calendarsOf, closedDatesBetween, closuresBetween } from '../data/availability-repository.ts';
import type { Db } from '../data/database.ts';
import { activeStaffAt } from '../data/staff-repository.ts';
import { dayClosure, diagnoseStart, type SlotQuery } from '../domain/availability/diagnose-start.ts';
import { SLOT_UNAVAILABLE, startRefusal, type Workplace } from '../domain/availability/start-refusal.ts';
import type { Slot } from '../domain/availability/types.ts';
import { searchWindow } from '../domain/availability/zone-calendar.ts';
import type { Location } from '../domain/catalogue.ts';
import type { Refusal } from '../domain/errors.ts';
import { localDateAt } from '../domain/time-format.ts';
import {
  type AvailabilityRequest,
  bookingNotice,
  getSlotAt,
  loadCalendarQuery,
  locationRules,
  serviceSpecs,
} from './availability-service.ts';
import { workplacesOf } from './staff-workplaces.ts';

/**
 * Why a start is not a slot, for the 409 a booking or a reschedule answers (and a preview reports):
 * too_soon, too_far_ahead, closed, not_on_grid, staff_not_working or slot_unavailable, decided by the
 * domain's diagnoseStart on the same loading as availability. Asked only once the re-check has found
 * no slot, so the common path pays nothing for it.
 */
export async function explainNoSlot(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  startsAt: number,
  now: number,
): Promise<Refusal> {
  const { location } = request;
  const date = localDateAt(startsAt, location.timezone);
  // Everyone eligible, not just the staff member asked for: "closed" means nobody works that day. No
  // bookings: every reason but slot_unavailable is a rule of the calendar, and a start that would be a
  // slot were everyone free is one that bookings (or a buffer) block, i.e. slot_unavailable.
  const { services, query } = await loadCalendarQuery(
    db,
    organisationId,
    { ...request, staffId: undefined },
    date,
    1,
    now,
  );
  const notice = bookingNotice(request, services);
  const slotQuery: SlotQuery = query ?? {
    ...locationRules(location, notice.minutes),
    closedDates: await closedDatesBetween(db, organisationId, location.id, date, date),
    services: serviceSpecs(services),
    staff: [],
    now,
  };
  const diagnosis = diagnoseStart(slotQuery, startsAt, request.staffId);
  if (diagnosis.ok) return SLOT_UNAVAILABLE;
  const closure =
    diagnosis.reason === 'closed' && diagnosis.cause === 'closure'
      ? (await closuresBetween(db, organisationId, location.id, date, date))[0]
      : undefined;
  let staff: { id: string; name: string; workplaces: Workplace[] } | undefined;
  if (diagnosis.reason === 'staff_not_working') {
    const name = slotQuery.staff.find((s) => s.id === diagnosis.staffId)?.name ?? 'That staff member';
    staff = {
      id: diagnosis.staffId,
      name,
      workplaces: await workplacesOf(db, organisationId, diagnosis.staffId),
    };
  }
  const openForOthers =
    diagnosis.reason === 'closed' &&
    diagnosis.cause === 'nobody_works' &&
    (await someoneWorksOn(db, organisationId, location, diagnosis.date));
  return startRefusal(diagnosis, startsAt, {
    timezone: location.timezone,
    locationName: location.name,
    policy: location.policy,
    notice,
    closureReason: closure?.reason ?? null,
    openForOthers,
    staff,
  });
}

/** The slot starting at `startsAt`, or why there is none: the read-only check a preview makes. */
export async function slotOrRefusal(
  db: Db,
  organisationId: string,
  request: AvailabilityRequest,
  startsAt: number,
  now: number,
): Promise<{ slot: Slot; refusal: null } | { slot: null; refusal: Refusal }> {
  const { slot } = await getSlotAt(db, organisationId, request, startsAt, now);
  if (slot) return { slot, refusal: null };
  return { slot: null, refusal: await explainNoSlot(db, organisationId, request, startsAt, now) };
}

/**
 * Whether anyone at all works at the location on a local date, whatever they offer: their weekly
 * hours there that weekday less their time off, as the day-closure check sees the staff it is given.
 * A weekday someone works is not enough: everyone may be off that date.
 */
export async function someoneWorksOn(
  db: Db,
  organisationId: string,
  location: Pick<Location, 'id' | 'timezone'>,
  date: string,
): Promise<boolean> {
  const ids = (await activeStaffAt(db, organisationId, location.id)).map((s) => s.id);
  const calendars = await calendarsOf(db, organisationId, location.id, ids, searchWindow(date, 1));
  const staff = ids.map((id) => ({
    workingHours: calendars.workingHours.get(id) ?? [],
    timeOff: calendars.timeOff.get(id) ?? [],
  }));
  return dayClosure({ timezone: location.timezone, closedDates: new Set(), staff }, date) === null;
}
