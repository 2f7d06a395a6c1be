import type { Db } from './database.ts';
import { preparedQuery } from './prepared-query.ts';
import type { ClientsTable } from './tables.ts';

export type ClientRow = ClientsTable;

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

export async function insertClient(db: Db, row: ClientRow): Promise<void> {
  await db.insertInto('clients').values(row).execute();
}
