import { type RawBuilder, type Selectable, type SqlBool, sql, type Updateable } from 'kysely';
import { GMAIL_DOMAINS, inboxOfEmail } from '../domain/public-booking-policy.ts';
import type { Db } from './database.ts';
import type { BookingStatus, ContactProofsTable } from './tables.ts';

/** The contacts public-page bookings gave and their proofs (migration 0023). */

export type ContactProofRow = Selectable<ContactProofsTable>;

export async function findProofOfBooking(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<ContactProofRow | undefined> {
  return db
    .selectFrom('contact_proofs')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .executeTakeFirst();
}

/**
 * The proof this booking's contact is proven by: its own, or for another visit of a series booked on
 * the public page, that of the visit holding the series' one proof (its first); undefined where
 * neither has one. Each read goes by key (the proof's, the booking's, the series' index): one query
 * over both would read every booking of the organisation.
 */
export async function findProofHolding(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<ContactProofRow | undefined> {
  const own = await findProofOfBooking(db, organisationId, bookingId);
  if (own) return own;
  const booking = await db
    .selectFrom('bookings')
    .select('series_id')
    .where('organisation_id', '=', organisationId)
    .where('id', '=', bookingId)
    .executeTakeFirst();
  if (!booking?.series_id) return undefined;
  return db
    .selectFrom('bookings as b')
    .innerJoin('contact_proofs as p', (join) =>
      join.onRef('p.organisation_id', '=', 'b.organisation_id').onRef('p.booking_id', '=', 'b.id'),
    )
    .selectAll('p')
    .where('b.organisation_id', '=', organisationId)
    .where('b.series_id', '=', booking.series_id)
    .executeTakeFirst();
}

/** The proof whose link carries this token (by its hash): the link names no organisation. */
export async function findProofByTokenHash(db: Db, tokenHash: string): Promise<ContactProofRow | undefined> {
  return db.selectFrom('contact_proofs').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function updateProof(
  db: Db,
  organisationId: string,
  bookingId: string,
  changes: Updateable<ContactProofsTable>,
): Promise<void> {
  await db
    .updateTable('contact_proofs')
    .set(changes)
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .execute();
}

/** Where the caps look: public bookings that gave this phone or this e-mail. */
export interface ContactKeys {
  phone: string | null;
  email: string | null;
}

/** A proof with what its use cases need of its booking. */
export type ProofWithBooking = ContactProofRow & {
  reference: string;
  client_id: string;
  status: BookingStatus;
  starts_at: number;
  hold_expires_at: number | null;
};

export async function findProofWithBooking(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<ProofWithBooking | undefined> {
  return db
    .selectFrom('contact_proofs as p')
    .innerJoin('bookings as b', (join) =>
      join.onRef('b.organisation_id', '=', 'p.organisation_id').onRef('b.id', '=', 'p.booking_id'),
    )
    .selectAll('p')
    .select(['b.reference', 'b.client_id', 'b.status', 'b.starts_at', 'b.hold_expires_at'])
    .where('p.organisation_id', '=', organisationId)
    .where('p.booking_id', '=', bookingId)
    .executeTakeFirst();
}

/**
 * Public bookings made since `since` that gave this phone or e-mail (the larger of the two counts; an
 * e-mail counted by its inbox, inboxOfEmail).
 */
export function countPublicBookingsSince(
  db: Db,
  organisationId: string,
  contact: ContactKeys,
  since: number,
): Promise<number> {
  return largestCount(contact, (column, criterion) =>
    db
      .selectFrom('contact_proofs')
      .select(sql<string>`${sql.ref(column)}`.as('contact'))
      .where('organisation_id', '=', organisationId)
      .where(contactMatch(column, criterion))
      .where('created_at', '>', since)
      .execute(),
  );
}

/**
 * Public bookings that gave this phone or e-mail and are still unconfirmed holds (pending, not lapsed
 * as of `now`), a series booked with one proof counted once while any of its visits is: the larger of
 * the two counts (an e-mail counted by its inbox, inboxOfEmail).
 */
export function countLivePublicHolds(
  db: Db,
  organisationId: string,
  contact: ContactKeys,
  now: number,
): Promise<number> {
  return largestCount(contact, (column, criterion) =>
    db
      .selectFrom('contact_proofs as p')
      .innerJoin('bookings as b', (join) =>
        join.onRef('b.organisation_id', '=', 'p.organisation_id').onRef('b.id', '=', 'p.booking_id'),
      )
      .select(sql<string>`${sql.ref(`p.${column}`)}`.as('contact'))
      .where('p.organisation_id', '=', organisationId)
      .where(contactMatch(`p.${column}`, criterion))
      .where((eb) =>
        eb.or([
          eb.and([
            eb('b.status', 'in', ['pending_payment', 'pending_confirmation']),
            eb('b.hold_expires_at', '>', now),
          ]),
          // Two conditions, not one OR inside the subquery: each reads by an index (the series'), where
          // the OR read every booking of the organisation for every proof the contact ever gave.
          eb.and([
            eb('b.series_id', 'is not', null),
            eb.exists(
              eb
                .selectFrom('bookings as visit')
                .select(sql`1`.as('held'))
                .where('visit.organisation_id', '=', eb.ref('b.organisation_id'))
                .where('visit.series_id', '=', eb.ref('b.series_id'))
                .where('visit.status', 'in', ['pending_payment', 'pending_confirmation'])
                .where('visit.hold_expires_at', '>', now),
            ),
          ]),
        ]),
      )
      .execute(),
  );
}

/**
 * What a count looks for in a contact column: this value, or the addresses that may reach this inbox
 * (sameInbox; the caller keeps those inboxOfEmail finds the same).
 */
type ContactCriterion = { equals: string } | { inbox: string };

function contactMatch(column: string, criterion: ContactCriterion): RawBuilder<SqlBool> {
  if ('equals' in criterion) return sql<SqlBool>`${sql.ref(column)} = ${criterion.equals}`;
  return sameInbox(column, criterion.inbox);
}

/**
 * The addresses in `column` that may reach `inbox` (an inboxOfEmail): any at Gmail's domains for a
 * Gmail inbox (its dots are not dropped alike in SQLite's SQL and PostgreSQL's; one organisation's
 * public contacts at Gmail in a day are few enough to read), else the inbox itself and its `+tag`
 * spellings. The caller compares what it reads by inboxOfEmail.
 */
export function sameInbox(column: string, inbox: string): RawBuilder<SqlBool> {
  const ref = sql.ref(column);
  if (inbox.endsWith(`@${GMAIL_DOMAINS[0]}`)) {
    const at = GMAIL_DOMAINS.map((domain) => sql<SqlBool>`${ref} like ${`%@${domain}`}`);
    return sql<SqlBool>`(${sql.join(at, sql` or `)})`;
  }
  const at = inbox.lastIndexOf('@');
  const likeText = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
  const tagged = `${likeText(inbox.slice(0, at))}+%@${likeText(inbox.slice(at + 1))}`;
  return sql<SqlBool>`(${ref} = ${inbox} or ${ref} like ${tagged} escape '\\')`;
}

/**
 * The larger of a count by the phone and a count by the e-mail (each only when given), an e-mail
 * counted by its inbox (inboxOfEmail): the addresses that may reach it are read (sameInbox) and
 * compared here.
 */
async function largestCount(
  contact: ContactKeys,
  rowsOf: (column: 'phone' | 'email', criterion: ContactCriterion) => Promise<{ contact: string }[]>,
): Promise<number> {
  let most = 0;
  if (contact.phone !== null) most = (await rowsOf('phone', { equals: contact.phone })).length;
  if (contact.email !== null) {
    const inbox = inboxOfEmail(contact.email);
    const rows = await rowsOf('email', { inbox });
    most = Math.max(most, rows.filter((row) => inboxOfEmail(row.contact) === inbox).length);
  }
  return most;
}
