import type { WorkingInterval } from '../domain/availability/types.ts';
import type { NameKey, Page, StaffRef } from '../domain/catalogue.ts';
import type { Db } from './database.ts';
import { afterNameKey, toPage } from './page-query.ts';

/** Active staff with working hours at a location. */
export async function listStaffAt(
  db: Db,
  organisationId: string,
  locationId: string,
  after: NameKey | null,
  limit: number,
): Promise<Page<StaffRef>> {
  const query = db
    .selectFrom('staff_locations')
    .innerJoin('staff', 'staff.id', 'staff_locations.staff_id')
    .select(['staff.id', 'staff.name'])
    .where('staff_locations.organisation_id', '=', organisationId)
    .where('staff_locations.location_id', '=', locationId)
    .where('staff.active', '=', 1);
  const rows = await afterNameKey(query, 'staff.name', 'staff.id', after, limit).execute();
  return toPage(rows, limit, (row) => ({ id: row.id, name: row.name }));
}

/** For each given staff member, the services they deliver that are offered at the location. */
export async function servicesDeliveredAt(
  db: Db,
  organisationId: string,
  locationId: string,
  staffIds: readonly string[],
): Promise<Map<string, string[]>> {
  const byStaff = new Map<string, string[]>(staffIds.map((id) => [id, []]));
  if (staffIds.length === 0) return byStaff;
  const rows = await db
    .selectFrom('staff_services')
    .innerJoin('service_locations', (join) =>
      join
        .onRef('service_locations.service_id', '=', 'staff_services.service_id')
        .on('service_locations.location_id', '=', locationId),
    )
    .innerJoin('services', 'services.id', 'staff_services.service_id')
    .select(['staff_services.staff_id', 'staff_services.service_id'])
    .where('staff_services.organisation_id', '=', organisationId)
    .where('staff_services.staff_id', 'in', staffIds)
    .orderBy('services.name')
    .orderBy('services.id')
    .execute();
  for (const row of rows) byStaff.get(row.staff_id)?.push(row.service_id);
  return byStaff;
}

/** The active staff with working hours (or none yet) at a location, by name. */
export async function activeStaffAt(db: Db, organisationId: string, locationId: string): Promise<StaffRef[]> {
  return db
    .selectFrom('staff_locations')
    .innerJoin('staff', 'staff.id', 'staff_locations.staff_id')
    .select(['staff.id', 'staff.name'])
    .where('staff_locations.organisation_id', '=', organisationId)
    .where('staff_locations.location_id', '=', locationId)
    .where('staff.active', '=', 1)
    .orderBy('staff.name')
    .orderBy('staff.id')
    .execute();
}

/**
 * Where and when one staff member works: their weekly hours at each active location, ordered by
 * location name, weekday and start.
 */
export async function workingHoursOf(
  db: Db,
  organisationId: string,
  staffId: string,
): Promise<
  {
    location_slug: string;
    location_name: string;
    weekday: number;
    start_minute: number;
    end_minute: number;
  }[]
> {
  return db
    .selectFrom('staff_working_hours')
    .innerJoin('locations', 'locations.id', 'staff_working_hours.location_id')
    .select([
      'locations.slug as location_slug',
      'locations.name as location_name',
      'staff_working_hours.weekday',
      'staff_working_hours.start_minute',
      'staff_working_hours.end_minute',
    ])
    .where('staff_working_hours.organisation_id', '=', organisationId)
    .where('locations.organisation_id', '=', organisationId)
    .where('staff_working_hours.staff_id', '=', staffId)
    .where('locations.active', '=', 1)
    .orderBy('locations.name')
    .orderBy('locations.id')
    .orderBy('staff_working_hours.weekday')
    .orderBy('staff_working_hours.start_minute')
    .execute();
}

/** The weekly working hours of the location's active staff there, all together. */
export async function activeWorkingHoursAt(
  db: Db,
  organisationId: string,
  locationId: string,
): Promise<WorkingInterval[]> {
  const rows = await db
    .selectFrom('staff_working_hours')
    .innerJoin('staff', 'staff.id', 'staff_working_hours.staff_id')
    .select([
      'staff_working_hours.weekday',
      'staff_working_hours.start_minute',
      'staff_working_hours.end_minute',
    ])
    .where('staff_working_hours.organisation_id', '=', organisationId)
    .where('staff_working_hours.location_id', '=', locationId)
    .where('staff.organisation_id', '=', organisationId)
    .where('staff.active', '=', 1)
    .execute();
  return rows.map((r) => ({ weekday: r.weekday, startMinute: r.start_minute, endMinute: r.end_minute }));
}
