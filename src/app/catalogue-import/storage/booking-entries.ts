import type { BookingServicesTable, BookingsTable } from '../../../data/tables.ts';
import { type BookingOutline, offeredAt, outlineBooking } from '../format/booking-outline.ts';
import { firstLocalInstant } from '../format/local-times.ts';
import type { Catalogue, CatalogueBooking } from '../format/schema.ts';
import type { IdentityPlan } from './identities.ts';

/**
 * Existing appointments brought over from another system (design.md section 5). Each is matched to
 * its row by explicit id, else by reference, else by an id derived from its staff member and start,
 * so a re-import finds what the last one wrote. What the last import took from the file is kept in
 * its event's details: a re-import compares the file with that, not with the row, so changes the
 * engine made since (a lapsed hold expired, a cancellation) survive re-importing an unchanged file,
 * and an edited entry re-applies only the fields that were edited.
 */

export const ACTOR = 'import';

/** One file booking as planned: the row it becomes, and that row as stored (when it exists). */
export interface PlannedBooking {
  id: string;
  reference: string;
  stored: StoredBooking | undefined;
}

export interface StoredBooking {
  row: BookingsTable;
  segments: BookingServicesTable[];
  /** The entry as the last import that wrote an event for this booking read it. */
  imported: ImportedEntry | undefined;
}

/** The fields of a file entry a re-import compares, in a fixed shape (the event details' `import`). */
export type ImportedEntry = Required<Omit<CatalogueBooking, 'id' | 'reference'>>;
export type Field = keyof ImportedEntry;

export const FIELDS: readonly Field[] = [
  'location',
  'services',
  'staff',
  'client',
  'starts_at',
  'status',
  'notes',
  'deposit_paid',
  'protection',
];
export const SCHEDULE_FIELDS: readonly Field[] = ['location', 'services', 'staff', 'starts_at'];

export function importedEntry(booking: CatalogueBooking): ImportedEntry {
  return {
    location: booking.location,
    services: booking.services,
    staff: booking.staff,
    client: booking.client,
    starts_at: booking.starts_at,
    status: booking.status,
    notes: booking.notes,
    deposit_paid: booking.deposit_paid,
    protection: {
      setup_status: booking.protection.setup_status,
      payment_method_saved: booking.protection.payment_method_saved,
    },
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function editedFields(entry: ImportedEntry, imported: ImportedEntry | undefined): Field[] {
  return imported === undefined ? [...FIELDS] : FIELDS.filter((f) => !same(entry[f], imported[f]));
}

/** What writing one file booking needs: its entry, its outline, and the ids it points at. */
export interface Resolved {
  entry: ImportedEntry;
  outline: BookingOutline;
  locationId: string;
  staffId: string;
  clientId: string;
  holdMinutes: { pending_payment: number; pending_confirmation: number };
}

export function resolve(catalogue: Catalogue, plan: IdentityPlan, booking: CatalogueBooking): Resolved {
  const index = <T extends { ref: string }>(items: readonly T[], ref: string) =>
    items.findIndex((item) => item.ref === ref);
  const l = index(catalogue.locations, booking.location);
  const location = catalogue.locations[l]!;
  const services = booking.services.map((ref) => {
    const s = index(catalogue.services, ref);
    return offeredAt(catalogue.services[s]!, plan.services[s]!, booking.location);
  });
  const startsAt = firstLocalInstant(booking.starts_at, location.timezone)!;
  return {
    entry: importedEntry(booking),
    outline: outlineBooking(booking, services, location.booking_protection, startsAt),
    locationId: plan.locations[l]!,
    staffId: plan.staff[index(catalogue.staff, booking.staff)]!,
    clientId: plan.clients[index(catalogue.clients, booking.client)]!,
    holdMinutes: {
      pending_payment: location.policy.pending_payment_hold_minutes,
      pending_confirmation: location.policy.pending_confirmation_hold_minutes,
    },
  };
}
