import type { Db } from '../../src/data/database.ts';
import type { TestApp } from './test-app.ts';

/**
 * Ids of the small catalogue's rows: locations by slug, staff and services by ref, the client Jo and
 * Jo's organisation.
 */
export interface CatalogueIds {
  organisation: string;
  locations: Record<string, string>;
  staff: Record<string, string>;
  services: Record<string, string>;
  jo: string;
}

export async function catalogueIds(db: Db): Promise<CatalogueIds> {
  const locations = await db.selectFrom('locations').select(['slug', 'id']).execute();
  const staff = await db.selectFrom('staff').select(['ref', 'id']).execute();
  const services = await db.selectFrom('services').select(['ref', 'id']).execute();
  const jo = await db
    .selectFrom('clients')
    .select(['id', 'organisation_id'])
    .where('ref', '=', 'jo')
    .executeTakeFirstOrThrow();
  return {
    organisation: jo.organisation_id,
    locations: Object.fromEntries(locations.map((r) => [r.slug, r.id])),
    staff: Object.fromEntries(staff.map((r) => [r.ref, r.id])),
    services: Object.fromEntries(services.map((r) => [r.ref, r.id])),
    jo: jo.id,
  };
}

export async function countBookings(db: Db): Promise<number> {
  const row = await db
    .selectFrom('bookings')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countClients(db: Db): Promise<number> {
  const row = await db
    .selectFrom('clients')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Bookings of one staff member starting at one instant, in any status (epoch ms). */
export async function bookingsAt(db: Db, staffId: string, startsAt: string) {
  return db
    .selectFrom('bookings')
    .select(['id', 'reference', 'status'])
    .where('staff_id', '=', staffId)
    .where('starts_at', '=', Date.parse(startsAt))
    .execute();
}

/** A staff member who works Mondays 09:00-17:00 at Soho and delivers cuts, in the import format. */
export function mondayBarber(ref: string) {
  return {
    ref,
    name: `Barber ${ref}`,
    services: ['cut'],
    working_hours: { soho: { mon: [['09:00', '17:00']] } },
  };
}

export function postBooking(
  t: TestApp,
  payload: Record<string, unknown>,
  options: { idempotencyKey?: string; key?: string | null; host?: string } = {},
) {
  const headers: Record<string, string> = {};
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  if (options.host !== undefined) headers.host = options.host;
  return t.request({
    method: 'POST',
    url: '/v1/bookings',
    payload,
    headers,
    ...(options.key !== undefined && { key: options.key }),
  });
}

export function getBooking(t: TestApp, reference: string) {
  return t.request({ method: 'GET', url: `/v1/bookings/${encodeURIComponent(reference)}` });
}

/** The starts_at of availability's slots for one day (local ISO with offset). */
export async function offeredStarts(
  t: TestApp,
  query: { serviceId: string; date: string; staffId?: string },
): Promise<string[]> {
  const staff = query.staffId ? `&staff_id=${query.staffId}` : '';
  const response = await t.request({
    method: 'GET',
    url: `/v1/locations/soho/availability?service_ids=${query.serviceId}&date=${query.date}${staff}`,
  });
  if (response.statusCode !== 200) throw new Error(`availability: ${response.body}`);
  return response.json().data.slots.map((s: { starts_at: string }) => s.starts_at);
}
