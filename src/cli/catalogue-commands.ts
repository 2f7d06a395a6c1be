import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CreatedApiKey, createApiKey } from '../app/api-key-service.ts';
import {
  CatalogueValidationError,
  type ImportReport,
  importCatalogue,
  readCatalogueFile,
} from '../app/catalogue-import/import-catalogue.ts';
import type { Clock } from '../app/clock.ts';
import type { Db } from '../data/database.ts';
import { CommandError, out } from './output.ts';

/** The demo catalogue shipped with the project (no dependency on anything outside the repository). */
export const DEMO_CATALOGUE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../db/demo-catalogue.json',
);

/** Imports a catalogue file; an invalid file becomes a CommandError listing every problem. */
export async function importCatalogueFile(db: Db, file: string, clock: Clock): Promise<ImportReport> {
  try {
    return await importCatalogue(db, readCatalogueFile(file), clock.nowMs());
  } catch (error) {
    if (error instanceof CatalogueValidationError) {
      throw new CommandError(
        `${file} was not imported: ${error.problems.length} problem(s); nothing was changed.`,
        error.problems.map((p) => `${p.path}: ${p.message}`),
      );
    }
    const unreadable = UNREADABLE[(error as NodeJS.ErrnoException).code ?? ''];
    if (unreadable) throw new CommandError(unreadable(file));
    throw error;
  }
}

/** A catalogue path that cannot be read, said as a person would (a typo, a folder), not as errno. */
const UNREADABLE: Record<string, (file: string) => string> = {
  ENOENT: (file) => `There is no catalogue file at ${file}.`,
  EISDIR: (file) => `${file} is a folder; name the catalogue's JSON file.`,
  EACCES: (file) => `${file} cannot be read: permission denied.`,
};

export function printImportReport(report: ImportReport): void {
  const org = report.organisation;
  const outcome = org.created ? 'created' : org.changed ? 'updated' : 'unchanged';
  out(`organisation ${org.slug} (${org.id}) ${outcome}`);
  for (const [kind, c] of Object.entries(report.counts)) {
    out(`  ${kind}: ${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged`);
  }
}

/** Imports the demo catalogue and issues a read_write key for it. */
export async function installDemo(
  db: Db,
  clock: Clock,
): Promise<{ report: ImportReport; key: CreatedApiKey }> {
  const report = await importCatalogueFile(db, DEMO_CATALOGUE, clock);
  const key = await createApiKey(
    db,
    { organisationSlug: report.organisation.slug, label: 'demo', scope: 'read_write' },
    clock.nowMs(),
  );
  return { report, key };
}

export function printDemoKey(organisationSlug: string, key: CreatedApiKey): void {
  out(`Demo organisation "${organisationSlug}" is ready.`);
  out(`API key (scope read_write, shown only once): ${key.key}`);
}
