import { expect } from 'vitest';
import { offerFreedTimes } from '../../src/app/waitlist/offers.ts';
import { catalogueIds } from './booking-fixtures.ts';
import type { TestApp } from './test-app.ts';

/**
 * The waitlist tests' common ground, in the small catalogue: Ana does Cuts at Soho on Tuesdays
 * 09:00-17:00 London (45 minutes and 15 of buffer, an hour each), and the clock stands on the Monday
 * before.
 */
export const TUESDAY = '2026-11-24';

/** One pass of the waitlist worker on the test app's clock (what `booking serve` runs every 250 ms). */
export function waitlistPass(t: TestApp): Promise<number> {
  return offerFreedTimes({
    db: t.database.db,
    clock: t.clock,
    payments: null,
    publicBaseUrl: 'http://localhost',
  });
}

/** POST /v1/bookings: a Cut with Ana at Soho at `startsAt` for the client (Jo unless said). */
export async function bookAna(t: TestApp, startsAt: string, clientId?: string) {
  const ids = await catalogueIds(t.database.db);
  return t.request({
    method: 'POST',
    url: '/v1/bookings',
    payload: {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: clientId ?? ids.jo,
      starts_at: startsAt,
    },
  });
}

/** Ana's Tuesday booked for Jo at these hours ('09' .. '16'): the references by hour. */
export async function bookAnaOnTuesday(t: TestApp, hours: readonly string[]): Promise<Map<string, string>> {
  const references = new Map<string, string>();
  for (const hour of hours) {
    const booked = await bookAna(t, `${TUESDAY}T${hour}:00:00Z`);
    expect(booked.statusCode, booked.body).toBe(201);
    references.set(hour, JSON.parse(booked.body).data.reference);
  }
  return references;
}

/** A waitlist entry as POST /v1/waitlist answers it. */
export type WaitlistEntry = { id: string; status: string; offer: null | Record<string, string> };

/** POST /v1/waitlist: joins at Soho for a Cut, `fields` over those; answered 201, the entry. */
export async function joinWaitlist(t: TestApp, fields: Record<string, unknown>): Promise<WaitlistEntry> {
  const ids = await catalogueIds(t.database.db);
  const joined = await t.request({
    method: 'POST',
    url: '/v1/waitlist',
    payload: { location_slug: 'soho', service_ids: [ids.services.cut], ...fields },
  });
  expect(joined.statusCode, joined.body).toBe(201);
  return JSON.parse(joined.body).data as WaitlistEntry;
}

/**
 * `name`, a new client (`<name> Waiting`, `<name>@example.com`), joins for a Cut with Ana at Soho on
 * Tuesday, at any time of day; `fields` over those (`times`, another day): answered 201, the entry.
 */
export async function joinForAna(
  t: TestApp,
  name: string,
  fields: Record<string, unknown> = {},
): Promise<WaitlistEntry> {
  const ids = await catalogueIds(t.database.db);
  return joinWaitlist(t, {
    staff_id: ids.staff.ana,
    client: { first_name: name, last_name: 'Waiting', email: `${name.toLowerCase()}@example.com` },
    from_date: TUESDAY,
    to_date: TUESDAY,
    ...fields,
  });
}

/** Ana's free starts on Tuesday at Soho, as availability lists them. */
export async function anaTuesdayStarts(t: TestApp): Promise<string[]> {
  const ids = await catalogueIds(t.database.db);
  const answer = await t.request({
    method: 'GET',
    url: `/v1/locations/soho/availability?service_ids=${ids.services.cut}&date=${TUESDAY}&staff_id=${ids.staff.ana}`,
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return (JSON.parse(answer.body).data.slots as { starts_at: string }[]).map((slot) => slot.starts_at);
}

/** The booking page of a booking (the link its messages carry). */
export async function bookingPagePathOf(t: TestApp, reference: string): Promise<string> {
  const row = await t.database.db
    .selectFrom('booking_pages as p')
    .innerJoin('bookings as b', 'b.id', 'p.booking_id')
    .select('p.token')
    .where('b.reference', '=', reference)
    .executeTakeFirstOrThrow();
  return `/p/manage/${row.token}`;
}
