import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  chargeFee,
  checkOut,
  complete,
  markNoShow,
  organisationsWithReference,
  payDepositByStaff,
  waiveFee,
} from '../../src/app/staff-actions.ts';
import { insertBooking } from '../../src/data/booking-repository.ts';
import { type CatalogueIds, catalogueIds, getBooking, postBooking } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';

/**
 * Staff-console actions (design.md sections 4 and 6) on the small catalogue: Ana works Mon/Tue at Soho
 * (no protection); Kings Cross has Booking Protection (late cancellation 50 %, no-show 100 %), so its
 * bookings are inserted directly (v1 refuses to create them). The clock starts Monday 2026-11-23 09:00Z
 * and is put back after every test; every test uses slots of its own.
 */
let t: TestApp;
let ids: CatalogueIds;
let org: string;
beforeAll(async () => {
  t = await startTestApp({ limits: { requestsPerMinute: 100_000 } });
  ids = await catalogueIds(t.database.db);
  org = ids.organisation;
});
afterEach(() => t.clock.set(TEST_START));
afterAll(async () => {
  await t.close();
});

const now = () => t.clock.nowMs();
const conflict = (message: RegExp) =>
  expect.objectContaining({ code: 'conflict', message: expect.stringMatching(message) });

async function bookCut(startsAt: string): Promise<string> {
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services.cut],
    staff_id: ids.staff.ana,
    client_id: ids.jo,
    starts_at: startsAt,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.reference;
}

async function events(reference: string) {
  return t.database.db
    .selectFrom('booking_events')
    .innerJoin('bookings', 'bookings.id', 'booking_events.booking_id')
    .select(['from_status', 'to_status', 'actor', 'occurred_at', 'details'])
    .where('bookings.reference', '=', reference)
    .orderBy('seq')
    .execute();
}

async function storedBooking(reference: string) {
  return t.database.db
    .selectFrom('bookings')
    .selectAll()
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();
}

async function shown(reference: string) {
  const response = await getBooking(t, reference);
  expect(response.statusCode).toBe(200);
  return response.json().data;
}

let nextHour = 9;
/**
 * A confirmed cut (£45, 60 min) with Bo at Kings Cross on Thursday 2026-11-26, with the location's
 * protection snapshot (50 % / 100 %), as the hosted booking page would have created it.
 */
async function protectedBooking(options: {
  depositMinor?: number;
  cardSaved: boolean;
}): Promise<{ reference: string; startsAt: number }> {
  const startsAt = Date.parse(`2026-11-26T${String(nextHour++).padStart(2, '0')}:00:00Z`);
  const deposit = options.depositMinor ?? null;
  const row = bookingRow(
    {
      organisationId: org,
      locationId: ids.locations['kings-cross']!,
      staffId: ids.staff.bo!,
      clientId: ids.jo,
      startsAt,
      endsAt: startsAt + 3_600_000,
      blockedUntil: startsAt + 3_600_000 + 15 * 60_000,
    },
    {
      total_price_minor: 4500,
      deposit_minor: deposit,
      deposit_status: deposit ? 'paid' : 'not_required',
      protection_applies: 1,
      late_cancellation_fee_percentage: 50,
      no_show_fee_percentage: 100,
      protection_setup_status: 'succeeded',
      payment_method_saved: options.cardSaved ? 1 : 0,
      protection_setup_completed_at: Date.parse(TEST_START),
      source: 'staff',
      created_at: Date.parse(TEST_START),
      updated_at: Date.parse(TEST_START),
    },
  );
  await insertBooking(t.database.db, row, [
    {
      organisation_id: org,
      booking_id: row.id,
      position: 0,
      service_id: ids.services.cut!,
      starts_at: startsAt,
      ends_at: startsAt + 3_600_000,
      duration_minutes: 60,
      buffer_after_minutes: 15,
      price_minor: 4500,
      deposit_minor: deposit,
    },
  ]);
  return { reference: row.reference, startsAt };
}

async function cancelLate(reference: string, startsAt: number) {
  t.clock.set(new Date(startsAt - 2 * 3_600_000).toISOString());
  const response = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: {} });
  expect(response.statusCode, response.body).toBe(200);
  expect(response.json().data.deposit_refunded).toBe(false);
}

describe('check-out, complete and no-show', () => {
  it('refuses before the start, then moves confirmed -> needs_checkout -> completed, logged as staff', async () => {
    const reference = await bookCut('2026-11-24T09:00:00+00:00');
    for (const action of [checkOut, complete, markNoShow]) {
      await expect(action(t.deps.db, org, reference, now())).rejects.toEqual(conflict(/not started yet/));
    }
    t.clock.set('2026-11-24T09:00:00Z');
    const checkedOut = await checkOut(t.deps.db, org, reference.toLowerCase(), now());
    expect(checkedOut).toMatchObject({ from: 'confirmed', to: 'needs_checkout' });
    expect(checkedOut.booking.status).toBe('needs_checkout');
    await expect(checkOut(t.deps.db, org, reference, now())).rejects.toEqual(
      conflict(/has already taken place and awaits payment at the desk/),
    );
    await expect(markNoShow(t.deps.db, org, reference, now())).rejects.toEqual(
      conflict(/has already taken place and awaits payment at the desk/),
    );

    t.clock.advance({ minutes: 50 });
    const completed = await complete(t.deps.db, org, reference, now());
    expect(completed).toMatchObject({ from: 'needs_checkout', to: 'completed' });
    await expect(complete(t.deps.db, org, reference, now())).rejects.toEqual(
      conflict(/has already taken place\./),
    );

    const data = await shown(reference);
    expect(data).toMatchObject({
      status: 'completed',
      updated_at: '2026-11-24T09:50:00Z',
      no_show_fee: null,
    });
    expect(await events(reference)).toEqual([
      expect.objectContaining({ from_status: null, to_status: 'confirmed' }),
      {
        from_status: 'confirmed',
        to_status: 'needs_checkout',
        actor: 'staff',
        occurred_at: Date.parse('2026-11-24T09:00:00Z'),
        details: null,
      },
      {
        from_status: 'needs_checkout',
        to_status: 'completed',
        actor: 'staff',
        occurred_at: Date.parse('2026-11-24T09:50:00Z'),
        details: null,
      },
    ]);
  });

  it('completes or marks a no-show straight from confirmed; neither undoes the other', async () => {
    const done = await bookCut('2026-11-24T10:00:00+00:00');
    const absent = await bookCut('2026-11-24T11:00:00+00:00');
    t.clock.set('2026-11-24T11:05:00Z');
    expect(await complete(t.deps.db, org, done, now())).toMatchObject({ from: 'confirmed', to: 'completed' });
    const noShow = await markNoShow(t.deps.db, org, absent, now());
    expect(noShow).toMatchObject({ from: 'confirmed', to: 'no_show' });
    // Without protection nothing is owed.
    expect(noShow.booking.fees).toEqual({});
    expect(await shown(absent)).toMatchObject({ status: 'no_show', no_show_fee: null });
    await expect(markNoShow(t.deps.db, org, done, now())).rejects.toEqual(
      conflict(/has already taken place\./),
    );
    await expect(complete(t.deps.db, org, absent, now())).rejects.toEqual(
      conflict(/was missed \(marked as a no-show\)/),
    );
    await expect(checkOut(t.deps.db, org, absent, now())).rejects.toEqual(
      conflict(/was missed \(marked as a no-show\)/),
    );
    expect((await events(absent)).at(-1)).toMatchObject({
      from_status: 'confirmed',
      to_status: 'no_show',
      actor: 'staff',
    });
  });

  it('refuses a cancelled booking and an unknown reference', async () => {
    const reference = await bookCut('2026-11-24T15:00:00+00:00');
    const cancel = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel` });
    expect(cancel.statusCode).toBe(200);
    t.clock.set('2026-11-24T16:00:00Z');
    await expect(complete(t.deps.db, org, reference, now())).rejects.toEqual(conflict(/is cancelled/));
    await expect(complete(t.deps.db, org, 'AC-ZZZZZZ', now())).rejects.toMatchObject({ code: 'not_found' });
    expect(await organisationsWithReference(t.deps.db, reference.toLowerCase())).toEqual([
      { id: org, slug: 'acme-hair', reference },
    ]);
    expect(await organisationsWithReference(t.deps.db, 'AC-ZZZZZZ')).toEqual([]);
  });
});

describe('pay-deposit', () => {
  const colour = (startsAt: string) =>
    postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.colour],
      client_id: ids.jo,
      starts_at: startsAt,
    });

  it('confirms a pending_payment booking, marks the deposit and its checkout paid', async () => {
    const created = await colour('2026-11-24T12:00:00+00:00');
    expect(created.json().data.status).toBe('pending_payment');
    const reference = created.json().data.reference;
    t.clock.advance({ minutes: 5 });
    const paid = await payDepositByStaff(t.deps.db, org, reference, now());
    expect(paid).toMatchObject({ from: 'pending_payment', to: 'confirmed' });
    expect(await storedBooking(reference)).toMatchObject({
      status: 'confirmed',
      deposit_status: 'paid',
      hold_expires_at: null,
      updated_at: now(),
    });
    const sessions = await t.database.db
      .selectFrom('checkout_sessions')
      .select(['status', 'completed_at'])
      .where('booking_id', '=', paid.booking.id)
      .execute();
    expect(sessions).toEqual([{ status: 'paid', completed_at: now() }]);
    expect((await events(reference)).at(-1)).toMatchObject({
      from_status: 'pending_payment',
      to_status: 'confirmed',
      actor: 'staff',
    });
    await expect(payDepositByStaff(t.deps.db, org, reference, now())).rejects.toEqual(
      conflict(/is confirmed/),
    );
    // Paid, the booking now holds its slot after the 30-minute hold would have lapsed.
    t.clock.advance({ hours: 1 });
    expect((await shown(reference)).status).toBe('confirmed');
  });

  it('refuses once the hold has lapsed, and for a booking that owes no deposit', async () => {
    const created = await colour('2026-11-24T14:00:00+00:00');
    const reference = created.json().data.reference;
    t.clock.advance({ minutes: 31 });
    await expect(payDepositByStaff(t.deps.db, org, reference, now())).rejects.toEqual(
      conflict(/has lapsed \(its hold expired\)/),
    );
    const plain = await bookCut('2026-11-23T16:00:00+00:00');
    await expect(payDepositByStaff(t.deps.db, org, plain, now())).rejects.toEqual(conflict(/is confirmed/));
  });
});

describe('Booking Protection fees', () => {
  const fees = (reference: string) =>
    t.database.db
      .selectFrom('booking_fees')
      .innerJoin('bookings', 'bookings.id', 'booking_fees.booking_id')
      .select([
        'booking_fees.kind',
        'booking_fees.status',
        'booking_fees.amount_minor',
        'booking_fees.deposit_credit_minor',
        'booking_fees.charge_amount_minor',
        'booking_fees.failure_reason',
        'booking_fees.processed_at',
      ])
      .where('bookings.reference', '=', reference)
      .execute();

  it.each([
    {
      case: 'card, no deposit',
      cardSaved: true,
      deposit: undefined,
      credit: 0,
      charge: 2250,
      status: 'charged',
    },
    {
      case: 'card, £20 deposit',
      cardSaved: true,
      deposit: 2000,
      credit: 2000,
      charge: 250,
      status: 'charged',
    },
    {
      case: 'no card, £20 deposit',
      cardSaved: false,
      deposit: 2000,
      credit: 2000,
      charge: 250,
      status: 'failed',
    },
    {
      case: 'no card, £30 deposit',
      cardSaved: false,
      deposit: 3000,
      credit: 2250,
      charge: 0,
      status: 'deposit_covered',
    },
  ] as const)('charges a late-cancellation fee: $case -> $status', async (c) => {
    const { reference, startsAt } = await protectedBooking({
      cardSaved: c.cardSaved,
      depositMinor: c.deposit,
    });
    await cancelLate(reference, startsAt);
    const figures = {
      currency: 'GBP',
      fee_percentage: 50,
      amount_minor: 2250,
      deposit_credit_minor: c.credit,
      charge_amount_minor: c.charge,
      payment_method_saved: c.cardSaved,
    };
    const pending = await shown(reference);
    expect(pending.late_cancellation_fee).toEqual({
      ...figures,
      status: null,
      failure_reason: null,
      processed_at: null,
    });
    expect(pending.booking_protection.late_cancellation_fee).toBeNull();

    t.clock.advance({ minutes: 30 });
    const processedAt = t.clock.now().toUTC().toISO({ suppressMilliseconds: true });
    const failureReason = c.status === 'failed' ? 'no payment method saved' : null;
    const result = await chargeFee(t.deps.db, org, reference, now());
    expect(result.fee).toMatchObject({
      kind: 'late_cancellation',
      status: c.status,
      failureReason,
      processedAt: now(),
    });

    const data = await shown(reference);
    expect(data.status).toBe('cancelled');
    expect(data.late_cancellation_fee).toEqual({
      ...figures,
      status: c.status,
      failure_reason: failureReason,
      processed_at: processedAt,
    });
    expect(data.booking_protection.late_cancellation_fee).toEqual({
      status: c.status,
      amount_minor: 2250,
      charge_amount_minor: c.charge,
      deposit_credit_minor: c.credit,
      currency: 'GBP',
      processed_at: processedAt,
    });
    expect(data.booking_protection.no_show_fee).toBeNull();
    expect((await events(reference)).at(-1)).toEqual({
      from_status: 'cancelled',
      to_status: 'cancelled',
      actor: 'staff',
      occurred_at: now(),
      details: JSON.stringify({ fee: 'late_cancellation', outcome: c.status, charge_amount_minor: c.charge }),
    });
    // Processed once: neither charged again nor waived afterwards.
    await expect(chargeFee(t.deps.db, org, reference, now())).rejects.toEqual(conflict(/already processed/));
    await expect(waiveFee(t.deps.db, org, reference, now())).rejects.toEqual(conflict(/already processed/));
  });

  it('shows a fee the location does not charge as a fee object of nothing, not as null (no protection)', async () => {
    const { reference, startsAt } = await protectedBooking({ cardSaved: true });
    await t.database.db
      .updateTable('bookings')
      .set({ late_cancellation_fee_percentage: null })
      .where('reference', '=', reference)
      .execute();
    const data = await shown(reference);
    expect(data.late_cancellation_fee).toEqual({
      status: null,
      currency: 'GBP',
      fee_percentage: null,
      amount_minor: 0,
      deposit_credit_minor: 0,
      charge_amount_minor: 0,
      payment_method_saved: true,
      failure_reason: null,
      processed_at: null,
    });
    expect(data.no_show_fee).toMatchObject({ fee_percentage: 100, amount_minor: 4500 });
    // Cancelled late, it has nothing to charge either.
    await cancelLate(reference, startsAt);
    expect((await shown(reference)).late_cancellation_fee).toMatchObject({
      fee_percentage: null,
      charge_amount_minor: 0,
    });
  });

  it('waives a late-cancellation fee', async () => {
    const { reference, startsAt } = await protectedBooking({ cardSaved: true, depositMinor: 2000 });
    await cancelLate(reference, startsAt);
    const result = await waiveFee(t.deps.db, org, reference, now(), 'late_cancellation');
    expect(result.fee).toMatchObject({ status: 'waived', chargeAmountMinor: 250, failureReason: null });
    const data = await shown(reference);
    expect(data.late_cancellation_fee).toMatchObject({ status: 'waived', charge_amount_minor: 250 });
    expect(data.booking_protection.late_cancellation_fee).toMatchObject({
      status: 'waived',
      deposit_credit_minor: 2000,
    });
    expect(await storedBooking(reference)).toMatchObject({ deposit_status: 'retained', deposit_refunded: 0 });
    await expect(chargeFee(t.deps.db, org, reference, now())).rejects.toEqual(
      conflict(/already processed \(waived\)/),
    );
  });

  it('records the no-show fee credited with the retained deposit, then charges it', async () => {
    const { reference, startsAt } = await protectedBooking({ cardSaved: true, depositMinor: 2000 });
    t.clock.set(new Date(startsAt + 10 * 60_000).toISOString());
    const result = await markNoShow(t.deps.db, org, reference, now());
    expect(result).toMatchObject({ from: 'confirmed', to: 'no_show' });
    expect(await storedBooking(reference)).toMatchObject({ status: 'no_show', deposit_status: 'retained' });
    expect(await fees(reference)).toEqual([
      {
        kind: 'no_show',
        status: null,
        amount_minor: 4500,
        deposit_credit_minor: 2000,
        charge_amount_minor: 2500,
        failure_reason: null,
        processed_at: null,
      },
    ]);
    const pending = await shown(reference);
    expect(pending.no_show_fee).toMatchObject({
      status: null,
      amount_minor: 4500,
      deposit_credit_minor: 2000,
    });
    expect(pending.booking_protection.no_show_fee).toBeNull();
    // A no-show owes no late-cancellation fee.
    await expect(chargeFee(t.deps.db, org, reference, now(), 'late_cancellation')).rejects.toEqual(
      conflict(/no late-cancellation fee/),
    );

    const charged = await chargeFee(t.deps.db, org, reference, now());
    expect(charged.fee).toMatchObject({ kind: 'no_show', status: 'charged', chargeAmountMinor: 2500 });
    const data = await shown(reference);
    expect(data.no_show_fee).toMatchObject({
      status: 'charged',
      charge_amount_minor: 2500,
      processed_at: expect.any(String),
    });
    expect(data.booking_protection.no_show_fee).toMatchObject({ status: 'charged', amount_minor: 4500 });
    expect(data.booking_protection.no_show_fee.processed_at).toBe(data.no_show_fee.processed_at);
  });

  it('waives a no-show fee that no saved card could pay', async () => {
    const { reference, startsAt } = await protectedBooking({ cardSaved: false });
    t.clock.set(new Date(startsAt).toISOString());
    await markNoShow(t.deps.db, org, reference, now());
    const waived = await waiveFee(t.deps.db, org, reference, now());
    expect(waived.fee).toMatchObject({
      kind: 'no_show',
      status: 'waived',
      depositCreditMinor: 0,
      chargeAmountMinor: 4500,
    });
    expect((await shown(reference)).booking_protection.no_show_fee).toMatchObject({ status: 'waived' });
  });

  it('refuses when there is no pending fee', async () => {
    // On time: the deposit is refunded and nothing is owed.
    const early = await protectedBooking({ cardSaved: true, depositMinor: 2000 });
    const cancel = await t.request({ method: 'POST', url: `/v1/bookings/${early.reference}/cancel` });
    expect(cancel.json().data.deposit_refunded).toBe(true);
    await expect(chargeFee(t.deps.db, org, early.reference, now())).rejects.toEqual(
      conflict(/no late-cancellation fee/),
    );
    // Confirmed or completed: no fee of either kind.
    const live = await protectedBooking({ cardSaved: true });
    await expect(chargeFee(t.deps.db, org, live.reference, now())).rejects.toEqual(
      conflict(/no fee to process/),
    );
    await expect(waiveFee(t.deps.db, org, live.reference, now(), 'no_show')).rejects.toEqual(
      conflict(/no no-show fee/),
    );
    t.clock.set(new Date(live.startsAt).toISOString());
    await complete(t.deps.db, org, live.reference, now());
    await expect(chargeFee(t.deps.db, org, live.reference, now())).rejects.toEqual(
      conflict(/no fee to process: it has already taken place\./),
    );
    // Without protection a late cancellation records nothing either.
    t.clock.set(TEST_START);
    const plain = await bookCut('2026-11-23T15:00:00+00:00');
    t.clock.set('2026-11-23T14:00:00Z');
    await t.request({ method: 'POST', url: `/v1/bookings/${plain}/cancel` });
    await expect(waiveFee(t.deps.db, org, plain, now())).rejects.toEqual(
      conflict(/no late-cancellation fee/),
    );
  });
});
