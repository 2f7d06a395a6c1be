import { readFileSync } from 'node:fs';
import { isOverlapRefusal } from '../../data/booking-repository.ts';
import type { Db } from '../../data/database.ts';
import { CATALOGUE_IMPORT_TURN, takeTurn } from '../../data/write-locks.ts';
import { writeTransaction } from '../../data/write-transaction.ts';
import { rescanWaitlists } from '../waitlist/rescans.ts';
import { jsonSyntaxProblem } from './format/json-syntax.ts';
import { planBookings } from './storage/booking-plan.ts';
import { writeBookings } from './storage/booking-write.ts';
import { planIdentities } from './storage/identities.ts';
import {
  type CatalogueCounts,
  CatalogueWriteConflict,
  type EntityCounts,
  writeCatalogue,
} from './storage/upsert.ts';
import { type CatalogueProblem, validateCatalogue } from './validation/validate.ts';

/**
 * `booking import`: the catalogue import's use case and the module's public entry. It is the one file
 * that brings the module's roles together, in this order (no file imports a later role):
 *
 * - `format/`: the catalogue file format (schema, problems, local times, booking outlines, stable ids);
 * - `validation/`: checks a file on its own and reports every problem at once;
 * - `storage/`: plans ids and writes the catalogue against the database (never imports validation);
 * - this file: validates, then plans and writes, all in one write transaction.
 *
 * Code outside the module imports from here, or from `format/schema.ts` for the file's types.
 */

export type { CatalogueProblem };

/**
 * Carries every problem of a rejected catalogue at once, so an operator can fix the file in one pass
 * instead of discovering mistakes one import at a time.
 */
export class CatalogueValidationError extends Error {
  readonly problems: CatalogueProblem[];

  constructor(problems: CatalogueProblem[]) {
    const lines = problems.map((p) => `  ${p.path}: ${p.message}`);
    const noun = problems.length === 1 ? 'problem' : 'problems';
    super(`The catalogue was not imported (${problems.length} ${noun}):\n${lines.join('\n')}`);
    this.name = 'CatalogueValidationError';
    this.problems = problems;
  }
}

export interface ImportReport {
  /**
   * `changed` is whether the import changed anything of the organisation's at all (its own row, an
   * entity, a booking, a busy calendar): false when the same file is imported again.
   */
  organisation: { id: string; slug: string; created: boolean; changed: boolean };
  /** `bookings` is there when the file lists any. */
  counts: CatalogueCounts & { bookings?: EntityCounts };
}

/**
 * Reads a catalogue file for `importCatalogue`. A JSON syntax error is a problem with the file, not a
 * crash, so it comes back as a CatalogueValidationError like any other mistake in it.
 */
export function readCatalogueFile(path: string): unknown {
  const text = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
  try {
    return JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) {
      throw new CatalogueValidationError([{ path: '$', message: jsonSyntaxProblem(text, error) }]);
    }
    throw error;
  }
}

/**
 * Imports one organisation's catalogue as an idempotent upsert: all or nothing, matched by ref so ids
 * stay stable across re-imports, and never deleting what the file leaves out (bookings may refer to it).
 * `now` (epoch ms) stamps created_at/updated_at of the rows that actually change.
 */
export async function importCatalogue(db: Db, input: unknown, now: number): Promise<ImportReport> {
  const { problems, catalogue } = validateCatalogue(input);
  if (catalogue === undefined) throw new CatalogueValidationError(problems);
  try {
    return await writeTransaction(db, async (trx) => {
      // Imports take turns across the installation (on PostgreSQL; SQLite has one writer): each checks
      // that the ids it is given are no other organisation's, which no key enforces across
      // organisations once keys are per organisation.
      await takeTurn(trx, CATALOGUE_IMPORT_TURN);
      const planned = await planIdentities(trx, catalogue);
      if ('problems' in planned) throw new CatalogueValidationError(planned.problems);
      const { plan } = planned;
      const bookings = await planBookings(trx, catalogue, plan, now);
      if ('problems' in bookings) throw new CatalogueValidationError(bookings.problems);
      const written = await writeCatalogue(trx, catalogue, plan, now);
      const counts: ImportReport['counts'] = written.counts;
      if (catalogue.bookings.length > 0) {
        counts.bookings = await writeBookings(trx, catalogue, plan, bookings.bookings, now);
      }
      const entitiesChanged = Object.values(counts).some((c) => c.created > 0 || c.updated > 0);
      // New hours, staff or services, a closure removed: time may have freed for someone waiting.
      await rescanWaitlists(trx, plan.organisationId, now);
      return {
        organisation: {
          id: plan.organisationId,
          slug: catalogue.organisation.slug,
          created: plan.existingOrganisation === undefined,
          changed: written.uncountedChanges || entitiesChanged,
        },
        counts,
      };
    });
  } catch (error) {
    if (error instanceof CatalogueWriteConflict) {
      // SQLite's overlap triggers raise 'booking_overlap'; PostgreSQL's exclusion constraint fails
      // with exclusion_violation (23P01) instead (see isOverlapRefusal).
      const message = isOverlapRefusal(error.cause)
        ? 'overlaps a live booking of the same staff member already in the database (buffers included)'
        : `conflicts with data already in the database: ${error.message}`;
      throw new CatalogueValidationError([{ path: error.path, message }]);
    }
    throw error;
  }
}
