import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Changer,
  cancelBooking,
  previewCancellation,
  previewReschedule,
  rescheduleBookingWithDisclosure,
} from '../../src/app/booking-changes.ts';
import { payDepositByStaff } from '../../src/app/staff-actions.ts';
import { insertBooking } from '../../src/data/booking-repository.ts';
import { refusalOf } from '../../src/domain/errors.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';

/**
 * A preview (dry run) of a cancellation or a reschedule tells what the change then does: the same
 * late, deposit_refunded, fee and refusal, and it changes nothing. Soho: 24-hour window, late changes
 * allowed; "Strict" (Soho's twin): late changes forbidden; Kings Cross: Booking Protection (50 % late
 * cancellation), whose bookings are inserted directly (v1 refuses to create them). Appointments on
 * Tuesday 24 November 10:00 (Ana) and, protected, Thursday 26 November 10:00 (Bo); the clock is set
 * on time (a day and a minute before) or late (an hour before).
 */
let t: TestApp;
let ids: CatalogueIds;
let changer: Changer;

function catalogue() {
  const c = smallCatalogue();
  c.locations.push({
    ...c.locations[0]!,
    ref: 'strict',
    slug: 'strict',
    name: 'Strict',
    policy: { late_cancellation: 'forbid', late_reschedule: 'forbid' },
  } as never);
  for (const ref of ['cut', 'colour']) c.services.find((s) => s.ref === ref)!.locations.push('strict');
  const ana = c.staff.find((s) => s.ref === 'ana')!;
  ana.working_hours = { ...ana.working_hours, strict: { tue: [['09:00', '17:00']] } } as never;
  return c;
}

beforeEach(async () => {
  t = await startTestApp({ catalogues: [catalogue()], limits: { requestsPerMinute: 100_000 } });
  ids = await catalogueIds(t.database.db);
  changer = { organisationId: ids.organisation, actor: 'test' };
});
afterEach(async () => {
  await t.close();
});

const TUESDAY = '2026-11-24T10:00:00+00:00';
const ON_TIME = '2026-11-23T09:59:00Z';
const LATE = '2026-11-24T09:00:00Z';

type Kind = 'cut' | 'colour unpaid' | 'colour paid' | 'protected' | 'protected with deposit';

/** A booking of the kind, at `slug` (Soho or Strict; protected ones at Kings Cross). */
async function make(kind: Kind, slug = 'soho'): Promise<string> {
  if (kind.startsWith('protected')) return protectedBooking(kind === 'protected with deposit' ? 1500 : null);
  const service = kind === 'cut' ? ids.services.cut : ids.services.colour;
  const response = await postBooking(t, {
    location_slug: slug,
    service_ids: [service],
    client_id: ids.jo,
    starts_at: TUESDAY,
  });
  expect(response.statusCode, response.body).toBe(201);
  const { reference } = response.json().data;
  if (kind === 'colour paid')
    await payDepositByStaff(t.database.db, ids.organisation, reference, t.clock.nowMs());
  return reference;
}

async function protectedBooking(depositMinor: number | null): Promise<string> {
  const startsAt = Date.parse('2026-11-26T10:00:00Z');
  const row = bookingRow(
    {
      organisationId: ids.organisation,
      locationId: ids.locations['kings-cross']!,
      staffId: ids.staff.bo!,
      clientId: ids.jo,
      startsAt,
      endsAt: startsAt + 3_600_000,
      blockedUntil: startsAt + 4_500_000,
    },
    {
      total_price_minor: 4500,
      deposit_minor: depositMinor,
      deposit_status: depositMinor ? 'paid' : 'not_required',
      protection_applies: 1,
      late_cancellation_fee_percentage: 50,
      no_show_fee_percentage: 100,
      protection_setup_status: 'succeeded',
      payment_method_saved: 1,
      created_at: Date.parse(TEST_START),
      updated_at: Date.parse(TEST_START),
    },
  );
  await insertBooking(t.database.db, row, [
    {
      organisation_id: ids.organisation,
      booking_id: row.id,
      position: 0,
      service_id: ids.services.cut!,
      starts_at: startsAt,
      ends_at: startsAt + 3_600_000,
      duration_minutes: 60,
      buffer_after_minutes: 15,
      price_minor: 4500,
      deposit_minor: depositMinor,
    },
  ]);
  return row.reference;
}

/** Everything stored about a booking: what a preview must leave exactly as it was. */
async function stored(reference: string) {
  const db = t.database.db;
  const booking = await db
    .selectFrom('bookings')
    .selectAll()
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();
  const fees = await db.selectFrom('booking_fees').selectAll().where('booking_id', '=', booking.id).execute();
  const events = await db
    .selectFrom('booking_events')
    .selectAll()
    .where('booking_id', '=', booking.id)
    .execute();
  return { booking, fees, events };
}

/** The change's outcome as data: its disclosure, or the refusal it threw. */
async function outcome<T extends { disclosure: unknown }>(change: Promise<T>) {
  try {
    const result = await change;
    return { refusal: null, disclosure: result.disclosure, result };
  } catch (error) {
    const refusal = refusalOf(error);
    if (!refusal) throw error;
    return { refusal, disclosure: undefined, result: undefined };
  }
}

describe('previewCancellation, then cancelBooking', () => {
  it.each<[Kind, string, string, object]>([
    ['cut', 'soho', ON_TIME, { late: false, depositRefunded: null, depositOutcome: null, fee: null }],
    ['cut', 'soho', LATE, { late: true, depositRefunded: null, depositOutcome: null, fee: null }],
    [
      'colour paid',
      'soho',
      ON_TIME,
      { late: false, depositRefunded: true, depositOutcome: 'refunded', fee: null },
    ],
    [
      'colour paid',
      'soho',
      LATE,
      { late: true, depositRefunded: false, depositOutcome: 'retained', fee: null },
    ],
    [
      'colour unpaid',
      'soho',
      '2026-11-23T09:10:00Z',
      { late: false, depositRefunded: null, depositOutcome: null, fee: null },
    ],
    [
      'protected',
      'kings-cross',
      '2026-11-26T09:00:00Z',
      {
        late: true,
        depositRefunded: null,
        depositOutcome: null,
        fee: {
          amountMinor: 2250,
          depositCreditMinor: 0,
          chargeAmountMinor: 2250,
          currency: 'GBP',
          feePercentage: 50,
        },
      },
    ],
    [
      'protected with deposit',
      'kings-cross',
      '2026-11-26T09:00:00Z',
      {
        late: true,
        depositRefunded: false,
        depositOutcome: 'retained',
        fee: {
          amountMinor: 2250,
          depositCreditMinor: 1500,
          chargeAmountMinor: 750,
          currency: 'GBP',
          feePercentage: 50,
        },
      },
    ],
    [
      'protected with deposit',
      'kings-cross',
      ON_TIME,
      {
        late: false,
        depositRefunded: true,
        depositOutcome: 'refunded',
        fee: null,
      },
    ],
  ])('%s at %s, now %s', async (kind, slug, now, expected) => {
    const reference = await make(kind, slug);
    t.clock.set(now);
    const before = await stored(reference);
    const preview = await previewCancellation(t.database.db, changer, reference, t.clock.nowMs());
    expect(preview).toEqual({
      booking: expect.objectContaining({ reference }),
      refusal: null,
      disclosure: expected,
    });
    expect(await stored(reference)).toEqual(before);

    const done = await outcome(cancelBooking(t.database.db, changer, reference, undefined, t.clock.nowMs()));
    expect(done.refusal).toBeNull();
    expect(done.disclosure).toEqual(preview.disclosure);
    expect(done.result!.depositRefunded).toBe(preview.disclosure.depositRefunded === true);
    // The fee the preview announced is the one recorded.
    const { fees } = await stored(reference);
    const fee = preview.disclosure.fee;
    expect(
      fees.map((f) => ({
        amount: f.amount_minor,
        credit: f.deposit_credit_minor,
        charge: f.charge_amount_minor,
      })),
    ).toEqual(
      fee ? [{ amount: fee.amountMinor, credit: fee.depositCreditMinor, charge: fee.chargeAmountMinor }] : [],
    );
  });

  it.each<[string, () => Promise<string>, string]>([
    ['a late cancellation where forbidden', () => make('colour paid', 'strict'), LATE],
    [
      'a booking already cancelled',
      async () => {
        const reference = await make('cut');
        await cancelBooking(t.database.db, changer, reference, undefined, t.clock.nowMs());
        return reference;
      },
      ON_TIME,
    ],
    ['an appointment that has started', () => make('cut'), '2026-11-24T10:00:00Z'],
  ])('reports the refusal the cancellation then answers: %s', async (_, setUp, now) => {
    const reference = await setUp();
    t.clock.set(now);
    const before = await stored(reference);
    const preview = await previewCancellation(t.database.db, changer, reference, t.clock.nowMs());
    expect(preview.refusal).not.toBeNull();
    expect(await stored(reference)).toEqual(before);
    const done = await outcome(cancelBooking(t.database.db, changer, reference, undefined, t.clock.nowMs()));
    expect(done.refusal).toEqual(preview.refusal);
    expect(await stored(reference)).toEqual(before);
  });

  it('throws what it cannot report: an unknown reference is 404', async () => {
    await expect(
      previewCancellation(t.database.db, changer, 'AC-222222', t.clock.nowMs()),
    ).rejects.toMatchObject({
      code: 'not_found',
      param: 'reference',
    });
  });
});

describe('previewReschedule, then rescheduleBookingWithDisclosure', () => {
  it.each<[string, Kind, string, string, { staff?: 'bo' }, string | null]>([
    ['on time to a free slot', 'cut', 'soho', '2026-11-24T13:00:00+00:00', {}, null],
    ['late (allowed), keeping a paid deposit', 'colour paid', 'soho', '2026-11-24T13:00:00+00:00', {}, null],
    ['to another staff member', 'cut', 'soho', '2026-11-25T11:00:00+00:00', { staff: 'bo' }, null],
    ['to a time off the grid', 'cut', 'soho', '2026-11-24T13:05:00+00:00', {}, 'not_on_grid'],
    ['to a day nobody works', 'cut', 'soho', '2026-11-26T13:00:00+00:00', {}, 'closed'],
    [
      'to a staff member who does not work then',
      'cut',
      'soho',
      '2026-11-24T13:00:00+00:00',
      { staff: 'bo' },
      'staff_not_working',
    ],
    ['too soon', 'cut', 'soho', '2026-11-23T10:00:00+00:00', {}, 'too_soon'],
    ['late where forbidden', 'colour paid', 'strict', '2026-11-24T13:00:00+00:00', {}, 'late_change'],
  ])('%s', async (_, kind, slug, to, options, reason) => {
    const reference = await make(kind, slug);
    t.clock.set(kind === 'colour paid' ? LATE : ON_TIME);
    const change = {
      startsAt: Date.parse(to),
      staffId: options.staff && ids.staff[options.staff],
    };
    const before = await stored(reference);
    const preview = await previewReschedule(t.database.db, changer, reference, change, t.clock.nowMs());
    expect(preview.refusal?.reason ?? null).toBe(reason);
    expect(await stored(reference)).toEqual(before);
    const done = await outcome(
      rescheduleBookingWithDisclosure(t.database.db, changer, reference, change, t.clock.nowMs()),
    );
    expect(done.refusal).toEqual(preview.refusal);
    if (preview.refusal) {
      expect(preview.slot).toBeNull();
      expect(await stored(reference)).toEqual(before);
      return;
    }
    expect(done.disclosure).toEqual(preview.disclosure);
    expect(preview.disclosure).toMatchObject({ late: kind === 'colour paid', fee: null });
    expect(preview.disclosure.depositOutcome).toBe(kind === 'colour paid' ? 'carried_over' : null);
    const moved = done.result!.booking;
    expect({ startsAt: moved.startsAt, staffId: moved.staffId }).toEqual({
      startsAt: preview.slot!.startsAt,
      staffId: preview.slot!.staffId,
    });
  });

  it('finds a slot taken after the preview, as the change then does', async () => {
    const reference = await make('cut');
    const change = { startsAt: Date.parse('2026-11-24T14:00:00+00:00') };
    const preview = await previewReschedule(t.database.db, changer, reference, change, t.clock.nowMs());
    expect(preview.slot).not.toBeNull();
    const other = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-24T14:00:00+00:00',
    });
    expect(other.statusCode).toBe(201);
    const again = await previewReschedule(t.database.db, changer, reference, change, t.clock.nowMs());
    expect(again.refusal).toMatchObject({ reason: 'slot_unavailable', param: 'starts_at' });
  });
});

describe('through REST: dry_run on POST /bookings/{reference}/cancel and PATCH /bookings/{reference}', () => {
  const cancel = (reference: string, body: Record<string, unknown>) =>
    t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: body });
  const patch = (reference: string, body: Record<string, unknown>) =>
    t.request({ method: 'PATCH', url: `/v1/bookings/${reference}`, payload: body });

  it('tells a late cancellation of a protected booking with a paid deposit, then does the same', async () => {
    const reference = await make('protected with deposit');
    t.clock.set('2026-11-26T09:00:00Z');
    const before = await stored(reference);
    const dry = await cancel(reference, { dry_run: true });
    expect(dry.statusCode, dry.body).toBe(200);
    // 50 % of 45 pounds is 22.50, of which the kept 15-pound deposit covers 15: 7.50 to the card.
    const change = { late: true, deposit_refunded: false, fee: { amount: 750, currency: 'GBP' } };
    expect(dry.json().data).toEqual({
      reference,
      status: 'cancelled',
      cancelled_at: '2026-11-26T09:00:00Z',
      deposit_refunded: false,
      change: { dry_run: true, ...change },
      following: [],
    });
    expect(await stored(reference)).toEqual(before);
    const done = await cancel(reference, { reason: 'ill' });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().data.change).toEqual({ dry_run: false, ...change });
    const fee = (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data
      .late_cancellation_fee;
    expect(fee).toMatchObject({ amount_minor: 2250, deposit_credit_minor: 1500, charge_amount_minor: 750 });
  });

  it('answers a dry run the change would refuse with the same 409, and changes nothing', async () => {
    const reference = await make('cut', 'strict');
    t.clock.set(LATE);
    const before = await stored(reference);
    const dry = await cancel(reference, { dry_run: true });
    expect(dry.statusCode).toBe(409);
    expect(dry.json().error).toMatchObject({ code: 'conflict', reason: 'late_change' });
    const moved = await patch(reference, { starts_at: '2026-11-24T14:00:00+00:00', dry_run: true });
    expect(moved.statusCode).toBe(409);
    expect(moved.json().error).toMatchObject({ code: 'conflict', reason: 'late_change' });
    expect(await stored(reference)).toEqual(before);
  });

  it('shows the booking as the move would make it, with the deposit staying with it, and moves nothing', async () => {
    const reference = await make('colour paid');
    t.clock.set(LATE);
    const before = await stored(reference);
    const dry = await patch(reference, { starts_at: '2026-11-24T14:00:00+00:00', dry_run: true });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json().data).toMatchObject({
      reference,
      status: 'confirmed',
      starts_at: '2026-11-24T14:00:00+00:00',
      deposit: { amount: 2000, currency: 'GBP' },
      deposit_status: 'paid',
      change: { dry_run: true, late: true, deposit_refunded: false, fee: null },
    });
    expect(await stored(reference)).toEqual(before);
    const read = (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data;
    expect(read.starts_at).toBe(TUESDAY);
  });
});
