import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nightBarberCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A weekly series whose wall time the clocks skip on one of its dates (docs/recurring.md): nothing is
 * booked, and the clash lists the free times of that day nearest the time wanted, which the engine
 * reads, as every time in a gap, as the end of the gap. A London barber open through the small hours
 * of Sundays (00:00-06:00); the clocks go forward at 01:00 GMT on Sunday 28 March 2027, to 02:00 BST.
 */
let t: TestApp;

function nightBarber() {
  return nightBarberCatalogue({
    sundayUntil: '06:00',
    clients: [{ ref: 'sam', first_name: 'Sam', last_name: 'Lee', phone: '+447911123456' }],
  });
}

beforeAll(async () => {
  t = await startTestApp({ catalogues: [nightBarber()], now: '2027-03-15T09:00:00Z' });
});
afterAll(async () => {
  await t.close();
});

async function ids() {
  const db = t.database.db;
  const service = await db.selectFrom('services').select('id').executeTakeFirstOrThrow();
  const client = await db.selectFrom('clients').select('id').executeTakeFirstOrThrow();
  return { service: service.id, client: client.id };
}

describe('a series across the night the clocks go forward', () => {
  it('offers, for a visit whose time does not exist, the free times nearest it, not those nearest noon', async () => {
    const { service, client } = await ids();
    const refused = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'soho',
        service_ids: [service],
        client_id: client,
        starts_at: '2027-03-21T01:30:00+00:00',
        repeat: { every_weeks: 1, count: 2 },
      },
    });
    expect(refused.statusCode, refused.body).toBe(409);
    const [clash] = JSON.parse(refused.body).error.details.clashes;
    expect(clash).toMatchObject({
      occurrence: 2,
      date: '2027-03-28',
      starts_at: null,
      reason: 'not_on_grid',
    });
    // 01:30 on 28 March is read as 02:00 BST, the end of the gap: the times either side of it.
    expect(clash.alternatives.map((a: { starts_at: string }) => a.starts_at)).toEqual([
      '2027-03-28T00:30:00+00:00',
      '2027-03-28T02:00:00+01:00',
      '2027-03-28T02:30:00+01:00',
    ]);
  });

  it('does the same when "this and the following" moves a later visit onto a time the clocks skip', async () => {
    const { service, client } = await ids();
    const booked = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'soho',
        service_ids: [service],
        client_id: client,
        starts_at: '2027-03-21T04:00:00+00:00',
        repeat: { every_weeks: 1, count: 2 },
      },
    });
    expect(booked.statusCode, booked.body).toBe(201);
    const first = JSON.parse(booked.body).data.reference as string;
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${first}`,
      payload: { starts_at: '2027-03-21T01:30:00+00:00', scope: 'following' },
    });
    expect(moved.statusCode, moved.body).toBe(409);
    const [clash] = JSON.parse(moved.body).error.details.clashes;
    expect(clash).toMatchObject({
      occurrence: 2,
      date: '2027-03-28',
      starts_at: null,
      reason: 'not_on_grid',
    });
    expect(clash.alternatives.map((a: { starts_at: string }) => a.starts_at)).toEqual([
      '2027-03-28T00:30:00+00:00',
      '2027-03-28T02:00:00+01:00',
      '2027-03-28T02:30:00+01:00',
    ]);
  });
});
