import { catalogueIds, offeredStarts } from './booking-fixtures.ts';
import type { CalendarServer } from './calendar-server.ts';
import { smallCatalogue } from './catalogue-fixtures.ts';
import { startTestApp, type TestApp } from './test-app.ts';

/**
 * The small catalogue's test app with Ana's busy calendars at these paths of `server`, and what the
 * busy-calendar tests ask of it: Ana's free starts for a Cut at Soho on a day (HH:MM, UTC).
 */
export async function appWithAnaCalendars(
  server: CalendarServer,
  paths: readonly string[],
): Promise<{ t: TestApp; anaStarts(date: string): Promise<string[]> }> {
  const catalogue = smallCatalogue();
  const [ana] = catalogue.staff as Record<string, unknown>[];
  ana!.busy_calendars = paths.map((path) => server.url(path));
  const t = await startTestApp({ catalogues: [catalogue] });
  const known = await catalogueIds(t.database.db);
  const ids = { cut: known.services.cut!, ana: known.staff.ana! };
  const anaStarts = async (date: string) =>
    (await offeredStarts(t, { serviceId: ids.cut, date, staffId: ids.ana })).map((start) =>
      start.slice(11, 16),
    );
  return { t, anaStarts };
}
