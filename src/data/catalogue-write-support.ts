import type { Insertable } from 'kysely';
import { formatPath, type PathSegment } from '../app/catalogue-checks.ts';
import type { Catalogue } from '../app/catalogue-schema.ts';
import type { IdentityPlan } from './catalogue-identities.ts';
import type { Db } from './database.ts';
import type { Database, Flag } from './tables.ts';

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

function isConstraintError(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CONSTRAINT') || code.startsWith('23'));
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

/**
 * Upserts one entity: inserts it, or updates it when its row or an owned collection differs from the
 * file, and counts which; an unchanged entity is not written at all, so its updated_at stays put.
 */
export async function upsert<Row extends { id: string }>(
  counts: EntityCounts,
  stored: Row | undefined,
  wanted: Partial<Row>,
  ownedChanged: boolean,
  write: { insert: () => Promise<void>; update: () => Promise<void> },
): Promise<void> {
  if (stored === undefined) {
    await write.insert();
    counts.created += 1;
    return;
  }
  if (!differs(stored, wanted) && !ownedChanged) {
    counts.unchanged += 1;
    return;
  }
  await write.update();
  counts.updated += 1;
}
