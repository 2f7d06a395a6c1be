import {
  applyLocationOverride,
  type BookingProtectionPolicy,
  type OfferedService,
} from '../../../domain/catalogue.ts';
import type { CatalogueBooking, CatalogueLocation, CatalogueService } from './schema.ts';

/**
 * What a file booking amounts to (its services as offered at its location, back to back, with their
 * prices, deposits and protection), worked out from the file alone: validation checks it, storage
 * writes it.
 */

/** A catalogue service as offered at one of its locations: that location's overrides applied. */
export function offeredAt(service: CatalogueService, id: string, locationRef: string): OfferedService {
  const override = service.overrides[locationRef];
  return applyLocationOverride(
    {
      id,
      name: service.name,
      category: service.category,
      durationMinutes: service.duration_minutes,
      bufferAfterMinutes: service.buffer_after_minutes,
      priceMinor: service.price.amount,
      depositMinor: service.deposit?.amount ?? null,
      onlineBookable: service.online_bookable,
    },
    {
      durationMinutes: override?.duration_minutes ?? null,
      priceMinor: override?.price?.amount ?? null,
      depositOverridden: override?.deposit !== undefined,
      depositMinor: override?.deposit?.amount ?? null,
      onlineBookable: override?.online_bookable ?? null,
    },
  );
}

export type PendingStep = 'deposit' | 'protection_setup';

/** What an imported booking amounts to, worked out from the file alone (instants in epoch ms). */
export interface BookingOutline {
  startsAt: number;
  endsAt: number;
  /** endsAt plus the last service's buffer. */
  blockedUntil: number;
  segments: { service: OfferedService; startsAt: number; endsAt: number }[];
  totalPriceMinor: number;
  /** The services' deposits summed; null when none carries one. */
  depositMinor: number | null;
  protection: BookingProtectionPolicy;
  /** The customer steps a pending_confirmation booking would still wait for. */
  outstanding: PendingStep[];
}

const MINUTE = 60_000;

/** Services back to back from `startsAt` in the order given, priced as offered at the location. */
export function outlineBooking(
  booking: Pick<CatalogueBooking, 'deposit_paid' | 'protection'>,
  services: readonly OfferedService[],
  protection: CatalogueLocation['booking_protection'],
  startsAt: number,
): BookingOutline {
  let start = startsAt;
  const segments = services.map((service) => {
    const segment = { service, startsAt: start, endsAt: start + service.durationMinutes * MINUTE };
    start = segment.endsAt;
    return segment;
  });
  const depositMinor = services.reduce((sum, s) => sum + (s.depositMinor ?? 0), 0) || null;
  const policy: BookingProtectionPolicy = protection.applies
    ? {
        applies: true,
        late_cancellation_fee_percentage: protection.late_cancellation_fee_percentage ?? null,
        no_show_fee_percentage: protection.no_show_fee_percentage ?? null,
      }
    : { applies: false, late_cancellation_fee_percentage: null, no_show_fee_percentage: null };
  const outstanding: PendingStep[] = [];
  if (depositMinor !== null && !booking.deposit_paid) outstanding.push('deposit');
  if (policy.applies && booking.protection.setup_status !== 'succeeded') outstanding.push('protection_setup');
  const last = services[services.length - 1];
  return {
    startsAt,
    endsAt: start,
    blockedUntil: start + (last?.bufferAfterMinutes ?? 0) * MINUTE,
    segments,
    totalPriceMinor: services.reduce((sum, s) => sum + s.priceMinor, 0),
    depositMinor,
    protection: policy,
    outstanding,
  };
}
