import { describe, expect, it } from 'vitest';
import { bookingHold, claimedHold, heldTermsOf, holdNotice } from '../../src/domain/booking/holds.ts';

/**
 * How long a booking is held for its customer and the notice it needs (src/domain/booking/holds.ts,
 * docs/decisions/holds-leave-time-to-finish.md): one decision for the booking made, availability,
 * a claimed waitlist offer and MCP's words.
 */
const policy = {
  minNoticeMinutes: 0,
  pendingConfirmationHoldMinutes: 15,
  pendingPaymentHoldMinutes: 30,
  waitlistOfferMinutes: 60,
};
const none = { protection: false, deposit: false };

describe('bookingHold', () => {
  it('holds nothing a booking with nothing to finish', () => {
    expect(bookingHold(policy, none)).toBeNull();
  });

  it('holds a deposit for pending_payment_hold_minutes, Booking Protection for pending_confirmation_hold_minutes', () => {
    expect(bookingHold(policy, { ...none, deposit: true })).toEqual({ step: 'deposit', minutes: 30 });
    expect(bookingHold(policy, { ...none, protection: true })).toEqual({
      step: 'protection_setup',
      minutes: 15,
    });
    // Under Booking Protection the deposit is one of its steps, held as the card is.
    expect(bookingHold(policy, { protection: true, deposit: true })).toEqual({
      step: 'protection_setup',
      minutes: 15,
    });
  });

  it("holds a public booking's code for pending_confirmation_hold_minutes, unless a deposit is due", () => {
    expect(bookingHold(policy, { ...none, proofFirst: true })).toEqual({
      step: 'contact_verification',
      minutes: 15,
    });
    expect(bookingHold(policy, { ...none, deposit: true, proofFirst: true })).toEqual({
      step: 'deposit',
      minutes: 30,
    });
  });

  it('holds a waitlist offer for waitlist_offer_minutes, then its claim for what it has left', () => {
    expect(bookingHold(policy, { ...none, offer: true })).toEqual({ step: 'waitlist_claim', minutes: 60 });
    expect(claimedHold(policy, { ...none, offer: true })).toBeNull();
    expect(claimedHold(policy, { ...none, deposit: true, offer: true })).toEqual({
      step: 'deposit',
      minutes: 30,
    });
    expect(claimedHold(policy, { protection: true, deposit: true, offer: true })).toEqual({
      step: 'protection_setup',
      minutes: 15,
    });
  });
});

describe('holdNotice', () => {
  it("is the location's notice for a booking confirmed at once, or a move of one", () => {
    expect(holdNotice(policy, none)).toEqual({ minutes: 0, step: null });
    expect(holdNotice({ ...policy, minNoticeMinutes: 60 }, null)).toEqual({ minutes: 60, step: null });
  });

  it('leaves 15 minutes of the hold before the start, or the whole hold when it is shorter', () => {
    expect(holdNotice(policy, { ...none, deposit: true })).toEqual({ minutes: 15, step: 'deposit' });
    expect(holdNotice({ ...policy, pendingPaymentHoldMinutes: 5 }, { ...none, deposit: true })).toEqual({
      minutes: 5,
      step: 'deposit',
    });
    expect(holdNotice(policy, { ...none, protection: true })).toEqual({
      minutes: 15,
      step: 'protection_setup',
    });
  });

  it("names no step where the location's own notice is as long", () => {
    expect(holdNotice({ ...policy, minNoticeMinutes: 15 }, { ...none, deposit: true })).toEqual({
      minutes: 15,
      step: null,
    });
    expect(holdNotice({ ...policy, minNoticeMinutes: 60 }, { ...none, protection: true })).toEqual({
      minutes: 60,
      step: null,
    });
  });

  it('counts each hold an offer passes through: the offer, then its claim', () => {
    const shortOffer = { ...policy, waitlistOfferMinutes: 5 };
    expect(holdNotice(shortOffer, { ...none, offer: true })).toEqual({ minutes: 5, step: 'waitlist_claim' });
    expect(holdNotice(shortOffer, { ...none, deposit: true, offer: true })).toEqual({
      minutes: 15,
      step: 'deposit',
    });
  });
});

describe('heldTermsOf', () => {
  const now = Date.parse('2026-11-23T09:00:00Z');
  const held = {
    status: 'pending_confirmation' as const,
    startsAt: now + 3_600_000,
    holdExpiresAt: now + 600_000,
    protection: {
      applies: true,
      lateCancellationFeePercentage: 50,
      noShowFeePercentage: 100,
      setupStatus: 'pending' as const,
      paymentMethodSaved: false,
      setupCompletedAt: null,
    },
    depositMinor: null,
    pendingRequirements: ['protection_setup'],
  };

  it('are the snapshots a hold was made with, and the code or claim it still waits for', () => {
    expect(heldTermsOf(held, now)).toEqual({
      protection: true,
      deposit: false,
      proofFirst: false,
      offer: false,
    });
    expect(
      heldTermsOf(
        {
          ...held,
          protection: { ...held.protection, applies: false },
          depositMinor: 2000,
          pendingRequirements: ['waitlist_claim', 'deposit'],
        },
        now,
      ),
    ).toEqual({ protection: false, deposit: true, proofFirst: false, offer: true });
  });

  it('are none once it is confirmed, or its hold has lapsed', () => {
    expect(heldTermsOf({ ...held, status: 'confirmed', holdExpiresAt: null }, now)).toBeNull();
    expect(heldTermsOf(held, now + 600_000)).toBeNull();
  });
});
