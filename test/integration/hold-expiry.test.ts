import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expireLapsedHolds } from '../../src/app/hold-sweeper.ts';
import { type CatalogueIds, catalogueIds, offeredStarts, postBooking } from '../helpers/booking-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** Holds expire lazily (reads) and are persisted by the sweeper; both by the injected clock. */
let t: TestApp;
let ids: CatalogueIds;
let reference: string;
beforeEach(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
  const created = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services.colour],
    client_id: ids.jo,
    starts_at: '2026-11-24T10:00:00+00:00',
  });
  expect(created.json().data.status).toBe('pending_payment');
  reference = created.json().data.reference;
});
afterEach(async () => {
  await t.close();
});

const status = async () =>
  (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data.status;
const stored = () =>
  t.database.db
    .selectFrom('bookings')
    .select('status')
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();

describe('hold expiry', () => {
  it('shows a lapsed hold as expired at once, and frees its slot, before anything is written', async () => {
    t.clock.advance({ minutes: 29, seconds: 59 });
    expect(await status()).toBe('pending_payment');
    t.clock.advance({ seconds: 1 });
    expect(await status()).toBe('expired');
    expect((await stored()).status).toBe('pending_payment');
    const starts = await offeredStarts(t, { serviceId: ids.services.colour!, date: '2026-11-24' });
    expect(starts).toContain('2026-11-24T10:00:00+00:00');
  });

  it('reads a lapsed hold the sweeper has not reached as changed when it lapsed', async () => {
    // Made at 09:00Z and held for 30 minutes: it became expired at 09:30Z, whoever writes that down.
    t.clock.advance({ minutes: 47 });
    const read = (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data;
    expect(read).toMatchObject({
      status: 'expired',
      created_at: '2026-11-23T09:00:00Z',
      updated_at: '2026-11-23T09:30:00Z',
      pending_confirmation: null,
      payment_url: null,
      hold_expires_at: null,
    });
    expect((await stored()).status).toBe('pending_payment');
  });

  it('is persisted by the sweeper once, with an event and the checkout expired', async () => {
    expect(await expireLapsedHolds(t.database.db, t.clock.nowMs())).toBe(0);
    t.clock.advance({ minutes: 30 });
    expect(await expireLapsedHolds(t.database.db, t.clock.nowMs())).toBe(1);
    expect(await expireLapsedHolds(t.database.db, t.clock.nowMs())).toBe(0);
    expect((await stored()).status).toBe('expired');
    const events = await t.database.db
      .selectFrom('booking_events')
      .select(['seq', 'from_status', 'to_status', 'actor'])
      .orderBy('seq')
      .execute();
    expect(events).toEqual([
      { seq: 1, from_status: null, to_status: 'pending_payment', actor: expect.stringMatching(/^api_key:/) },
      { seq: 2, from_status: 'pending_payment', to_status: 'expired', actor: 'system:sweeper' },
    ]);
    const session = await t.database.db
      .selectFrom('checkout_sessions')
      .select('status')
      .executeTakeFirstOrThrow();
    expect(session.status).toBe('expired');
  });

  it('lets a new booking take the slot of a lapsed hold the sweeper has not reached yet', async () => {
    t.clock.advance({ minutes: 31 });
    const response = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-24T10:00:00+00:00',
    });
    expect(response.statusCode).toBe(201);
    // The booking wrote down the expiry it relied on (PostgreSQL's exclusion constraint needs it).
    expect((await stored()).status).toBe('expired');
    const lastEvent = await t.database.db
      .selectFrom('booking_events')
      .innerJoin('bookings', 'bookings.id', 'booking_events.booking_id')
      .select(['booking_events.to_status', 'booking_events.actor'])
      .where('bookings.reference', '=', reference)
      .orderBy('booking_events.seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(lastEvent).toEqual({ to_status: 'expired', actor: 'system:lazy-expiry' });
  });

  it.each(['a booking of its staff member', 'a booking moved onto it'])(
    'lets %s take the slot of a lapsed hold, written expired first',
    async (how) => {
      const { staff_id: staffId } = (
        await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })
      ).json().data;
      const other =
        how === 'a booking moved onto it'
          ? (
              await postBooking(t, {
                location_slug: 'soho',
                service_ids: [ids.services.cut],
                staff_id: staffId,
                client_id: ids.jo,
                starts_at: '2026-11-24T15:00:00+00:00',
              })
            ).json().data.reference
          : null;
      t.clock.advance({ minutes: 31 });
      const response = other
        ? await t.request({
            method: 'PATCH',
            url: `/v1/bookings/${other}`,
            payload: { starts_at: '2026-11-24T10:00:00+00:00' },
          })
        : await postBooking(t, {
            location_slug: 'soho',
            service_ids: [ids.services.cut],
            staff_id: staffId,
            client_id: ids.jo,
            starts_at: '2026-11-24T10:00:00+00:00',
          });
      expect(response.statusCode, response.body).toBe(other ? 200 : 201);
      expect(response.json().data.staff_id).toBe(staffId);
      expect((await stored()).status).toBe('expired');
      const lastEvent = await t.database.db
        .selectFrom('booking_events')
        .innerJoin('bookings', 'bookings.id', 'booking_events.booking_id')
        .select(['booking_events.to_status', 'booking_events.actor'])
        .where('bookings.reference', '=', reference)
        .orderBy('booking_events.seq', 'desc')
        .executeTakeFirstOrThrow();
      expect(lastEvent).toEqual({ to_status: 'expired', actor: 'system:lazy-expiry' });
    },
  );

  it('is swept once when several instances sweep at the same moment', async () => {
    const others = await Promise.all([1, 2, 3].map(() => t.database.reopen()));
    try {
      t.clock.advance({ minutes: 30 });
      const now = t.clock.nowMs();
      const counts = await Promise.all(
        [t.database.db, ...others.map((other) => other.db)].map((db) => expireLapsedHolds(db, now)),
      );
      expect(counts.reduce((sum, n) => sum + n, 0)).toBe(1);
      const events = await t.database.db
        .selectFrom('booking_events')
        .select('to_status')
        .orderBy('seq')
        .execute();
      expect(events.map((e) => e.to_status)).toEqual(['pending_payment', 'expired']);
    } finally {
      await Promise.all(others.map((other) => other.close()));
    }
  });

  it('stops treating a booking as a hold once it is confirmed, whatever its old hold expiry says', async () => {
    await t.database.db
      .updateTable('bookings')
      .set({ status: 'confirmed', deposit_status: 'paid' })
      .where('reference', '=', reference)
      .execute();
    t.clock.advance({ hours: 2 });
    expect(await status()).toBe('confirmed');
    const starts = await offeredStarts(t, { serviceId: ids.services.colour!, date: '2026-11-24' });
    expect(starts).not.toContain('2026-11-24T10:00:00+00:00');
  });
});
