import type { Db } from '../data/database.ts';
import { workingHoursOf } from '../data/staff-repository.ts';
import { weeklyHours } from '../domain/availability/opening-hours.ts';
import type { Workplace } from '../domain/availability/start-refusal.ts';

/** Where and when a staff member works: their weekly hours at each active location. */
export async function workplacesOf(db: Db, organisationId: string, staffId: string): Promise<Workplace[]> {
  const rows = await workingHoursOf(db, organisationId, staffId);
  const byLocation = new Map<string, { name: string; rows: typeof rows }>();
  for (const row of rows) {
    const entry = byLocation.get(row.location_slug) ?? { name: row.location_name, rows: [] };
    entry.rows.push(row);
    byLocation.set(row.location_slug, entry);
  }
  return [...byLocation].map(([slug, entry]) => ({
    locationSlug: slug,
    locationName: entry.name,
    hours: weeklyHours(
      entry.rows.map((r) => ({ weekday: r.weekday, startMinute: r.start_minute, endMinute: r.end_minute })),
    ).filter((day) => day.intervals.length > 0),
  }));
}
