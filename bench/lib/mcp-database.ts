import { fileURLToPath } from 'node:url';
import { createApiKey, MAX_KEY_RATE_LIMIT } from '../../src/app/api-key-service.ts';
import { importCatalogue, readCatalogueFile } from '../../src/app/catalogue-import/import-catalogue.ts';
import { createTempDatabase, type TempDatabase } from '../../test/helpers/temp-database.ts';

/**
 * The MCP scenario: the project's demo catalogue (Northside Hair, Camden and Islington, the demo
 * client Jo Bloggs) plus a location of the benchmark's own (WARM_UP), with "now" fixed on a Monday
 * morning in London, so that the full stack in its child process and the in-process baseline in the
 * runner answer the same questions with the same data.
 * Catalogue ids are derived from the catalogue's refs, so both databases have the very same ids.
 */
export const MCP_SCENARIO = {
  organisation: 'northside-hair',
  location: 'camden',
  /** Camden's time zone, in which find_slots reads its dates. */
  timezone: 'Europe/London',
  /** As an agent says it: matches "Cut & blow-dry". */
  service: 'cut',
  /** Monday 23 November 2026, 08:00 in London (GMT). */
  now: '2026-11-23T08:00:00Z',
  /** The demo client Jo Bloggs, by phone. */
  clientPhone: '+447911123456',
} as const;

/**
 * A location added to the benchmark's copy of the demo catalogue, like Camden but with one stylist of
 * its own who does cuts every day: the bookings that warm a server's booking path are made there, so
 * they take none of the few Camden slots that are timed (bench/mcp-round-trips.ts).
 */
export const WARM_UP = { location: 'warm-up', staffName: 'Wren Warmup' } as const;

/** The demo catalogue with WARM_UP's location and stylist; Camden and Islington are as they are. */
function withWarmUpLocation(demo: unknown): unknown {
  // biome-ignore lint/suspicious/noExplicitAny: the demo catalogue's JSON, validated by the import.
  const catalogue = structuredClone(demo) as any;
  const camden = catalogue.locations.find((location: { ref: string }) => location.ref === 'camden');
  catalogue.locations.push({
    ...camden,
    ref: WARM_UP.location,
    slug: WARM_UP.location,
    name: 'Northside Warm-up',
    phone: '+442074850099',
    closures: [],
  });
  const cut = catalogue.services.find((service: { ref: string }) => service.ref === 'cut');
  cut.locations.push(WARM_UP.location);
  const everyDay = Object.fromEntries(
    ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => [day, [['08:00', '20:00']]]),
  );
  catalogue.staff.push({
    ref: 'warm-up-stylist',
    name: WARM_UP.staffName,
    active: true,
    services: ['cut'],
    working_hours: { [WARM_UP.location]: everyDay },
  });
  return catalogue;
}

const DEMO_CATALOGUE = new URL('../../db/demo-catalogue.json', import.meta.url);

export interface McpBenchDatabase {
  database: TempDatabase;
  /** A read_write key of the demo organisation that is never rate limited. */
  writeKey: string;
  /** The demo client Jo Bloggs. */
  clientId: string;
  /** Epoch milliseconds of MCP_SCENARIO.now. */
  now: number;
}

/** A migrated temporary SQLite file with the scenario's catalogue imported and a read_write key; no bookings. */
export async function createMcpBenchDatabase(): Promise<McpBenchDatabase> {
  const now = Date.parse(MCP_SCENARIO.now);
  const database = await createTempDatabase();
  try {
    await importCatalogue(
      database.db,
      withWarmUpLocation(readCatalogueFile(fileURLToPath(DEMO_CATALOGUE))),
      now,
    );
    const key = await createApiKey(
      database.db,
      {
        organisationSlug: MCP_SCENARIO.organisation,
        label: 'bench',
        scope: 'read_write',
        // The highest a key may have: no benchmark ever meets a 429 (it measures work, not refusals).
        rateLimitPerMinute: MAX_KEY_RATE_LIMIT,
      },
      now,
    );
    const client = await database.db
      .selectFrom('clients')
      .select('id')
      .where('phone', '=', MCP_SCENARIO.clientPhone)
      .executeTakeFirstOrThrow();
    return { database, writeKey: key.key, clientId: client.id, now };
  } catch (error) {
    await database.dispose();
    throw error;
  }
}
