import { eligibleStaff } from '../../data/availability-repository.ts';
import type { Db } from '../../data/database.ts';
import { activeStaffAt } from '../../data/staff-repository.ts';
import {
  endWaitlistEntry,
  findWaitlistEntry,
  insertWaitlistEntry,
  offerOfBooking,
  offersOfEntry,
  requestWaitlistRescan,
  waitlistEntriesPage,
} from '../../data/waitlist-repository.ts';
import { bookingTurn, takeTurn, waitlistTurn } from '../../data/write-locks.ts';
import { writeTransaction } from '../../data/write-transaction.ts';
import type { Location } from '../../domain/catalogue.ts';
import { AppError } from '../../domain/errors.ts';
import { localDateAt } from '../../domain/time-format.ts';
import {
  datesRefusal,
  sameSet,
  type TimeOfDay,
  type WaitlistEntry,
  type WaitlistStatus,
  wantsOverRefusal,
} from '../../domain/waitlist.ts';
import { requireBookableServices } from '../availability-service.ts';
import { getBooking } from '../booking-service.ts';
import { findOrRegisterClient, getClient, type NewClient, newClientDetails } from '../client-service.ts';
import { phoneAsDialledAt } from '../contact.ts';
import { requireBookedLocation, requireLocation } from '../directory-service.ts';
import { canBeMessaged, textedCountriesInWords } from '../reachable-contacts.ts';
import { textedCountriesOf } from '../texted-countries.ts';
import { timeOrderedId } from '../time-ordered-id.ts';
import { leaveOnceOfferEnded, withdrawUnclaimedOffer } from './claims.ts';
import { entryAsItReads, entryOfRow } from './entry-view.ts';

/** Joining, reading and leaving the waitlist (design.md 9.4), for REST, MCP, the pages and the console. */

export interface NewWaitlistEntry {
  locationSlug: string;
  serviceIds: string[];
  staffId?: string | undefined;
  /** One of the two: a client on file, or a new one registered (or found by contact) first. */
  clientId?: string | undefined;
  client?: NewClient | undefined;
  fromDate: string;
  toDate: string;
  times?: readonly TimeOfDay[] | undefined;
}

/** A new client's national number read in the country of the location they wait at, as dialled there. */
function dialledAt(client: NewClient, location: Location): NewClient {
  return client.phone ? { ...client, phone: phoneAsDialledAt(client.phone, location.country) } : client;
}

/**
 * Adds a client to a location's waitlist: the services must be bookable online there, the staff member
 * (if named) must do them all, the dates must not be past nor span more than MAX_WAIT_DAYS, nor end
 * today with every part of the day asked for over (wantsOverRefusal). A client
 * already waiting there for the same services is told so (409 conflict naming the entry). A time that
 * suits them and is free now is offered at once, by the worker.
 */
export async function joinWaitlist(
  db: Db,
  organisationId: string,
  input: NewWaitlistEntry,
  now: number,
  /** Who names the fields of a refusal: the API's body (`client`), or the console's form (`email`). */
  fields: 'api' | 'form' = 'api',
): Promise<WaitlistEntry> {
  const checked = await checkWaitlistWants(db, organisationId, input, now);
  const { clientId, client } = input;
  if (clientId) {
    const known = await getClient(db, organisationId, clientId.toLowerCase());
    await requireMessageable(db, organisationId, known, { param: 'client_id' });
    return writeTransaction(db, (trx) => insertCheckedEntry(trx, checked, known.id, now));
  }
  if (!client) throw new AppError('invalid_request', 'Give client_id or client.', 'client_id');
  const details = newClientDetails(dialledAt(client, checked.location));
  // A new client is registered only with the entry: a refused one leaves no client behind.
  return writeTransaction(db, async (trx) => {
    const found = await findOrRegisterClient(trx, organisationId, details, client, now);
    // A client on file found by the phone keeps its contacts (an e-mail given now is not added):
    // asking for one would go round in circles, so it is named instead.
    const refusal = found.created
      ? NEW_CLIENT_REFUSAL[fields]
      : { param: fields === 'api' ? 'client' : 'phone', onFile: found.client.id };
    await requireMessageable(trx, organisationId, found.client, refusal);
    return insertCheckedEntry(trx, checked, found.client.id, now);
  });
}

/** What a refusal of a new client no offer could reach names, and asks for, in the API and on the form. */
const NEW_CLIENT_REFUSAL = {
  api: { param: 'client', remedy: 'give client.email too' },
  form: { param: 'email', remedy: 'add an e-mail address' },
} as const;

/**
 * 400 unless an offer can reach the client (canBeMessaged): the worker offers a time to no one else,
 * so an entry of a client with neither an e-mail nor a phone the organisation texts would wait in vain
 * while the times it waits for went to others (design.md 9.1: such contacts are refused where they are
 * entered). `onFile`: the client was found by the contact given, and is named.
 */
async function requireMessageable(
  db: Db,
  organisationId: string,
  client: { phone: string | null; email: string | null },
  refusal: { param: string; remedy?: string; onFile?: string },
): Promise<void> {
  const texted = await textedCountriesOf(db, organisationId);
  if (canBeMessaged(client, texted)) return;
  const where = textedCountriesInWords(texted);
  const who =
    refusal.onFile === undefined ? 'this client' : `the client on file with that contact (${refusal.onFile})`;
  const phone = client.phone === null ? 'no phone' : 'no phone we text';
  throw new AppError(
    'invalid_request',
    `An offer could not reach ${who}, who has no e-mail address and ${phone} (we text only numbers in ${where})${refusal.remedy ? `; ${refusal.remedy}` : ''}.`,
    refusal.param,
  );
}

/** What a new entry waits for, checked against the catalogue (checkWaitlistWants). */
export interface CheckedWants {
  organisationId: string;
  location: Location;
  serviceIds: string[];
  staffId: string | null;
  fromDate: string;
  toDate: string;
  times: TimeOfDay[] | null;
}

/**
 * The checks of a new entry that need no client (joinWaitlist's; the public page's too, before it
 * writes anything): 400 naming the field, 404 for an unknown location.
 */
export async function checkWaitlistWants(
  db: Db,
  organisationId: string,
  input: Omit<NewWaitlistEntry, 'clientId' | 'client'>,
  now: number,
): Promise<CheckedWants> {
  const location = await requireLocation(db, organisationId, input.locationSlug, 'location_slug');
  const serviceIds = [...new Set(input.serviceIds.map((id) => id.toLowerCase()))];
  // The REST body's schema says so too; the pages' forms reach here with whatever was posted.
  if (serviceIds.length === 0) {
    throw new AppError('invalid_request', 'Choose at least one service.', 'service_ids');
  }
  await requireBookableServices(db, organisationId, location, serviceIds);
  if (input.staffId) {
    const staff = await eligibleStaff(
      db,
      organisationId,
      location.id,
      serviceIds,
      input.staffId.toLowerCase(),
    );
    if (staff.length === 0) {
      // One who is not on the location's active staff at all (unknown, gone, or working elsewhere) is
      // told so: "does not do these services" would send the caller to change the services instead.
      const here = await activeStaffAt(db, organisationId, location.id);
      const works = here.some((member) => member.id === input.staffId?.toLowerCase());
      throw new AppError(
        'invalid_request',
        works
          ? 'This staff member does not do all of these services at this location.'
          : 'This staff member does not work at this location, or is not active.',
        'staff_id',
      );
    }
  }
  const refusal = datesRefusal(input.fromDate, input.toDate, localDateAt(now, location.timezone));
  if (refusal) {
    throw new AppError('invalid_request', refusal, refusal.startsWith('from_date') ? 'from_date' : 'to_date');
  }
  const times = input.times && input.times.length > 0 ? [...new Set(input.times)] : null;
  // A last day of today whose parts asked for are over on the location's clock: nothing could be offered.
  const over = wantsOverRefusal(
    { fromDate: input.fromDate, toDate: input.toDate, times },
    now,
    location.timezone,
  );
  if (over) throw new AppError('invalid_request', over.message, over.param);
  return {
    organisationId,
    location,
    serviceIds,
    staffId: input.staffId?.toLowerCase() ?? null,
    fromDate: input.fromDate,
    toDate: input.toDate,
    times,
  };
}

/**
 * Inside the caller's transaction: the entry of `clientId` for checked wants, and the location's
 * rescan (a time free now is offered at once). 409 conflict when the client already waits there for
 * the same services, in whatever order.
 */
export async function insertCheckedEntry(
  trx: Db,
  checked: CheckedWants,
  clientId: string,
  now: number,
): Promise<WaitlistEntry> {
  const { organisationId, location } = checked;
  const row = {
    id: timeOrderedId(),
    organisation_id: organisationId,
    location_id: location.id,
    client_id: clientId,
    service_ids: JSON.stringify(checked.serviceIds),
    staff_id: checked.staffId,
    from_date: checked.fromDate,
    to_date: checked.toDate,
    times: checked.times === null ? null : JSON.stringify(checked.times),
    status: 'waiting' as const,
    booking_id: null,
    created_at: now,
    updated_at: now,
    ended_at: null,
  };
  // Two joins of one client at once take turns, so the second finds the first (PostgreSQL).
  await takeTurn(trx, waitlistTurn(organisationId, location.id, clientId));
  // The same services in another order are the same wants: the stored lists are compared as sets.
  const waiting = await trx
    .selectFrom('waitlist_entries')
    .select(['id', 'service_ids'])
    .where('organisation_id', '=', organisationId)
    .where('location_id', '=', location.id)
    .where('client_id', '=', clientId)
    .where('status', '=', 'waiting')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const same = waiting.find((entry) =>
    sameSet(JSON.parse(entry.service_ids) as string[], checked.serviceIds),
  );
  if (same) {
    throw new AppError(
      'conflict',
      `This client is already waiting for these services here (entry ${same.id}); leave that entry first to change it.`,
    );
  }
  await insertWaitlistEntry(trx, row);
  await requestWaitlistRescan(trx, organisationId, location.id, now);
  return entryOfRow(row, location.slug, null);
}

/** One entry, with the offer it holds now (404 not_found, param id, when the organisation has none). */
export async function getWaitlistEntry(
  db: Db,
  organisationId: string,
  id: string,
  now: number,
): Promise<WaitlistEntry> {
  const row = await findWaitlistEntry(db, organisationId, id.toLowerCase());
  if (!row) throw new AppError('not_found', 'No waitlist entry has this id.', 'id');
  return entryAsItReads(db, row, now);
}

/**
 * The waiting entry whose offer holds the booking with this reference (a time offered from the
 * waitlist, not claimed yet), if any: what MCP `cancel` reads before releasing an offer, to say after
 * it whether the entry waits on or ended with a booking the client made meanwhile.
 */
export async function entryOfferedBooking(
  db: Db,
  organisationId: string,
  reference: string,
  now: number,
): Promise<WaitlistEntry | undefined> {
  const booking = await getBooking(db, organisationId, reference);
  const offer = await offerOfBooking(db, organisationId, booking.id);
  const row = offer && (await findWaitlistEntry(db, organisationId, offer.entry_id));
  return row?.status === 'waiting' ? entryAsItReads(db, row, now) : undefined;
}

/** A page of entries in joining order, optionally of one location and one status. */
export async function listWaitlist(
  db: Db,
  organisationId: string,
  filter: { locationSlug?: string | undefined; status?: WaitlistStatus | undefined },
  after: { createdAt: number; id: string } | null,
  limit: number,
  now: number,
): Promise<{ items: WaitlistEntry[]; next: { createdAt: number; id: string } | null }> {
  // Active or not: the entries of a location taken out of the catalogue are listed all the same.
  const location = filter.locationSlug
    ? await requireBookedLocation(db, organisationId, filter.locationSlug, 'location_slug')
    : undefined;
  const rows = await waitlistEntriesPage(
    db,
    organisationId,
    { locationId: location?.id, status: filter.status },
    after,
    limit,
  );
  const items = await Promise.all(rows.slice(0, limit).map((row) => entryAsItReads(db, row, now)));
  const last = items[items.length - 1];
  return { items, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/**
 * Takes an entry off the waitlist (status left). An offer it holds and its customer has not claimed is
 * withdrawn: its hold is released, which frees the time for the next entry (a claimed one stays theirs). 404 for no such entry; 409 when it has ended.
 * `actor` is who the withdrawn hold's event log names (a console user; the customer by default).
 */
export async function leaveWaitlist(
  db: Db,
  organisationId: string,
  id: string,
  now: number,
  /** Who takes it off (the event log's actor of a released hold): `api_key:<id>`, `user:<id>`... */
  actor: string,
): Promise<void> {
  await writeTransaction(db, async (trx) => {
    const row = await findWaitlistEntry(trx, organisationId, id.toLowerCase());
    if (!row) throw new AppError('not_found', 'No waitlist entry has this id.', 'id');
    const ended = (status: string) => new AppError('conflict', `This entry has ended already (${status}).`);
    if (row.status !== 'waiting') throw ended(row.status);
    // A time held for it is released first, under its booking's turn (as a claim takes it): the
    // booking, then the entry, the order every change to both keeps.
    const open = (await offersOfEntry(trx, organisationId, row.id)).find(
      (offer) => offer.status === 'pending_confirmation' && (offer.hold_expires_at ?? 0) > now,
    );
    if (open) {
      const target = { organisationId, bookingId: open.booking_id, reference: open.reference };
      await takeTurn(trx, bookingTurn(organisationId, open.reference));
      await withdrawUnclaimedOffer(trx, target, now, actor);
    }
    const left = open
      ? await leaveOnceOfferEnded(trx, organisationId, row.id, now)
      : await endWaitlistEntry(trx, organisationId, row.id, { status: 'left' }, now);
    if (!left) throw ended((await findWaitlistEntry(trx, organisationId, row.id))?.status ?? row.status);
  });
}
