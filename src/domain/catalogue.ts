/**
 * The shop's catalogue as the domain sees it: plain values, no storage details.
 */
export interface Money {
  amount: number;
  currency: string;
}

export interface BookingProtectionPolicy {
  applies: boolean;
  late_cancellation_fee_percentage: number | null;
  no_show_fee_percentage: number | null;
}

export interface LocationPolicy {
  slotIntervalMinutes: number;
  minNoticeMinutes: number;
  maxAdvanceDays: number;
  cancellationWindowHours: number;
  lateCancellation: 'allow' | 'forbid';
  lateReschedule: 'allow' | 'forbid';
  pendingConfirmationHoldMinutes: number;
  pendingPaymentHoldMinutes: number;
  /** The reminder goes this many hours before the start; 0: none. */
  reminderHoursBefore: number;
  /** How long a freed time is held for the waitlist entry it is offered to. */
  waitlistOfferMinutes: number;
}

export interface Location {
  id: string;
  organisationId: string;
  slug: string;
  name: string;
  timezone: string;
  streetAddress: string | null;
  city: string | null;
  postalCode: string | null;
  country: string | null;
  phone: string | null;
  active: boolean;
  policy: LocationPolicy;
  protection: BookingProtectionPolicy;
}

/** A service's organisation-wide defaults. */
export interface ServiceDefaults {
  id: string;
  name: string;
  category: string | null;
  durationMinutes: number;
  bufferAfterMinutes: number;
  priceMinor: number;
  depositMinor: number | null;
  onlineBookable: boolean;
}

/** A location's overrides of a service; null fields inherit the default. */
export interface ServiceOverride {
  durationMinutes: number | null;
  priceMinor: number | null;
  /** True when the override sets the deposit, so that "no deposit here" differs from "inherit". */
  depositOverridden: boolean;
  depositMinor: number | null;
  onlineBookable: boolean | null;
}

/** A service as offered at one location: the defaults with that location's overrides applied. */
export type OfferedService = ServiceDefaults;

export function applyLocationOverride(service: ServiceDefaults, override: ServiceOverride): OfferedService {
  return {
    ...service,
    durationMinutes: override.durationMinutes ?? service.durationMinutes,
    priceMinor: override.priceMinor ?? service.priceMinor,
    depositMinor: override.depositOverridden ? override.depositMinor : service.depositMinor,
    onlineBookable: override.onlineBookable ?? service.onlineBookable,
  };
}

export interface StaffRef {
  id: string;
  name: string;
}

/**
 * A service as listed at a location: as offered there, with the active staff there who deliver it
 * and the everyday names the catalogue gives it ("haircut").
 */
export type ServiceWithStaff = OfferedService & { staff: StaffRef[]; aliases: string[] };

/** A staff member as listed at a location, with the services they deliver there and their nicknames. */
export type StaffWithServices = StaffRef & { serviceIds: string[]; aliases: string[] };

/** The position of the last item of a page in a listing sorted by name, then id. */
export interface NameKey {
  name: string;
  id: string;
}

export interface Page<T> {
  items: T[];
  /** Where the next page starts, or null on the last page. */
  next: NameKey | null;
}

export function isNameKey(value: unknown): value is NameKey {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as NameKey).name === 'string' &&
    typeof (value as NameKey).id === 'string'
  );
}
