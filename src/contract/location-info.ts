import { z } from 'zod';
import type { LocationInfo } from '../domain/location-info.ts';
import { Money } from './common.ts';
import { BookingProtectionPolicy, LocationResource } from './location.ts';

export const DayHoursResource = z.object({
  weekday: z.enum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']),
  intervals: z
    .array(
      z.object({ start: z.string().describe('HH:MM, local.'), end: z.string().describe('HH:MM, local.') }),
    )
    .describe('Empty when closed that weekday.'),
});

/**
 * What a caller may ask about a location before booking (an addition to v1, for the MCP tool
 * get_location_info and any booking front end): opening hours, closures, what booking asks of the
 * customer, and the policy.
 */
export const LocationInfoResource = LocationResource.extend({
  today: z.string().describe("The location's local date now (YYYY-MM-DD)."),
  opening_hours: z
    .array(DayHoursResource)
    .describe("Per weekday from Monday: the union of the active staff's working hours there."),
  closures: z
    .array(z.object({ date: z.string(), reason: z.string().nullable() }))
    .describe('Closures from today to 60 days ahead.'),
  deposits: z
    .array(z.object({ service_id: z.string(), service_name: z.string(), deposit: Money }))
    .describe('The services bookable online there that ask for a deposit.'),
  booking_protection_policy: BookingProtectionPolicy,
  policy: z.object({
    slot_interval_minutes: z.int(),
    min_notice_minutes: z.int(),
    max_advance_days: z.int(),
    cancellation_window_hours: z.int(),
    late_cancellation: z.enum(['allow', 'forbid']),
    late_reschedule: z.enum(['allow', 'forbid']),
    pending_confirmation_hold_minutes: z.int(),
    pending_payment_hold_minutes: z.int(),
  }),
}).meta({ id: 'LocationInfo' });

export type LocationInfoResource = z.infer<typeof LocationInfoResource>;

export function presentLocationInfo(info: LocationInfo): LocationInfoResource {
  const { policy } = info;
  return {
    id: info.id,
    slug: info.slug,
    name: info.name,
    timezone: info.timezone,
    ...(info.streetAddress !== null && { street_address: info.streetAddress }),
    ...(info.city !== null && { city: info.city }),
    ...(info.postalCode !== null && { postal_code: info.postalCode }),
    ...(info.country !== null && { country: info.country }),
    phone: info.phone,
    booking_protection_policy: {
      applies: info.protection.applies,
      late_cancellation_fee_percentage: info.protection.lateCancellationFeePercentage,
      no_show_fee_percentage: info.protection.noShowFeePercentage,
    },
    today: info.today,
    opening_hours: info.openingHours,
    closures: info.closures,
    deposits: info.deposits.map((d) => ({
      service_id: d.serviceId,
      service_name: d.serviceName,
      deposit: { amount: d.depositMinor, currency: d.currency },
    })),
    policy: {
      slot_interval_minutes: policy.slotIntervalMinutes,
      min_notice_minutes: policy.minNoticeMinutes,
      max_advance_days: policy.maxAdvanceDays,
      cancellation_window_hours: policy.cancellationWindowHours,
      late_cancellation: policy.lateCancellation,
      late_reschedule: policy.lateReschedule,
      pending_confirmation_hold_minutes: policy.pendingConfirmationHoldMinutes,
      pending_payment_hold_minutes: policy.pendingPaymentHoldMinutes,
    },
  };
}
