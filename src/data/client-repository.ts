import type { Db } from './database.ts';
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

export async function findClientById(
  db: Db,
  organisationId: string,
  id: string,
): Promise<ClientRow | undefined> {
  return db
    .selectFrom('clients')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function insertClient(db: Db, row: ClientRow): Promise<void> {
  await db.insertInto('clients').values(row).execute();
}
