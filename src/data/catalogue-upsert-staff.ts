import { clockMinutes, localInstant, staffTimeZone, WEEKDAYS } from '../app/catalogue-checks.ts';
import type { CatalogueStaff } from '../app/catalogue-schema.ts';
import { catalogueId } from '../domain/ids.ts';
import {
  atPath,
  type Context,
  type EntityCounts,
  flag,
  groupBy,
  insertAll,
  sameRows,
  upsert,
} from './catalogue-write-support.ts';
import type { Db } from './database.ts';
import type {
  StaffLocationsTable,
  StaffServicesTable,
  StaffTimeOffTable,
  StaffWorkingHoursTable,
} from './tables.ts';

/**
 * Staff are written with everything they own (services, locations, weekly hours, time off), replaced
 * together whenever any of it differs from the file, because working hours hang off staff_locations.
 */

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
  const zoneByRef = new Map(catalogue.locations.map((l) => [l.ref, l.timezone]));
  const zone = staffTimeZone(staff, zoneByRef, catalogue.locations[0]?.timezone)!;
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
  const timeOff = staff.time_off.map((entry) => {
    const startsAt = localInstant(entry.start, zone)!;
    const endsAt = localInstant(entry.end, zone)!;
    const id =
      entry.id ?? catalogueId(catalogue.organisation.slug, 'time_off', `${staffId}#${startsAt}#${endsAt}`);
    return { ...base, id, starts_at: startsAt, ends_at: endsAt, reason: entry.reason };
  });
  return {
    services: staff.services.map((ref) => ({ ...base, service_id: serviceIds.get(ref)! })),
    locations,
    hours,
    timeOff,
  };
}

function staffOwnedChanged(stored: StaffOwned, wanted: StaffOwned): boolean {
  return !(
    sameRows(stored.services, wanted.services, ['service_id']) &&
    sameRows(stored.locations, wanted.locations, ['location_id']) &&
    sameRows(stored.hours, wanted.hours, ['location_id', 'weekday', 'start_minute', 'end_minute']) &&
    sameRows(stored.timeOff, wanted.timeOff, ['id', 'starts_at', 'ends_at', 'reason'])
  );
}

async function replaceStaffOwned(trx: Db, staffId: string, owned: StaffOwned): Promise<void> {
  // Working hours reference staff_locations, so they go first and come back last.
  await trx.deleteFrom('staff_working_hours').where('staff_id', '=', staffId).execute();
  await trx.deleteFrom('staff_locations').where('staff_id', '=', staffId).execute();
  await trx.deleteFrom('staff_services').where('staff_id', '=', staffId).execute();
  await trx.deleteFrom('staff_time_off').where('staff_id', '=', staffId).execute();
  await insertAll(trx, 'staff_services', owned.services);
  await insertAll(trx, 'staff_locations', owned.locations);
  await insertAll(trx, 'staff_working_hours', owned.hours);
  await insertAll(trx, 'staff_time_off', owned.timeOff);
}

/** Staff come after services and locations, whose ids their owned rows point at. */
export async function writeStaff(ctx: Context, counts: EntityCounts): Promise<void> {
  const { trx, catalogue, plan, orgId, now } = ctx;
  const rows = await trx.selectFrom('staff').selectAll().where('organisation_id', '=', orgId).execute();
  const storedById = new Map(rows.map((row) => [row.id, row]));
  const byOrg = <T extends 'staff_services' | 'staff_locations' | 'staff_working_hours' | 'staff_time_off'>(
    table: T,
  ) =>
    trx
      .selectFrom(table as 'staff_time_off')
      .selectAll()
      .where('organisation_id', '=', orgId)
      .execute();
  const services = groupBy((await byOrg('staff_services')) as unknown as StaffServicesTable[], 'staff_id');
  const locations = groupBy((await byOrg('staff_locations')) as unknown as StaffLocationsTable[], 'staff_id');
  const hours = groupBy(
    (await byOrg('staff_working_hours')) as unknown as StaffWorkingHoursTable[],
    'staff_id',
  );
  const timeOff = groupBy(await byOrg('staff_time_off'), 'staff_id');
  for (const [i, staff] of catalogue.staff.entries()) {
    const id = plan.staff[i]!;
    const wanted = { ref: staff.ref, name: staff.name, active: flag(staff.active) };
    const owned = staffOwned(staff, id, ctx);
    const stored: StaffOwned = {
      services: services.get(id) ?? [],
      locations: locations.get(id) ?? [],
      hours: hours.get(id) ?? [],
      timeOff: timeOff.get(id) ?? [],
    };
    const ownedChanged = staffOwnedChanged(stored, owned);
    await atPath(['staff', i], () =>
      upsert(counts, storedById.get(id), wanted, ownedChanged, {
        insert: async () => {
          await trx
            .insertInto('staff')
            .values({ ...wanted, id, organisation_id: orgId, created_at: now, updated_at: now })
            .execute();
          await replaceStaffOwned(trx, id, owned);
        },
        update: async () => {
          await trx
            .updateTable('staff')
            .set({ ...wanted, updated_at: now })
            .where('id', '=', id)
            .execute();
          if (ownedChanged) await replaceStaffOwned(trx, id, owned);
        },
      }),
    );
  }
}
