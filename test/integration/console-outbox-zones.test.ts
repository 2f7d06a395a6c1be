import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TWO_COUNTRIES } from '../helpers/two-country-catalogue.ts';

/**
 * The console's Outbox page of a business in two zones (Kathmandu at UTC+05:45, the first location
 * by name, and London): a message about a London booking says when it was written and when it goes
 * in London's time, as that booking's own page does, not in the first location's. Monday 23 November
 * 2026, 03:00Z (08:45 in Kathmandu); Lucy works in London Monday to Saturday.
 */
const PASSWORD = 'correct horse battery';
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ catalogues: [TWO_COUNTRIES], now: '2026-11-23T03:00:00Z' });
  await createUser(
    t.database.db,
    { organisationSlug: 'everest-thames', email: 'desk@everest.test', role: 'staff', password: PASSWORD },
    t.clock.nowMs(),
  );
});
afterAll(async () => {
  await t.close();
});

describe('console: outbox', () => {
  it("says each message's times in its booking's location's zone", async () => {
    const idOf = async (table: 'services' | 'staff', ref: string) =>
      (await t.database.db.selectFrom(table).select('id').where('ref', '=', ref).executeTakeFirstOrThrow())
        .id;
    const desk = await signInToConsole(t, 'everest-thames', 'desk@everest.test', PASSWORD);
    // Tuesday 10:00 in London (10:00Z): its reminder goes a day before, Monday 10:00 there (15:45 in
    // Kathmandu, the locations' first by name).
    const booked = await desk.post('/console/book', {
      location: 'london',
      service_id: await idOf('services', 'cut'),
      slot: `2026-11-24T10:00:00.000Z|${await idOf('staff', 'lucy')}`,
      first_name: 'Asha',
      last_name: 'Gurung',
      email: 'asha@example.com',
    });
    expect(booked.statusCode, booked.body).toBe(303);
    const outbox = (await desk.get('/console/outbox')).body;
    expect(outbox).toContain('Scheduled for <time datetime="2026-11-23T10:00:00Z">23 Nov 2026, 10:00</time>');
    expect(outbox).toContain('<time datetime="2026-11-23T03:00:00Z">23 Nov 2026, 03:00</time>');
    expect(outbox).not.toContain('23 Nov 2026, 15:45');
    expect(outbox).not.toContain('23 Nov 2026, 08:45');
  });
});
