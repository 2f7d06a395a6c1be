import { findClientById } from '../../data/client-repository.ts';
import type { Db } from '../../data/database.ts';
import type { Location, OfferedService } from '../../domain/catalogue.ts';
import { AppError } from '../../domain/errors.ts';
import type { TimeOfDay, WaitlistEntry, WaitlistStatus } from '../../domain/waitlist.ts';
import { servicesOfferedAt, staffNamesAt } from '../console-service.ts';
import { phoneAsDialledAt } from '../contact.ts';
import { requireBookedLocation, requireLocation } from '../directory-service.ts';
import { joinWaitlist, listWaitlist } from './entries.ts';

/**
 * The waitlist as the front desk sees it (the console's Waitlist page): a location's entries in joining
 * order with the names behind their ids, and an entry added for a client found by search or given by
 * details. Staff are signed in and trusted as the API is: details typed here find the client on file
 * with that phone or e-mail (registerClient), as the console's booking form does.
 */

/** The most entries one page shows; the rest follow on the next (`after`). */
export const DESK_PAGE_SIZE = 100;

export interface DeskEntry {
  entry: WaitlistEntry;
  client: {
    name: string;
    phone: string | null;
    email: string | null;
    /** false: joined on the public page, a record of its own whose contact nobody has proven. */
    proven: boolean;
  };
}

export interface DeskWaitlist {
  location: Location;
  entries: DeskEntry[];
  /** Where the next page starts, or null when this one is the last. */
  next: { createdAt: number; id: string } | null;
  services: OfferedService[];
  staffNames: Map<string, string>;
}

/**
 * A location's entries (all statuses, or one) in joining order, with the names the desk reads; the
 * location may be one taken out of the catalogue.
 */
export async function waitlistAtDesk(
  db: Db,
  organisationId: string,
  filter: { locationSlug: string; status?: WaitlistStatus | undefined },
  after: { createdAt: number; id: string } | null,
  now: number,
): Promise<DeskWaitlist> {
  // Active or not, as REST's list: the entries of a location taken out of the catalogue are listed.
  const location = await requireBookedLocation(db, organisationId, filter.locationSlug, 'location');
  const page = await listWaitlist(
    db,
    organisationId,
    { locationSlug: location.slug, status: filter.status },
    after,
    DESK_PAGE_SIZE,
    now,
  );
  const entries = await Promise.all(
    page.items.map(async (entry) => {
      const row = await findClientById(db, organisationId, entry.clientId);
      return {
        entry,
        client: {
          name: row ? `${row.first_name} ${row.last_name}` : 'A deleted client',
          phone: row?.phone ?? null,
          email: row?.email ?? null,
          proven: row?.contact_proven === 1,
        },
      };
    }),
  );
  return {
    location,
    entries,
    next: page.next,
    services: await servicesOfferedAt(db, organisationId, location),
    staffNames: await staffNamesAt(db, organisationId, location.id),
  };
}

export interface DeskWaitlistEntry {
  locationSlug: string;
  /** A client found by the desk's search; otherwise `client`'s details. */
  clientId?: string | undefined;
  client?: { firstName: string; lastName: string; phone?: string | undefined; email?: string | undefined };
  serviceIds: string[];
  staffId?: string | undefined;
  fromDate: string;
  toDate: string;
  times: TimeOfDay[];
}

/** Adds an entry from the desk (joinWaitlist's checks and refusals); a phone typed nationally is read as dialled at the location. */
export async function addToWaitlistAtDesk(
  db: Db,
  organisationId: string,
  input: DeskWaitlistEntry,
  now: number,
): Promise<WaitlistEntry> {
  const location = await requireLocation(db, organisationId, input.locationSlug, 'location');
  if (!input.clientId && !input.client) {
    throw new AppError(
      'invalid_request',
      'Choose a client found by the search, or give a new client’s details.',
      'client_id',
    );
  }
  const client = input.clientId
    ? undefined
    : {
        ...input.client!,
        phone: input.client!.phone && phoneAsDialledAt(input.client!.phone, location.country),
      };
  return joinWaitlist(
    db,
    organisationId,
    {
      locationSlug: location.slug,
      serviceIds: input.serviceIds,
      staffId: input.staffId,
      clientId: input.clientId,
      client,
      fromDate: input.fromDate,
      toDate: input.toDate,
      times: input.times,
    },
    now,
    'form',
  );
}
