import type { OutboxNotice } from '../outbox.ts';
import type { BookingStatus } from './state-machine.ts';

/**
 * The longest a booking may block its staff member: its services back to back plus the last one's
 * buffer. Salons and shops book appointments of hours, never of days; the bound lets every "what
 * overlaps this window" lookup (availability, the booking re-check, the database's overlap guard) scan
 * only the bookings that start within a day before the window instead of a staff member's whole
 * history. The database refuses a longer booking (migration 2026-11-23-0001).
 */
export const MAX_BOOKING_SPAN_MINUTES = 24 * 60;
export const MAX_BOOKING_SPAN_MS = MAX_BOOKING_SPAN_MINUTES * 60_000;
/** The longest booking notes and cancellation reason, in characters (as the database's checks count). */
export const NOTES_MAX_LENGTH = 1000;
export const CANCEL_REASON_MAX_LENGTH = 1000;

/** Minutes a booking of these services blocks its staff member: durations plus the last buffer. */
export function bookingSpanMinutes(
  services: readonly { durationMinutes: number; bufferAfterMinutes: number }[],
): number {
  const last = services[services.length - 1];
  return services.reduce((total, s) => total + s.durationMinutes, 0) + (last?.bufferAfterMinutes ?? 0);
}

export type DepositStatus = 'not_required' | 'pending' | 'paid' | 'refunded' | 'retained';
export type ProtectionSetupStatus = 'pending' | 'failed' | 'succeeded';
export type FeeKind = 'late_cancellation' | 'no_show';
export type FeeStatus = 'charged' | 'waived' | 'deposit_covered' | 'failed';

/** A booking as the service layer and the presenters see it. Instants are epoch ms. */
export interface Booking {
  id: string;
  organisationId: string;
  reference: string;
  status: BookingStatus;
  locationId: string;
  locationSlug: string;
  timezone: string;
  staffId: string;
  clientId: string;
  serviceIds: string[];
  startsAt: number;
  endsAt: number;
  blockedUntil: number;
  currency: string;
  totalPriceMinor: number;
  depositMinor: number | null;
  depositStatus: DepositStatus;
  notes: string | null;
  holdExpiresAt: number | null;
  /** The open checkout session of a pending_payment booking (its payment link), else null. */
  checkoutSessionId: string | null;
  pendingRequirements: string[];
  protection: {
    applies: boolean;
    lateCancellationFeePercentage: number | null;
    noShowFeePercentage: number | null;
    setupStatus: ProtectionSetupStatus | null;
    paymentMethodSaved: boolean;
    setupCompletedAt: number | null;
  };
  fees: Partial<Record<FeeKind, Fee>>;
  cancelledAt: number | null;
  depositRefunded: boolean | null;
  /** The capability of the booking's page (/p/manage/{token}); null when none was issued. */
  pageToken: string | null;
  /** The recurring series this booking is an occurrence of, or null. */
  seriesId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface Fee {
  kind: FeeKind;
  status: FeeStatus | null;
  currency: string;
  feePercentage: number;
  amountMinor: number;
  depositCreditMinor: number;
  chargeAmountMinor: number;
  failureReason: string | null;
  processedAt: number | null;
}

/** A booking just made, with the deposit it needs and where to pay it (both null without a deposit). */
export interface CreatedBooking {
  booking: Booking;
  deposit: { amount: number; currency: string } | null;
  paymentUrl: string | null;
  /** The messages written to the customer with it (channel and address), for the answer to say. */
  notices: OutboxNotice[];
}
