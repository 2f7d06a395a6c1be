import { describe, expect, it } from 'vitest';
import type { Booking } from '../../src/domain/booking/booking.ts';
import { type ChangeRules, decideChange, pendingFee } from '../../src/domain/booking/change-policy.ts';

const HOUR = 3_600_000;
const START = Date.parse('2026-11-24T10:00:00Z');
const allow: ChangeRules = {
  cancellationWindowHours: 24,
  lateCancellation: 'allow',
  lateReschedule: 'allow',
};
const forbid: ChangeRules = { ...allow, lateCancellation: 'forbid', lateReschedule: 'forbid' };
const onTime = START - 24 * HOUR;
const late = START - 24 * HOUR + 1;

function booking(overrides: Partial<Booking> = {}, protection: Partial<Booking['protection']> = {}): Booking {
  return {
    id: 'b1',
    organisationId: 'o1',
    reference: 'AC-234567',
    status: 'confirmed',
    locationId: 'l1',
    locationSlug: 'soho',
    timezone: 'Europe/London',
    staffId: 's1',
    clientId: 'c1',
    serviceIds: ['cut'],
    startsAt: START,
    endsAt: START + HOUR,
    blockedUntil: START + HOUR,
    currency: 'GBP',
    totalPriceMinor: 4500,
    depositMinor: null,
    depositStatus: 'not_required',
    notes: null,
    holdExpiresAt: null,
    checkoutSessionId: null,
    pageToken: null,
    seriesId: null,
    pendingRequirements: [],
    protection: {
      applies: false,
      lateCancellationFeePercentage: null,
      noShowFeePercentage: null,
      setupStatus: null,
      paymentMethodSaved: false,
      setupCompletedAt: null,
      ...protection,
    },
    fees: {},
    cancelledAt: null,
    depositRefunded: null,
    createdAt: 0,
    updatedAt: 0,
    ...overrides,
  };
}

const paid = { depositMinor: 1000, depositStatus: 'paid' as const };
const protectedAt = (percentage: number | null) => ({
  applies: true,
  lateCancellationFeePercentage: percentage,
  noShowFeePercentage: 100,
});

describe('decideChange: cancel', () => {
  it.each([
    ['on time, no deposit', booking(), onTime, { late: false, depositRefunded: null, depositOutcome: null }],
    [
      'on time, paid deposit',
      booking(paid),
      onTime,
      { late: false, depositRefunded: true, depositOutcome: 'refunded' },
    ],
    [
      'late, paid deposit',
      booking(paid),
      late,
      { late: true, depositRefunded: false, depositOutcome: 'retained' },
    ],
    [
      'late, deposit not yet paid',
      booking({
        depositMinor: 1000,
        depositStatus: 'pending',
        status: 'pending_payment',
        holdExpiresAt: START,
      }),
      late,
      { late: true, depositRefunded: null, depositOutcome: null },
    ],
  ])('%s', (_, subject, now, expected) => {
    expect(decideChange(subject, allow, 'cancel', now)).toEqual({ ...expected, fee: null, refusal: null });
  });

  it('records the late-cancellation fee under protection, credited with the retained deposit', () => {
    expect(decideChange(booking(paid, protectedAt(50)), allow, 'cancel', late).fee).toEqual({
      amountMinor: 2250,
      depositCreditMinor: 1000,
      chargeAmountMinor: 1250,
      currency: 'GBP',
      feePercentage: 50,
    });
    // No deposit paid: nothing to credit.
    expect(decideChange(booking({}, protectedAt(50)), allow, 'cancel', late).fee).toMatchObject({
      depositCreditMinor: 0,
      chargeAmountMinor: 2250,
    });
    // On time, or without a percentage, or without protection: no fee.
    expect(decideChange(booking(paid, protectedAt(50)), allow, 'cancel', onTime).fee).toBeNull();
    expect(decideChange(booking(paid, protectedAt(null)), allow, 'cancel', late).fee).toBeNull();
    expect(decideChange(booking(paid), allow, 'cancel', late).fee).toBeNull();
  });

  it('refuses a late cancellation where forbidden, and any change of a booking not live or started', () => {
    expect(decideChange(booking(), forbid, 'cancel', late).refusal).toEqual({
      reason: 'late_change',
      message: 'Cancellations less than 24 hours before the appointment are not allowed here.',
    });
    expect(decideChange(booking(), forbid, 'cancel', onTime).refusal).toBeNull();
    expect(decideChange(booking({ status: 'cancelled' }), allow, 'cancel', onTime).refusal).toEqual({
      reason: 'not_changeable',
      message: 'This booking cannot be cancelled: the booking is cancelled.',
    });
    expect(decideChange(booking(), allow, 'cancel', START).refusal).toMatchObject({
      reason: 'not_changeable',
      message: 'This booking cannot be cancelled: the appointment has already started.',
    });
    // A lapsed hold is expired, whatever the row says.
    const lapsed = booking({
      status: 'pending_payment',
      depositStatus: 'pending',
      holdExpiresAt: onTime - 1,
    });
    expect(decideChange(lapsed, allow, 'cancel', onTime).refusal?.reason).toBe('not_changeable');
  });
});

describe('decideChange: reschedule', () => {
  it('keeps a paid deposit with the booking and records no fee, late or not', () => {
    for (const now of [onTime, late]) {
      expect(decideChange(booking(paid, protectedAt(50)), allow, 'reschedule', now)).toEqual({
        late: now === late,
        depositRefunded: false,
        depositOutcome: 'carried_over',
        fee: null,
        refusal: null,
      });
    }
    expect(decideChange(booking(), allow, 'reschedule', late)).toMatchObject({
      depositRefunded: null,
      depositOutcome: null,
    });
  });

  it('refuses a late reschedule where forbidden, naming starts_at', () => {
    expect(decideChange(booking(), forbid, 'reschedule', late).refusal).toEqual({
      reason: 'late_change',
      message: 'Changes less than 24 hours before the appointment are not allowed here.',
      param: 'starts_at',
    });
    expect(decideChange(booking({ status: 'completed' }), allow, 'reschedule', onTime).refusal).toMatchObject(
      {
        reason: 'not_changeable',
        message: 'This booking cannot be changed: the booking has already taken place.',
      },
    );
  });

  it('counts the window from the current start, to the millisecond', () => {
    expect(decideChange(booking(), allow, 'reschedule', onTime).late).toBe(false);
    expect(decideChange(booking(), allow, 'reschedule', late).late).toBe(true);
    expect(decideChange(booking(), { ...allow, cancellationWindowHours: 0 }, 'cancel', START - 1).late).toBe(
      false,
    );
  });
});

describe('pendingFee', () => {
  it('is the no-show fee at its own percentage', () => {
    expect(pendingFee(booking(paid, protectedAt(50)), 'no_show', 1000)).toEqual({
      amountMinor: 4500,
      depositCreditMinor: 1000,
      chargeAmountMinor: 3500,
      currency: 'GBP',
      feePercentage: 100,
    });
  });
});
