import type { Selectable } from 'kysely';
import { inboxOfEmail } from '../domain/public-booking-policy.ts';
import { sameInbox } from './contact-proof-repository.ts';
import { type Db, dialectOf } from './database.ts';
import { literalLimit } from './literal-limit.ts';
import { rowsToRead } from './page-query.ts';
import type { WaitlistEntriesTable, WaitlistOffersTable } from './tables.ts';

/** The waitlist's tables (migration 0026): entries, the offers made to them, and the rescans asked. */

export type WaitlistEntryRow = Selectable<WaitlistEntriesTable>;

export async function insertWaitlistEntry(db: Db, row: WaitlistEntriesTable): Promise<void> {
  await db.insertInto('waitlist_entries').values(row).execute();
}

export async function findWaitlistEntry(
  db: Db,
  organisationId: string,
  id: string,
): Promise<WaitlistEntryRow | undefined> {
  return db
    .selectFrom('waitlist_entries')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * A page of the organisation's entries in joining order, after `after` (created_at, id): more than
 * `limit` rows when more follow (rowsToRead, one statement for every page size); the caller keeps
 * `limit` of them.
 */
export async function waitlistEntriesPage(
  db: Db,
  organisationId: string,
  filter: { locationId?: string | undefined; status?: WaitlistEntriesTable['status'] | undefined },
  after: { createdAt: number; id: string } | null,
  limit: number,
): Promise<WaitlistEntryRow[]> {
  let query = db.selectFrom('waitlist_entries').selectAll().where('organisation_id', '=', organisationId);
  if (filter.locationId) query = query.where('location_id', '=', filter.locationId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)]),
      ]),
    );
  }
  return query
    .orderBy('created_at')
    .orderBy('id')
    .limit(literalLimit(rowsToRead(limit)))
    .execute();
}

/** A location's waiting entries in joining order: whom the worker offers freed times to, first first. */
export async function waitingEntriesAt(
  db: Db,
  organisationId: string,
  locationId: string,
): Promise<WaitlistEntryRow[]> {
  return db
    .selectFrom('waitlist_entries')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('location_id', '=', locationId)
    .where('status', '=', 'waiting')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * A client's waiting entries at a location (what a booking of theirs there may end): read by the
 * client's index (waitlist_entries_client, migration 0039), not among everyone waiting there.
 */
export async function clientWaitingEntriesAt(
  db: Db,
  organisationId: string,
  locationId: string,
  clientId: string,
  now: number,
): Promise<WaitlistEntryRow[]> {
  return (
    db
      .selectFrom('waitlist_entries')
      .selectAll()
      .where('organisation_id', '=', organisationId)
      .where('location_id', '=', locationId)
      .where('status', '=', 'waiting')
      .where('client_id', '=', clientId)
      // Not an entry whose offer still holds a time (not confirmed, not lapsed): its hold would stay,
      // claimable, were the entry ended by a booking made elsewhere. A hold past its end is lapsed
      // though nobody wrote it expired yet (design.md 6: expiry is lazy): it holds nothing, and the
      // client booking that very time (the lapsed hold written expired just before) has what the
      // entry waited for.
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('waitlist_offers as o')
              .innerJoin('bookings as b', (join) =>
                join.onRef('b.organisation_id', '=', 'o.organisation_id').onRef('b.id', '=', 'o.booking_id'),
              )
              .select('o.booking_id')
              .whereRef('o.organisation_id', '=', 'waitlist_entries.organisation_id')
              .whereRef('o.entry_id', '=', 'waitlist_entries.id')
              .where('b.status', '=', 'pending_confirmation')
              .where((held) =>
                held.or([held('b.hold_expires_at', 'is', null), held('b.hold_expires_at', '>', now)]),
              ),
          ),
        ),
      )
      .execute()
  );
}

/**
 * Ends a waiting entry (booked, left, ended); false when it was not waiting any more. `from` widens
 * which statuses it ends from (leaving over an ending the same transaction just wrote: claims.ts).
 */
export async function endWaitlistEntry(
  db: Db,
  organisationId: string,
  id: string,
  end: { status: Exclude<WaitlistEntriesTable['status'], 'waiting'>; bookingId?: string },
  now: number,
  from: readonly WaitlistEntriesTable['status'][] = ['waiting'],
): Promise<boolean> {
  const result = await db
    .updateTable('waitlist_entries')
    .set({ status: end.status, booking_id: end.bookingId ?? null, ended_at: now, updated_at: now })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function insertWaitlistOffer(db: Db, row: WaitlistOffersTable): Promise<void> {
  await db.insertInto('waitlist_offers').values(row).execute();
}

/**
 * Every offer made to the location's entries, with its booking's status and hold, at its booking's
 * time and staff member now: the desk may have moved the hold (offersOfEntry).
 */
export async function offersAt(db: Db, organisationId: string, locationId: string) {
  return db
    .selectFrom('waitlist_offers as o')
    .innerJoin('bookings as b', (join) =>
      join.onRef('b.organisation_id', '=', 'o.organisation_id').onRef('b.id', '=', 'o.booking_id'),
    )
    .select([
      'o.entry_id',
      'o.booking_id',
      'b.staff_id',
      'b.starts_at',
      'b.ends_at',
      'b.blocked_until',
      'b.status',
      'b.hold_expires_at',
    ])
    .where('o.organisation_id', '=', organisationId)
    .where('b.location_id', '=', locationId)
    .execute();
}

/** The offer a booking is, if it is one. */
export async function offerOfBooking(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<Selectable<WaitlistOffersTable> | undefined> {
  return db
    .selectFrom('waitlist_offers')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .executeTakeFirst();
}

/**
 * The offers of one entry, the latest first, each where its booking is now: a hold the desk moved
 * (PATCH, MCP reschedule) is at its new time and with its new staff member, not the one first offered.
 */
export async function offersOfEntry(db: Db, organisationId: string, entryId: string) {
  return db
    .selectFrom('waitlist_offers as o')
    .innerJoin('bookings as b', (join) =>
      join.onRef('b.organisation_id', '=', 'o.organisation_id').onRef('b.id', '=', 'o.booking_id'),
    )
    .select([
      'o.booking_id',
      'b.staff_id',
      'b.starts_at',
      'o.created_at',
      'b.reference',
      'b.status',
      'b.hold_expires_at',
    ])
    .where('o.organisation_id', '=', organisationId)
    .where('o.entry_id', '=', entryId)
    .orderBy('o.created_at', 'desc')
    .execute();
}

/**
 * Asks the worker to look at the location's waitlist again (once, however often asked before it does).
 * A request already there is touched, not left alone: its `requested_at` moves on by one (keeping its
 * place in line), so a worker taking the older request (takeRescans) does not delete this one. On
 * PostgreSQL a worker could otherwise take the request and search before the transaction asking
 * commits, not yet seeing the time it frees, and leave nothing asked once it does: the time would
 * wait, unoffered, for the location's next change. The touch also holds the row until commit, so that
 * worker's delete waits for it.
 */
export async function requestWaitlistRescan(
  db: Db,
  organisationId: string,
  locationId: string,
  now: number,
): Promise<void> {
  await db
    .insertInto('waitlist_rescans')
    .values({ organisation_id: organisationId, location_id: locationId, requested_at: now })
    .onConflict((oc) =>
      oc
        .columns(['organisation_id', 'location_id'])
        .doUpdateSet((eb) => ({ requested_at: eb('waitlist_rescans.requested_at', '+', 1) })),
    )
    .execute();
}

/** Whether any location waits for a rescan (a read, so an idle worker writes nothing). */
export async function anyRescanAsked(db: Db): Promise<boolean> {
  const row = await db.selectFrom('waitlist_rescans').select('location_id').limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * Takes (deletes and returns) the rescans asked, oldest first: each only as it was read. One asked
 * again since (requestWaitlistRescan), or taken by another instance's worker, stays or is theirs; on
 * PostgreSQL one being asked for again right now is not waited for, and stays for the next pass.
 */
export async function takeRescans(db: Db, limit: number) {
  const rows = await db
    .selectFrom('waitlist_rescans')
    .selectAll()
    .orderBy('requested_at')
    .limit(literalLimit(limit))
    // On PostgreSQL the rows are locked as they are read, and one a transaction is asking for again
    // (uncommitted) is left for the next pass: waiting for it while holding those taken already could
    // deadlock with a transaction asking for rescans at several locations in another order.
    .$if(dialectOf(db) === 'postgres', (q) => q.forUpdate().skipLocked())
    .execute();
  const taken: typeof rows = [];
  for (const row of rows) {
    const deleted = await db
      .deleteFrom('waitlist_rescans')
      .where('organisation_id', '=', row.organisation_id)
      .where('location_id', '=', row.location_id)
      .where('requested_at', '=', row.requested_at)
      .executeTakeFirst();
    if (deleted.numDeletedRows > 0n) taken.push(row);
  }
  return taken;
}

/**
 * Of the location and every location sharing a staff member with it, those where anyone waits: a
 * staff member is busy wherever they work while booked at any of them (availability-repository.ts), so
 * time freed at one location may be free at these too (what makes a rescan worth asking).
 */
export async function waitingLocationsSharingStaff(
  db: Db,
  organisationId: string,
  locationId: string,
): Promise<string[]> {
  const sharing = await db
    .selectFrom('staff_locations as here')
    .innerJoin('staff_locations as there', (join) =>
      join
        .onRef('there.organisation_id', '=', 'here.organisation_id')
        .onRef('there.staff_id', '=', 'here.staff_id'),
    )
    .select('there.location_id')
    .distinct()
    .where('here.organisation_id', '=', organisationId)
    .where('here.location_id', '=', locationId)
    .execute();
  const locations = [...new Set([locationId, ...sharing.map((row) => row.location_id)])];
  const waiting = await db
    .selectFrom('waitlist_entries')
    .select('location_id')
    .distinct()
    .where('organisation_id', '=', organisationId)
    .where('location_id', 'in', locations)
    .where('status', '=', 'waiting')
    .execute();
  return waiting.map((row) => row.location_id);
}

/**
 * Entries joined from the public page (their client an unproven record: contact_proven 0) that gave
 * this phone or this e-mail, waiting or joined since `since`: what the public page's caps count. A
 * an e-mail matches by its inbox (inboxOfEmail), as the booking form's caps count it.
 */
export async function publicEntriesOfContact(
  db: Db,
  organisationId: string,
  contact: { phone: string | null; email: string | null },
  since: number,
): Promise<WaitlistEntryRow[]> {
  const { phone, email } = contact;
  if (phone === null && email === null) return [];
  const inbox = email === null ? null : inboxOfEmail(email);
  const rows = await db
    .selectFrom('waitlist_entries as e')
    .innerJoin('clients as c', (join) =>
      join.onRef('c.organisation_id', '=', 'e.organisation_id').onRef('c.id', '=', 'e.client_id'),
    )
    .selectAll('e')
    .select(['c.phone as contact_phone', 'c.email as contact_email'])
    .where('e.organisation_id', '=', organisationId)
    .where('c.contact_proven', '=', 0)
    .where((eb) =>
      eb.or([
        ...(phone === null ? [] : [eb('c.phone', '=', phone)]),
        ...(inbox === null ? [] : [sameInbox('c.email', inbox)]),
      ]),
    )
    .where((eb) => eb.or([eb('e.status', '=', 'waiting'), eb('e.created_at', '>', since)]))
    .orderBy('e.created_at')
    .execute();
  return rows
    .filter(
      (row) =>
        (phone !== null && row.contact_phone === phone) ||
        (row.contact_email !== null && inboxOfEmail(row.contact_email) === inbox),
    )
    .map(({ contact_phone: _phone, contact_email: _email, ...entry }) => entry);
}
