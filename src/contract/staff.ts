import { z } from 'zod';
import type { StaffWithServices } from '../domain/catalogue.ts';
import { Uuid } from './common.ts';

export const StaffResource = z
  .object({
    id: Uuid,
    name: z.string(),
    aliases: z.array(z.string()).describe('Nicknames callers use, from the catalogue; may be empty.'),
    service_ids: z.array(Uuid).describe('Services the staff member delivers at this location.'),
  })
  .meta({ id: 'Staff' });

export type StaffResource = z.infer<typeof StaffResource>;

export function presentStaff(staff: StaffWithServices): StaffResource {
  return { id: staff.id, name: staff.name, aliases: staff.aliases, service_ids: staff.serviceIds };
}
