import { afterEach, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { insertProtectedIslingtonCut } from '../helpers/protected-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The console's Reschedule page of a booking the location's policy will not let be moved now (late,
 * late_reschedule "forbid") says so at once, as the Cancel page does, instead of listing free times
 * every one of which is then refused. Monday 23 November 2026, 09:00 in London.
 */
const PASSWORD = 'correct horse battery';
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

it('says a late booking cannot be moved here, offering no times to pick', async () => {
  const catalogue = demoCatalogue() as { locations: { slug: string; policy: Record<string, unknown> }[] };
  for (const location of catalogue.locations) location.policy.late_reschedule = 'forbid';
  t = await startTestApp({ catalogues: [catalogue], now: '2026-11-23T09:00:00Z' });
  await createUser(
    t.database.db,
    { organisationSlug: 'northside-hair', email: 'desk@northside.test', role: 'staff', password: PASSWORD },
    t.clock.nowMs(),
  );
  const desk = await signInToConsole(t, 'northside-hair', 'desk@northside.test', PASSWORD);
  const late = await insertProtectedIslingtonCut(t.database.db, Date.parse('2026-11-24T14:00:00Z'));
  const page = await desk.get(`/console/bookings/${late}/reschedule`);
  expect(page.statusCode).toBe(200);
  expect(page.body).toContain('Changes less than 48 hours before the appointment are not allowed here.');
  expect(page.body).not.toContain(`action="/console/bookings/${late}/reschedule" class="inline"`);

  // One far enough ahead still lists its free times.
  const timely = await insertProtectedIslingtonCut(t.database.db, Date.parse('2026-11-30T14:00:00Z'));
  const open = await desk.get(`/console/bookings/${timely}/reschedule`);
  expect(open.body).not.toContain('not allowed here');
  expect(open.body).toContain(`action="/console/bookings/${timely}/reschedule" class="inline"`);
});
