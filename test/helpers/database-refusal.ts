import { expect } from 'vitest';
import { onPostgres } from './temp-database.ts';

/**
 * "The database refused it", said once for both databases. SQLite and PostgreSQL word their
 * refusals differently, but both say which kind of rule refused a write in a code of their own:
 * better-sqlite3's extended result codes (SQLITE_CONSTRAINT_UNIQUE, ...) and node-postgres's
 * SQLSTATE (23505, ...). PostgreSQL also names the constraint, so a test naming one checks it there;
 * SQLite's messages name columns, not constraints, so there the kind of rule is what is checked.
 */
export type ConstraintKind = 'unique' | 'check' | 'foreign_key' | 'not_null';

const SQLITE_CODES: Record<ConstraintKind, readonly string[]> = {
  // A duplicate primary key is a uniqueness refusal too.
  unique: ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY'],
  check: ['SQLITE_CONSTRAINT_CHECK'],
  foreign_key: ['SQLITE_CONSTRAINT_FOREIGNKEY'],
  not_null: ['SQLITE_CONSTRAINT_NOTNULL'],
};

/** SQLSTATE class 23, integrity constraint violation. */
const POSTGRES_CODES: Record<ConstraintKind, string> = {
  unique: '23505',
  check: '23514',
  foreign_key: '23503',
  not_null: '23502',
};

/** PostgreSQL's exclusion_violation: a row overlapping another under an EXCLUDE constraint. */
export const EXCLUSION_VIOLATION = '23P01';
/** PostgreSQL's raise_exception: what a PL/pgSQL trigger's RAISE EXCEPTION fails with. */
const RAISE_EXCEPTION = 'P0001';

interface DatabaseError {
  message: string;
  code: string;
  constraint?: string;
}

/** The error `write` failed with; the test fails if it succeeded, or failed with something else than a database error. */
export async function refusalOf(write: Promise<unknown>): Promise<DatabaseError> {
  const outcome = await write.then(
    () => ({ refused: false as const }),
    (error: unknown) => ({ refused: true as const, error }),
  );
  expect(outcome.refused, 'the database accepted a write it should refuse').toBe(true);
  const error = (outcome as { error: unknown }).error;
  expect(error).toBeInstanceOf(Error);
  expect(error).toHaveProperty('code', expect.any(String));
  return error as DatabaseError;
}

/**
 * `write` fails because a constraint of `kind` refuses it: on PostgreSQL the one named `constraint`
 * when given.
 */
export async function expectRefusedBy(
  write: Promise<unknown>,
  kind: ConstraintKind,
  options: { constraint?: string } = {},
): Promise<void> {
  const error = await refusalOf(write);
  if (onPostgres) {
    expect({ code: error.code, message: error.message }).toEqual({
      code: POSTGRES_CODES[kind],
      message: expect.any(String),
    });
    if (options.constraint !== undefined) expect(error.constraint).toBe(options.constraint);
  } else {
    expect(SQLITE_CODES[kind], `${error.code}: ${error.message}`).toContain(error.code);
  }
}

/**
 * `write` fails because one of the schema's triggers refuses it with `message`: SQLite's
 * RAISE(ABORT, message) and PostgreSQL's RAISE EXCEPTION raise the very same text.
 */
export async function expectTriggerRefusal(write: Promise<unknown>, message: string): Promise<void> {
  const error = await refusalOf(write);
  expect({ code: error.code, message: error.message }).toEqual({
    code: onPostgres ? RAISE_EXCEPTION : 'SQLITE_CONSTRAINT_TRIGGER',
    message,
  });
}

/** `write` fails on PostgreSQL's exclusion constraint `constraint` (there is no such thing on SQLite). */
export async function expectExclusionRefusal(write: Promise<unknown>, constraint: string): Promise<void> {
  const error = await refusalOf(write);
  expect({ code: error.code, constraint: error.constraint }).toEqual({
    code: EXCLUSION_VIOLATION,
    constraint,
  });
}

/**
 * `write` fails because it would overlap a live booking of the same staff member: SQLite's overlap
 * triggers raise 'booking_overlap'; PostgreSQL's one guard is the exclusion constraint
 * bookings_no_overlap (its trigger was dropped by 2026-11-29-0030-postgres-overlap-guard).
 */
export async function expectOverlapRefusal(write: Promise<unknown>): Promise<void> {
  if (onPostgres) await expectExclusionRefusal(write, 'bookings_no_overlap');
  else await expectTriggerRefusal(write, 'booking_overlap');
}
