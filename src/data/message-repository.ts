import type { StaffMessage } from '../domain/message.ts';
import type { Db } from './database.ts';
import type { MessageStatus, MessagesTable } from './tables.ts';

/** Messages for staff. Reads and writes name the organisation, except the lookup of one message by id. */

/** The one mapper from a messages row (with its location's slug) to the domain StaffMessage. */
export function toStaffMessage(row: MessagesTable & { location_slug: string | null }): StaffMessage {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    locationId: row.location_id,
    locationSlug: row.location_slug,
    callerName: row.caller_name,
    phone: row.phone,
    message: row.message,
    reference: row.reference,
    status: row.status,
    createdAt: row.created_at,
    doneAt: row.done_at,
  };
}

export async function insertMessage(db: Db, row: MessagesTable): Promise<void> {
  await db.insertInto('messages').values(row).execute();
}

/**
 * The organisation's messages, oldest first, optionally only those of one status, and only the
 * `latest` so many (still oldest first).
 */
export async function listMessagesOf(
  db: Db,
  organisationId: string,
  status?: MessageStatus,
  latest?: number,
): Promise<StaffMessage[]> {
  const rows = await withLocationSlug(db)
    .where('messages.organisation_id', '=', organisationId)
    .$if(status !== undefined, (q) => q.where('messages.status', '=', status!))
    .$if(latest === undefined, (q) => q.orderBy('messages.created_at').orderBy('messages.id'))
    .$if(latest !== undefined, (q) =>
      q.orderBy('messages.created_at', 'desc').orderBy('messages.id', 'desc').limit(latest!),
    )
    .execute();
  const messages = rows.map(toStaffMessage);
  return latest === undefined ? messages : messages.reverse();
}

/** One message by its id alone (the staff console names no organisation); ids are UUIDs. */
export async function findMessageById(db: Db, id: string): Promise<StaffMessage | undefined> {
  const row = await withLocationSlug(db).where('messages.id', '=', id).executeTakeFirst();
  return row && toStaffMessage(row);
}

function withLocationSlug(db: Db) {
  return db
    .selectFrom('messages')
    .leftJoin('locations', (join) =>
      join
        .onRef('locations.organisation_id', '=', 'messages.organisation_id')
        .onRef('locations.id', '=', 'messages.location_id'),
    )
    .selectAll('messages')
    .select('locations.slug as location_slug');
}

/** Marks an open message done at `at`; a message already done keeps its first done_at. */
export async function markMessageDoneAt(
  db: Db,
  organisationId: string,
  id: string,
  at: number,
): Promise<void> {
  await db
    .updateTable('messages')
    .set({ status: 'done', done_at: at })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .where('status', '=', 'open')
    .execute();
}
