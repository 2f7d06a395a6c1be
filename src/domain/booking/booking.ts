import type { BookingStatus } from './state-machine.ts';

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
