import type { Selectable } from 'kysely';
import type { Db } from './database.ts';
import type { OrganisationsTable } from './tables.ts';

export type Organisation = Selectable<OrganisationsTable>;

export async function findOrganisationBySlug(db: Db, slug: string): Promise<Organisation | undefined> {
  return db.selectFrom('organisations').selectAll().where('slug', '=', slug).executeTakeFirst();
}

export async function findOrganisationById(db: Db, id: string): Promise<Organisation | undefined> {
  return db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function isDatabaseEmpty(db: Db): Promise<boolean> {
  const row = await db.selectFrom('organisations').select('id').limit(1).executeTakeFirst();
  return row === undefined;
}
