import { z } from 'zod';
import type { StaffWithServices } from '../domain/catalogue.ts';
import { Uuid } from './common.ts';

export const StaffResource = z
  .object({
    id: Uuid,
    name: z.string(),
    service_ids: z.array(Uuid).describe('Services the staff member delivers at this location.'),
  })
  .meta({ id: 'Staff' });

export type StaffResource = z.infer<typeof StaffResource>;

export function presentStaff(staff: StaffWithServices): StaffResource {
  return { id: staff.id, name: staff.name, service_ids: staff.serviceIds };
}
