import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The cancellation window with an injected clock. Soho: 24-hour window, late changes allowed.
 * "Strict" (a copy of Soho's set-up under another slug): late cancellations and reschedules forbidden.
 * A colour (deposit £20) is booked for Tuesday 2026-11-24 at 10:00 and its deposit paid.
 */
let t: TestApp;
const start = '2026-11-24T10:00:00+00:00';

function catalogue() {
  const c = smallCatalogue();
  const strict = {
    ...c.locations[0]!,
    ref: 'strict',
    slug: 'strict',
    name: 'Strict',
    policy: { cancellation_window_hours: 24, late_cancellation: 'forbid', late_reschedule: 'forbid' },
  };
  c.locations.push(strict as never);
  c.services.find((s) => s.ref === 'colour')!.locations.push('strict');
  c.staff.find((s) => s.ref === 'ana')!.working_hours = {
    ...c.staff[0]!.working_hours,
    strict: { tue: [['09:00', '17:00']] },
  } as never;
  return c;
}

beforeEach(async () => {
  t = await startTestApp({ catalogues: [catalogue()], limits: { requestsPerMinute: 10_000 } });
});
afterEach(async () => {
  await t.close();
});

async function bookPaidColour(slug: string, startsAt = start): Promise<string> {
  const db = t.database.db;
  const ids = await catalogueIds(db);
  const created = await postBooking(t, {
    location_slug: slug,
    service_ids: [ids.services.colour],
    client_id: ids.jo,
    starts_at: startsAt,
  });
  expect(created.statusCode).toBe(201);
  const reference = created.json().data.reference as string;
  const session = await db
    .selectFrom('checkout_sessions')
    .select('id')
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();
  const paid = await t.app.inject({
    method: 'POST',
    url: `/checkout/${session.id}/pay`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
    payload: '',
  });
  expect(paid.statusCode).toBe(303);
  return reference;
}

const cancel = (reference: string) =>
  t.request({
    method: 'POST',
    url: `/v1/bookings/${reference}/cancel`,
    payload: { reason: 'changed plans' },
  });
const reschedule = (reference: string, startsAt: string) =>
  t.request({ method: 'PATCH', url: `/v1/bookings/${reference}`, payload: { starts_at: startsAt } });

describe('the cancellation policy window', () => {
  it('refunds a paid deposit when cancelled on time (24 h or more before)', async () => {
    const reference = await bookPaidColour('soho');
    t.clock.set('2026-11-23T10:00:00Z');
    const response = await cancel(reference);
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toEqual({
      reference,
      status: 'cancelled',
      cancelled_at: '2026-11-23T10:00:00Z',
      deposit_refunded: true,
      change: { dry_run: false, late: false, deposit_refunded: true, fee: null },
      following: [],
    });
  });

  it('retains the deposit when cancelled late where late cancellations are allowed', async () => {
    const reference = await bookPaidColour('soho');
    t.clock.set('2026-11-23T10:00:01Z');
    const response = await cancel(reference);
    expect(response.statusCode).toBe(200);
    expect(response.json().data.deposit_refunded).toBe(false);
    const row = await t.database.db
      .selectFrom('bookings')
      .select(['deposit_status', 'cancel_reason'])
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ deposit_status: 'retained', cancel_reason: 'changed plans' });
  });

  it('refuses a late cancellation where the location forbids it, and allows it on time', async () => {
    const reference = await bookPaidColour('strict');
    t.clock.set('2026-11-23T12:00:00Z');
    const late = await cancel(reference);
    expect(late.statusCode).toBe(409);
    expect(late.json().error.code).toBe('conflict');
    expect((await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data.status).toBe(
      'confirmed',
    );
  });

  it('refuses a late reschedule where the location forbids it, and allows one on time', async () => {
    const reference = await bookPaidColour('strict');
    t.clock.set('2026-11-23T09:59:59Z');
    const onTime = await reschedule(reference, '2026-11-24T12:00:00+00:00');
    expect(onTime.statusCode).toBe(200);
    expect(onTime.json().data.starts_at).toBe('2026-11-24T12:00:00+00:00');
    // The window counts from the current start, now 12:00.
    t.clock.set('2026-11-23T12:00:01Z');
    const late = await reschedule(reference, '2026-11-24T14:00:00+00:00');
    expect(late.statusCode).toBe(409);
    expect(late.json().error).toMatchObject({ code: 'conflict', param: 'starts_at' });
  });

  it('answers a move to the time the booking already has (a retried PATCH) with the booking, changing nothing', async () => {
    const reference = await bookPaidColour('strict');
    t.clock.set('2026-11-23T09:59:59Z');
    expect((await reschedule(reference, '2026-11-24T12:00:00+00:00')).statusCode).toBe(200);
    const moved = (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data;
    // The first move was told; its messages have gone.
    await t.database.db
      .updateTable('outbox')
      .set({ status: 'sent', sent_at: t.clock.nowMs() })
      .where('reference', '=', reference)
      .execute();
    const outboxBefore = await t.database.db
      .selectFrom('outbox')
      .select('id')
      .where('reference', '=', reference)
      .execute();

    // The same PATCH again, now inside Strict's 24 hours: not refused as a late change, since nothing changes.
    t.clock.set('2026-11-23T12:00:01Z');
    const again = await reschedule(reference, '2026-11-24T12:00:00+00:00');
    expect(again.statusCode).toBe(200);
    const { change, following, ...booking } = again.json().data;
    expect(booking).toEqual(moved);
    expect(change).toEqual({ dry_run: false, late: false, deposit_refunded: false, fee: null });
    expect(following).toEqual([]);
    const withStaff = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: '2026-11-24T12:00:00Z', staff_id: moved.staff_id, dry_run: true },
    });
    expect(withStaff.statusCode).toBe(200);
    expect(withStaff.json().data).toMatchObject({ starts_at: moved.starts_at, updated_at: moved.updated_at });

    // No second "moved" message, no second event: the customer hears of one move.
    const outboxAfter = await t.database.db
      .selectFrom('outbox')
      .select('id')
      .where('reference', '=', reference)
      .execute();
    expect(outboxAfter).toEqual(outboxBefore);
    const events = await t.database.db
      .selectFrom('booking_events')
      .innerJoin('bookings', 'bookings.id', 'booking_events.booking_id')
      .select('booking_events.details')
      .where('bookings.reference', '=', reference)
      .execute();
    expect(events.filter((e) => String(e.details).includes('rescheduled'))).toHaveLength(1);

    // Another time is still a change, and a late one here.
    expect((await reschedule(reference, '2026-11-24T14:00:00+00:00')).statusCode).toBe(409);
  });

  it('allows a late reschedule where the location allows it', async () => {
    const reference = await bookPaidColour('soho');
    t.clock.set('2026-11-24T08:00:00Z');
    expect((await reschedule(reference, '2026-11-24T13:00:00+00:00')).statusCode).toBe(200);
  });

  it('refuses any change once the appointment has started', async () => {
    const reference = await bookPaidColour('soho');
    t.clock.set('2026-11-24T10:00:00Z');
    expect((await cancel(reference)).statusCode).toBe(409);
    expect((await reschedule(reference, '2026-11-24T14:00:00+00:00')).statusCode).toBe(409);
  });

  it('records each change in the event log', async () => {
    const reference = await bookPaidColour('soho');
    t.clock.set('2026-11-23T09:00:00Z');
    await reschedule(reference, '2026-11-24T12:00:00+00:00');
    await cancel(reference);
    const events = await t.database.db
      .selectFrom('booking_events')
      .innerJoin('bookings', 'bookings.id', 'booking_events.booking_id')
      .select(['seq', 'from_status', 'to_status', 'actor'])
      .where('bookings.reference', '=', reference)
      .orderBy('seq')
      .execute();
    expect(events.map((e) => `${e.from_status}->${e.to_status} ${e.actor.split(':')[0]}`)).toEqual([
      'null->pending_payment api_key',
      'pending_payment->confirmed payment',
      'confirmed->confirmed api_key',
      'confirmed->cancelled api_key',
    ]);
  });
});
