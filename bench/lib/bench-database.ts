import { fileURLToPath } from 'node:url';
import { createApiKey, MAX_KEY_RATE_LIMIT } from '../../src/app/api-key-service.ts';
import { importCatalogue, readCatalogueFile } from '../../src/app/catalogue-import/import-catalogue.ts';
import { createTempDatabase, type TempDatabase } from '../../test/helpers/temp-database.ts';

export const BENCH_ORGANISATION = 'northside-hair';
/** The demo location that the generated services are added to. */
export const BENCH_LOCATION = 'camden';
/** The demo catalogue offers 4 services at Camden; with these it offers 50, a full default page. */
export const EXTRA_SERVICES = 46;

const DEMO_CATALOGUE = new URL('../../db/demo-catalogue.json', import.meta.url);
const CATEGORIES = ['Hair', 'Colour', 'Treatments', 'Styling', null];

export interface BenchDatabase {
  database: TempDatabase;
  /** A read-scoped key of the demo organisation that is never rate limited. */
  readKey: string;
}

/**
 * A real, migrated SQLite file in a temporary directory holding the demo catalogue plus generated
 * services at Camden, each delivered by one or two of its active staff, so that list pages are the
 * size a real salon's would be.
 */
export async function createBenchDatabase(now: number): Promise<BenchDatabase> {
  const database = await createTempDatabase();
  try {
    await importCatalogue(
      database.db,
      withExtraServices(readCatalogueFile(fileURLToPath(DEMO_CATALOGUE))),
      now,
    );
    const key = await createApiKey(
      database.db,
      {
        organisationSlug: BENCH_ORGANISATION,
        label: 'bench',
        scope: 'read',
        // The highest a key may have: no benchmark ever meets a 429 (it measures work, not refusals).
        rateLimitPerMinute: MAX_KEY_RATE_LIMIT,
      },
      now,
    );
    return { database, readKey: key.key };
  } catch (error) {
    await database.dispose();
    throw error;
  }
}

interface Catalogue {
  services: unknown[];
  staff: { ref: string; services: string[] }[];
}

function withExtraServices(demo: unknown): unknown {
  const catalogue = structuredClone(demo) as Catalogue;
  const staffOf = (ref: string) => {
    const member = catalogue.staff.find((s) => s.ref === ref);
    if (!member) throw new Error(`The demo catalogue has no staff member "${ref}".`);
    return member;
  };
  const amara = staffOf('amara');
  const ben = staffOf('ben');
  for (let i = 0; i < EXTRA_SERVICES; i += 1) {
    const ref = `bench-${String(i).padStart(2, '0')}`;
    catalogue.services.push({
      ref,
      name: `Bench treatment ${String(i).padStart(2, '0')}`,
      category: CATEGORIES[i % CATEGORIES.length],
      duration_minutes: 15 + (i % 8) * 15,
      price: { amount: 1500 + i * 250, currency: 'GBP' },
      ...(i % 4 === 0 ? { deposit: { amount: 1000, currency: 'GBP' } } : {}),
      locations: [BENCH_LOCATION],
    });
    if (i % 3 !== 1) amara.services.push(ref);
    if (i % 3 !== 0) ben.services.push(ref);
  }
  return catalogue;
}
