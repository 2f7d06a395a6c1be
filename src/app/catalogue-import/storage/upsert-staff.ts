import type { Db } from '../../../data/database.ts';
import type {
  StaffLocationsTable,
  StaffServicesTable,
  StaffTimeOffTable,
  StaffWorkingHoursTable,
} from '../../../data/tables.ts';
import { clockMinutes, WEEKDAYS } from '../format/local-times.ts';
import type { CatalogueStaff } from '../format/schema.ts';
import { AliasLists, ownedTogether } from './aliases.ts';
import { timeOffRowsOf } from './time-off-rows.ts';
import {
  atPath,
  type Context,
  type EntityCounts,
  flag,
  groupBy,
  insertAll,
  type OwnedRows,
  rowsOfOrganisation,
  sameRows,
  storedById,
  upsertEntity,
} from './write-support.ts';

/**
 * Staff are written with everything they own (services, locations, weekly hours, time off), replaced
 * together whenever any of it differs from the file, because working hours hang off staff_locations.
 */

type StaffOwnedTable = 'staff_services' | 'staff_locations' | 'staff_working_hours' | 'staff_time_off';

interface StaffOwned {
  services: StaffServicesTable[];
  locations: StaffLocationsTable[];
  hours: StaffWorkingHoursTable[];
  timeOff: StaffTimeOffTable[];
}

function staffOwned(staff: CatalogueStaff, staffId: string, ctx: Context): StaffOwned {
  const { catalogue, plan, orgId } = ctx;
  const serviceIds = new Map(catalogue.services.map((s, i) => [s.ref, plan.services[i]!]));
  const locationIds = new Map(catalogue.locations.map((l, i) => [l.ref, plan.locations[i]!]));
  const base = { organisation_id: orgId, staff_id: staffId };
  const locations = Object.keys(staff.working_hours).map((ref) => ({
    ...base,
    location_id: locationIds.get(ref)!,
  }));
  const hours = Object.entries(staff.working_hours).flatMap(([ref, week]) =>
    WEEKDAYS.flatMap((day, d) =>
      (week[day] ?? []).map(([start, end]) => ({
        ...base,
        location_id: locationIds.get(ref)!,
        weekday: d + 1,
        start_minute: clockMinutes(start),
        end_minute: clockMinutes(end),
      })),
    ),
  );
  const timeOff = timeOffRowsOf(catalogue, staff, staffId).map(({ id, startsAt, endsAt }, i) => ({
    ...base,
    id,
    starts_at: startsAt,
    ends_at: endsAt,
    reason: staff.time_off[i]!.reason,
  }));
  return {
    services: staff.services.map((ref) => ({ ...base, service_id: serviceIds.get(ref)! })),
    locations,
    hours,
    timeOff,
  };
}

/** The four collections count as one: any difference in one replaces them all. */
function ownedByStaff(trx: Db, staffId: string, stored: StaffOwned, wanted: StaffOwned): OwnedRows {
  return {
    changed: !(
      sameRows(stored.services, wanted.services, ['service_id']) &&
      sameRows(stored.locations, wanted.locations, ['location_id']) &&
      sameRows(stored.hours, wanted.hours, ['location_id', 'weekday', 'start_minute', 'end_minute']) &&
      sameRows(stored.timeOff, wanted.timeOff, ['id', 'starts_at', 'ends_at', 'reason'])
    ),
    // Working hours reference staff_locations, so they go first and come back last.
    remove: async () => {
      await trx.deleteFrom('staff_working_hours').where('staff_id', '=', staffId).execute();
      await trx.deleteFrom('staff_locations').where('staff_id', '=', staffId).execute();
      await trx.deleteFrom('staff_services').where('staff_id', '=', staffId).execute();
      await trx.deleteFrom('staff_time_off').where('staff_id', '=', staffId).execute();
    },
    insert: async () => {
      await insertAll(trx, 'staff_services', wanted.services);
      await insertAll(trx, 'staff_locations', wanted.locations);
      await insertAll(trx, 'staff_working_hours', wanted.hours);
      await insertAll(trx, 'staff_time_off', wanted.timeOff);
    },
  };
}

/** Staff come after services and locations, whose ids their owned rows point at. */
export async function writeStaff(ctx: Context, counts: EntityCounts): Promise<void> {
  const { trx, catalogue, plan, orgId } = ctx;
  const stored = await storedById(trx, 'staff', orgId);
  const ofStaff = async <T extends StaffOwnedTable>(table: T) =>
    groupBy(await rowsOfOrganisation(trx, table, orgId), 'staff_id');
  const services = await ofStaff('staff_services');
  const locations = await ofStaff('staff_locations');
  const hours = await ofStaff('staff_working_hours');
  const timeOff = await ofStaff('staff_time_off');
  const calendars = groupBy(
    await trx
      .selectFrom('staff_busy_calendars')
      .select(['staff_id', 'url'])
      .where('organisation_id', '=', orgId)
      .execute(),
    'staff_id',
  );
  const aliases = await AliasLists.load(trx, 'staff_aliases', orgId);
  for (const [i, staff] of catalogue.staff.entries()) aliases.want(plan.staff[i]!, staff.aliases);
  await atPath(['staff'], () => aliases.clearChanged());
  for (const [i, staff] of catalogue.staff.entries()) {
    const id = plan.staff[i]!;
    const storedOwned: StaffOwned = {
      services: services.get(id) ?? [],
      locations: locations.get(id) ?? [],
      hours: hours.get(id) ?? [],
      timeOff: timeOff.get(id) ?? [],
    };
    await upsertEntity(ctx, counts, {
      path: ['staff', i],
      table: 'staff',
      id,
      stored: stored.get(id),
      wanted: { ref: staff.ref, name: staff.name, active: flag(staff.active) },
      owned: ownedTogether(
        ownedByStaff(trx, id, storedOwned, staffOwned(staff, id, ctx)),
        aliases.owned(id),
        busyCalendarsNoted(calendars.get(id) ?? [], staff.busy_calendars),
      ),
    });
  }
}

/**
 * A staff member whose busy calendars the file changes is counted updated like any other edit of
 * theirs. The calendars themselves are written by writeBusyCalendars, after every staff member exists,
 * calendar by calendar (one still listed keeps its last copy and refresh state): nothing here.
 */
function busyCalendarsNoted(stored: readonly { url: string }[], wanted: readonly string[]): OwnedRows {
  const storedUrls = new Set(stored.map((row) => row.url));
  const changed = storedUrls.size !== new Set(wanted).size || wanted.some((url) => !storedUrls.has(url));
  return { changed, remove: async () => {}, insert: async () => {} };
}
