import { MAX_KEY_RATE_LIMIT } from '../../src/app/api-key-service.ts';
import { openDatabase } from '../../src/data/database.ts';
import { prepareDatabase } from '../../test/helpers/served-database.ts';
import { mixedLoadCatalogue } from './mixed-load-catalogue.ts';

/**
 * The organisation-budgets benchmark's database: two salons as large as the mixed load's (one London
 * location, 30 staff, 4 services, 200 regular clients each). The quiet one has one read key whose own
 * limit is the highest a key may have, so nothing refuses its steady requests; the busy one has
 * `attackerKeys` read_write keys on the default limit (120 a minute each), issue 38's attacker.
 */
export const BUDGETS_SCENARIO = {
  victim: 'quiet-salon',
  attacker: 'busy-salon',
  attackerKeys: 25,
} as const;

function salon(slug: string, name: string, prefix: string) {
  const catalogue = mixedLoadCatalogue();
  return {
    ...catalogue,
    organisation: { ...catalogue.organisation, slug, name, booking_reference_prefix: prefix },
  };
}

export interface BudgetsDatabase {
  victimKey: string;
  attackerKeys: string[];
  /** The busy salon's ids, which its bookings name. */
  attacker: { serviceIds: string[]; staffIds: string[]; clientIds: string[] };
}

/** Migrates the database at `url`, imports both salons and issues their keys. */
export async function prepareBudgetsDatabase(url: string): Promise<BudgetsDatabase> {
  const { victim, attacker, attackerKeys } = BUDGETS_SCENARIO;
  const [victimKey, ...keys] = await prepareDatabase(url, {
    catalogues: [salon(victim, 'Quiet Salon', 'QS'), salon(attacker, 'Busy Salon', 'BS')],
    keys: [
      { organisation: victim, scope: 'read', rateLimitPerMinute: MAX_KEY_RATE_LIMIT },
      ...Array.from({ length: attackerKeys }, () => ({ organisation: attacker })),
    ],
  });
  const handle = openDatabase(url);
  try {
    const { db } = handle;
    const organisation = await db
      .selectFrom('organisations')
      .select('id')
      .where('slug', '=', attacker)
      .executeTakeFirstOrThrow();
    const ids = (table: 'services' | 'staff' | 'clients') =>
      db
        .selectFrom(table)
        .select('id')
        .where('organisation_id', '=', organisation.id)
        .orderBy('id')
        .execute()
        .then((rows) => rows.map((row) => row.id));
    return {
      victimKey: victimKey!,
      attackerKeys: keys,
      attacker: {
        serviceIds: await ids('services'),
        staffIds: await ids('staff'),
        clientIds: await ids('clients'),
      },
    };
  } finally {
    await handle.close();
  }
}
