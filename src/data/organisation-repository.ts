import type { CompiledQuery, Selectable } from 'kysely';
import type { Db } from './database.ts';
import { literalLimit } from './literal-limit.ts';
import type { OrganisationsTable } from './tables.ts';

export type Organisation = Selectable<OrganisationsTable>;

export async function findOrganisationBySlug(db: Db, slug: string): Promise<Organisation | undefined> {
  return db.selectFrom('organisations').selectAll().where('slug', '=', slug).executeTakeFirst();
}

export async function findOrganisationById(db: Db, id: string): Promise<Organisation | undefined> {
  return db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function isDatabaseEmpty(db: Db): Promise<boolean> {
  const row = await db.selectFrom('organisations').select('id').limit(literalLimit(1)).executeTakeFirst();
  return row === undefined;
}

/** The slugs of the first `limit` organisations, in order (what an operator types after --org). */
export async function organisationSlugs(db: Db, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('organisations')
    .select('slug')
    .orderBy('slug')
    .limit(literalLimit(limit))
    .execute();
  return rows.map((row) => row.slug);
}

/** What an organisation's availability answers depend on, as two counters the database triggers bump. */
export interface AvailabilityVersions {
  catalogueVersion: number;
  bookingsVersion: number;
}

/**
 * The organisation's catalogue and bookings versions, undefined for an unknown id. Read before every
 * availability answer, so compiled once per database handle (as findApiKeyByHash is): building the
 * query with Kysely would cost more than SQLite spends answering it.
 */
export async function availabilityVersions(
  db: Db,
  organisationId: string,
): Promise<AvailabilityVersions | undefined> {
  let compiled = compiledVersionReads.get(db);
  if (!compiled) {
    compiled = versionRead(db, '').compile();
    compiledVersionReads.set(db, compiled);
  }
  const result = await db.executeQuery<{ catalogue_version: number; bookings_version: number }>({
    ...compiled,
    parameters: [organisationId],
  });
  const row = result.rows[0];
  return row && { catalogueVersion: row.catalogue_version, bookingsVersion: row.bookings_version };
}

const compiledVersionReads = new WeakMap<Db, CompiledQuery>();

function versionRead(db: Db, organisationId: string) {
  return db
    .selectFrom('organisations')
    .select(['catalogue_version', 'bookings_version'])
    .where('id', '=', organisationId);
}
