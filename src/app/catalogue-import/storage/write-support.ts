import type { Insertable } from 'kysely';
import type { Db } from '../../../data/database.ts';
import type { Database, Flag } from '../../../data/tables.ts';
import { formatPath, type PathSegment } from '../format/problems.ts';
import type { Catalogue } from '../format/schema.ts';
import type { IdentityPlan } from './identities.ts';

/**
 * Shared machinery of the catalogue writers: compare stored rows with the file so that only real
 * changes are written, and tie a refused constraint to the JSON path of the entity being written.
 */

export interface EntityCounts {
  created: number;
  updated: number;
  unchanged: number;
}

export type CatalogueCounts = Record<'locations' | 'services' | 'staff' | 'clients', EntityCounts>;

/** A constraint the database refused while writing one entity, with that entity's JSON path. */
export class CatalogueWriteConflict extends Error {
  readonly path: string;

  constructor(path: string, cause: Error) {
    super(cause.message, { cause });
    this.name = 'CatalogueWriteConflict';
    this.path = path;
  }
}

/**
 * A refusal by the database's rules: SQLite's constraint codes (its triggers' RAISE included), or
 * PostgreSQL's integrity violations (23xxx) and the exceptions its rule triggers raise (P0001).
 */
function isConstraintError(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    typeof code === 'string' &&
    (code.startsWith('SQLITE_CONSTRAINT') || code.startsWith('23') || code === 'P0001')
  );
}

/** Constraint failures become conflicts located at the entity being written, for the operator. */
export async function atPath<T>(path: PathSegment[], write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isConstraintError(error)) throw new CatalogueWriteConflict(formatPath(path), error);
    throw error;
  }
}

/** better-sqlite3 cannot bind booleans; flags are stored as 0/1. */
export const flag = (value: boolean): Flag => (value ? 1 : 0);

/** Stored rows carry more columns than the file sets; only the ones the file sets are compared. */
export function differs<T extends object>(stored: T, wanted: Partial<T>): boolean {
  return (Object.keys(wanted) as (keyof T)[]).some((key) => stored[key] !== wanted[key]);
}

/** Order-insensitive comparison of two row lists on the given columns. */
export function sameRows<T>(
  stored: readonly T[],
  wanted: readonly T[],
  columns: readonly (keyof T)[],
): boolean {
  const canonical = (rows: readonly T[]) =>
    rows
      .map((row) => JSON.stringify(columns.map((c) => row[c] ?? null)))
      .sort()
      .join('\n');
  return stored.length === wanted.length && canonical(stored) === canonical(wanted);
}

export function groupBy<T, K extends keyof T>(rows: readonly T[], key: K): Map<T[K], T[]> {
  const groups = new Map<T[K], T[]>();
  for (const row of rows) {
    const group = groups.get(row[key]);
    if (group) group.push(row);
    else groups.set(row[key], [row]);
  }
  return groups;
}

/** Inserts in chunks that stay under SQLite's bound-variable limit; skips empty lists. */
export async function insertAll<T extends keyof Database & string>(
  trx: Db,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) {
    await trx
      .insertInto(table)
      .values(rows.slice(i, i + 200))
      .execute();
  }
}

/** Everything a writer needs, passed along instead of re-derived per entity kind. */
export interface Context {
  trx: Db;
  catalogue: Catalogue;
  plan: IdentityPlan;
  orgId: string;
  now: number;
}

export function emptyCounts(): CatalogueCounts {
  const counts = () => ({ created: 0, updated: 0, unchanged: 0 });
  return { locations: counts(), services: counts(), staff: counts(), clients: counts() };
}

/** The catalogue's entity tables: rows with their own id, owned by an organisation, stamped on write. */
export type EntityTable = 'locations' | 'services' | 'staff' | 'clients';

/** Columns the writer sets itself rather than taking from the file. */
type StampedColumn = 'id' | 'organisation_id' | 'created_at' | 'updated_at';

/**
 * Rows an entity owns in other tables (closures, offered locations, staff assignments). They carry no
 * timestamps of their own, so they are replaced whole, and only when they differ from the file.
 */
export interface OwnedRows {
  changed: boolean;
  remove: () => Promise<unknown>;
  insert: () => Promise<void>;
}

/** What sets one entity kind apart from the others: everything else about writing it is shared. */
export interface EntityWrite<T extends EntityTable> {
  /** Where the entity stands in the file, so a refused constraint points the operator at it. */
  path: PathSegment[];
  table: T;
  id: string;
  stored: Database[T] | undefined;
  /** Every column the file sets; compared with `stored` and written as is. */
  wanted: Omit<Database[T], StampedColumn>;
  owned?: OwnedRows;
  /** A change that neither its row nor its owned rows show (its prices' currency is the organisation's). */
  changedElsewhere?: boolean;
}

/**
 * Upserts one entity: inserts it, or updates it when its row or its owned rows differ from the file,
 * and counts which; an unchanged entity is not written at all, so its updated_at stays put.
 */
export async function upsertEntity<T extends EntityTable>(
  ctx: Context,
  counts: EntityCounts,
  entity: EntityWrite<T>,
): Promise<void> {
  const { path, stored, wanted, owned } = entity;
  const ownedChanged = owned?.changed ?? false;
  if (stored === undefined) {
    await atPath(path, () => insertEntity(ctx, entity));
    counts.created += 1;
  } else if (entity.changedElsewhere || ownedChanged || differs(stored, wanted as Partial<Database[T]>)) {
    await atPath(path, () => updateEntity(ctx, entity, ownedChanged));
    counts.updated += 1;
  } else {
    counts.unchanged += 1;
  }
}

async function insertEntity<T extends EntityTable>(
  { trx, orgId, now }: Context,
  { table, id, wanted, owned }: EntityWrite<T>,
): Promise<void> {
  const row = { ...wanted, id, organisation_id: orgId, created_at: now, updated_at: now };
  await trx
    .insertInto(table)
    .values(row as Insertable<Database[T]>)
    .execute();
  await owned?.insert();
}

async function updateEntity<T extends EntityTable>(
  { trx, now, orgId }: Context,
  { table, id, wanted, owned }: EntityWrite<T>,
  ownedChanged: boolean,
): Promise<void> {
  // Kysely cannot type a WHERE on a table left generic; every entity table has these columns.
  await trx
    .updateTable(table as EntityTable)
    .set({ ...wanted, updated_at: now })
    .where('organisation_id', '=', orgId)
    .where('id', '=', id)
    .execute();
  if (!ownedChanged) return;
  await owned?.remove();
  await owned?.insert();
}

/** Organisation tables: every one whose rows carry an organisation_id. */
type OrganisationTable = {
  [T in keyof Database]: Database[T] extends { organisation_id: string } ? T : never;
}[keyof Database];

/**
 * One organisation's stored rows of a table, read once per import rather than once per entity. These
 * tables have no generated columns, so a selected row is the table's row type itself.
 */
export function rowsOfOrganisation<T extends OrganisationTable>(
  trx: Db,
  table: T,
  orgId: string,
): Promise<Database[T][]> {
  // Kysely cannot type a WHERE on a table left generic; the query is the same for any of them.
  return trx
    .selectFrom(table as 'clients')
    .selectAll()
    .where('organisation_id', '=', orgId)
    .execute() as Promise<Database[T][]>;
}

/** One organisation's stored entities of a table, by id. */
export async function storedById<T extends EntityTable>(
  trx: Db,
  table: T,
  orgId: string,
): Promise<Map<string, Database[T]>> {
  const rows = await rowsOfOrganisation(trx, table, orgId);
  return new Map(rows.map((row) => [row.id, row]));
}
