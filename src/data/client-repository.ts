import type { Insertable, Selectable } from 'kysely';
import type { Db } from './database.ts';
import { preparedQuery } from './prepared-query.ts';
import type { ClientsTable } from './tables.ts';

export type ClientRow = Selectable<ClientsTable>;
export type NewClientRow = Insertable<ClientsTable>;

/*
 * Lookups by phone or e-mail find clients on file only (contact_proven = 1): the record of a public
 * booking whose contact nobody proved is never "the client with this number" (migration 0023).
 */

export async function findClientByPhone(
  db: Db,
  organisationId: string,
  phone: string,
): Promise<ClientRow | undefined> {
  return db
    .selectFrom('clients')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('phone', '=', phone)
    .where('contact_proven', '=', 1)
    .executeTakeFirst();
}

export async function findClientByEmail(
  db: Db,
  organisationId: string,
  email: string,
): Promise<ClientRow | undefined> {
  return db
    .selectFrom('clients')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('email', '=', email)
    .where('contact_proven', '=', 1)
    .executeTakeFirst();
}

const clientById = preparedQuery<{ organisationId: string; id: string }, ClientRow>((db, param) =>
  db
    .selectFrom('clients')
    .selectAll()
    .where('organisation_id', '=', param('organisationId'))
    .where('id', '=', param('id')),
);

export async function findClientById(
  db: Db,
  organisationId: string,
  id: string,
): Promise<ClientRow | undefined> {
  return clientById.first(db, { organisationId, id });
}

export async function insertClient(db: Db, row: NewClientRow): Promise<void> {
  await db.insertInto('clients').values(row).execute();
}

export async function updateClient(
  db: Db,
  organisationId: string,
  id: string,
  changes: Partial<Omit<NewClientRow, 'id' | 'organisation_id'>>,
): Promise<void> {
  await db
    .updateTable('clients')
    .set(changes)
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .execute();
}

/** Deletes a client that no booking points at (one that is pointed at stays). */
export async function deleteUnreferencedClient(db: Db, organisationId: string, id: string): Promise<void> {
  await db
    .deleteFrom('clients')
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('bookings')
            .select('bookings.id')
            .where('bookings.organisation_id', '=', organisationId)
            .where('bookings.client_id', '=', id),
        ),
      ),
    )
    .execute();
}
