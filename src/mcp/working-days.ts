import type { BookingApi, LocationInfo } from './booking-api.ts';
import type { Place } from './resolution.ts';
import { opensOn } from './spoken-hours.ts';

/**
 * The dates among `dates` (local "YYYY-MM-DD", at most 14 days from the first) on which anyone at all
 * works at the location, whatever they offer: their weekly hours that weekday less their time off, as
 * the engine's day-closure check counts them. A weekday someone works (the opening hours) is not
 * enough: everyone may be off that date. Availability tells it, asked for services that between them
 * are delivered by every staff member there who takes bookings online; asked only when a date was
 * found closed for the services wanted, so only on a refusal.
 */
export async function datesSomeoneWorks(
  api: BookingApi,
  place: Place,
  hours: LocationInfo['opening_hours'],
  dates: readonly string[],
): Promise<Set<string>> {
  const open = [...new Set(dates.filter((date) => opensOn(hours, date)))].sort();
  const worked = new Set<string>();
  if (open.length === 0) return worked;
  const slug = place.location.slug;
  const services = (await api.listServices(slug)).filter((s) => s.online_bookable && s.staff.length > 0);
  // Few services cover everyone: each one taken covers the most staff not yet covered.
  const uncovered = new Set(services.flatMap((s) => s.staff.map((p) => p.id)));
  const asked: string[] = [];
  while (uncovered.size > 0) {
    const best = services.reduce((a, b) =>
      b.staff.filter((p) => uncovered.has(p.id)).length > a.staff.filter((p) => uncovered.has(p.id)).length
        ? b
        : a,
    );
    asked.push(best.id);
    for (const p of best.staff) uncovered.delete(p.id);
  }
  const from = open[0]!;
  const days =
    Math.round((Date.parse(`${open.at(-1)}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;
  const answers = await Promise.all(
    asked.map((id) => api.availability(slug, { serviceIds: [id], date: from, days })),
  );
  for (const date of open) {
    if (answers.some((a) => !a.closed_days.some((c) => c.date === date))) worked.add(date);
  }
  return worked;
}
