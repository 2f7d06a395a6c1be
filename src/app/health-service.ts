import { sql } from 'kysely';
import type { Db } from '../data/database.ts';
import { isStorageFailure, storageProblemOf } from '../data/storage-health.ts';
import { AppError } from '../domain/errors.ts';

/**
 * Whether the database is ready to serve: it answers a trivial query, and its storage has not just
 * refused a write (a full disk, a read-only file: reads would go on while every booking fails).
 * Throws the driver's error, or the storage's, when it is not.
 */
export async function checkDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
  const problem = storageProblemOf(db);
  if (problem) throw problem;
}

/**
 * A statement the storage refused (a full disk, a read-only or failing file or database: the failures
 * that make /healthz answer 503) as the contract's 503 database_unavailable, which every face answers
 * instead of a fault; null for any other error. The transaction it happened in was rolled back.
 */
export function storageRefusal(error: unknown): AppError | null {
  if (isUnreachable(error)) {
    return new AppError(
      'database_unavailable',
      'The database cannot be reached just now; nothing was changed. Try again later.',
    );
  }
  if (!isStorageFailure(error)) return null;
  return new AppError(
    'database_unavailable',
    'The database cannot store changes just now (its disk is full or failing); nothing was changed. Try again later.',
  );
}

/**
 * A connection to PostgreSQL that could not be made (the server down or restarting, refusing more
 * connections, its host unknown): no statement ran, so nothing changed. A connection lost once made is
 * not one of them: a COMMIT it carried may have been applied (server_error, safe to retry).
 */
function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNREACHABLE.has(code);
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // cannot_connect_now (starting up, shutting down), too_many_connections
  '57P03',
  '53300',
]);
