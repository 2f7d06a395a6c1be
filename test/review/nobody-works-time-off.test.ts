import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Review: a day everyone at the location is off (time off, not a closure) is "nobody_works"; the new
 * REST message says the location "is open that day for others", judged by weekly hours alone
 * (openWeekdays: time off aside). Bo, the only one who works at Soho on Wednesdays, is off on
 * Wednesday 25 November 2026: nobody works there that day.
 */
let t: TestApp;
let ids: CatalogueIds;
beforeAll(async () => {
  const c = smallCatalogue();
  const bo = c.staff.find((s) => s.ref === 'bo')! as { time_off?: unknown[] };
  bo.time_off = [{ start: '2026-11-25T00:00:00', end: '2026-11-26T00:00:00', reason: 'Holiday' }];
  t = await startTestApp({ catalogues: [c] });
  ids = await catalogueIds(t.database.db);
});
afterAll(async () => {
  await t.close();
});

it('does not say Soho is open for others on a day nobody at all works there', async () => {
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services.cut],
    client_id: ids.jo,
    starts_at: '2026-11-25T10:00:00+00:00',
  });
  expect(response.statusCode, response.body).toBe(409);
  expect(response.json().error.details).toMatchObject({ closed_because: 'nobody_works' });
  expect(response.json().error.message).not.toMatch(/open that day for others/);
});
