import { z } from 'zod';
import type { ServiceWithStaff } from '../domain/catalogue.ts';
import { Money, Uuid } from './common.ts';

export const ServiceResource = z
  .object({
    id: Uuid,
    name: z.string(),
    aliases: z
      .array(z.string())
      .describe('Everyday names callers use for it ("haircut"), from the catalogue; may be empty.'),
    duration_minutes: z
      .int()
      .describe('May differ from the organisation default through a per-location override.'),
    price: Money,
    deposit: Money.nullable().describe('null when no deposit is needed.'),
    category: z.string().nullable(),
    online_bookable: z.boolean().describe('false means the service can only be booked in person.'),
    staff: z.array(z.object({ id: Uuid, name: z.string() })).describe('Active staff here who deliver it.'),
  })
  .meta({ id: 'Service' });

export type ServiceResource = z.infer<typeof ServiceResource>;

export function presentService(service: ServiceWithStaff, currency: string): ServiceResource {
  return {
    id: service.id,
    name: service.name,
    aliases: service.aliases,
    duration_minutes: service.durationMinutes,
    price: { amount: service.priceMinor, currency },
    deposit: service.depositMinor === null ? null : { amount: service.depositMinor, currency },
    category: service.category,
    online_bookable: service.onlineBookable,
    staff: service.staff,
  };
}
