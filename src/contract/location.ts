import { z } from 'zod';
import type { Location } from '../domain/catalogue.ts';
import { Uuid } from './common.ts';

export const BookingProtectionPolicy = z
  .object({
    applies: z.boolean().describe('Whether Booking Protection is enabled at the location.'),
    late_cancellation_fee_percentage: z.int().nullable(),
    no_show_fee_percentage: z.int().nullable(),
  })
  .meta({ id: 'BookingProtectionPolicy' });

export const LocationResource = z
  .object({
    id: Uuid,
    slug: z.string().describe('URL-safe identifier.'),
    name: z.string(),
    timezone: z.string().describe('IANA timezone; availability slots are expressed in it.'),
    street_address: z.string().optional(),
    city: z.string().optional(),
    postal_code: z.string().optional(),
    country: z.string().length(2).optional().describe('ISO 3166-1 alpha-2.'),
    phone: z.string().nullable().describe('Customer-facing contact number (E.164).'),
    booking_protection_policy: BookingProtectionPolicy,
  })
  .meta({ id: 'Location' });

export type LocationResource = z.infer<typeof LocationResource>;

/** Optional text fields are left out rather than sent as null, as the contract types them as strings. */
export function presentLocation(location: Location): LocationResource {
  return {
    id: location.id,
    slug: location.slug,
    name: location.name,
    timezone: location.timezone,
    ...(location.streetAddress !== null && { street_address: location.streetAddress }),
    ...(location.city !== null && { city: location.city }),
    ...(location.postalCode !== null && { postal_code: location.postalCode }),
    ...(location.country !== null && { country: location.country }),
    phone: location.phone,
    booking_protection_policy: location.protection,
  };
}
