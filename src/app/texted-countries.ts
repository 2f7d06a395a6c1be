import type { Db } from '../data/database.ts';
import { locationCountriesOf, storedCountries } from '../data/location-repository.ts';

/**
 * The countries an organisation texts (design.md 9.1): those of its locations and those its policies
 * add (`sms_countries`). Asked by every booking's messages, so kept per database handle and
 * organisation for as long as its catalogue_version stands (every catalogue import that changes the
 * locations or the organisation's policies moves it on).
 */
const known = new WeakMap<Db, Map<string, { version: number; countries: ReadonlySet<string> }>>();

export async function textedCountriesOf(
  db: Db,
  organisationId: string,
  catalogueVersion?: number,
): Promise<ReadonlySet<string>> {
  let ofDb = known.get(db);
  if (!ofDb) {
    ofDb = new Map();
    known.set(db, ofDb);
  }
  const kept = ofDb.get(organisationId);
  if (kept && catalogueVersion !== undefined && kept.version === catalogueVersion) return kept.countries;
  // The version first: countries read after it are at least as new as it says, never older.
  const organisation = await db
    .selectFrom('organisations')
    .select(['sms_countries', 'catalogue_version'])
    .where('id', '=', organisationId)
    .executeTakeFirst();
  const locations = await locationCountriesOf(db, [organisationId]);
  const countries = new Set([
    ...(locations.get(organisationId) ?? []),
    ...storedCountries(organisation?.sms_countries ?? ''),
  ]);
  if (organisation) ofDb.set(organisationId, { version: organisation.catalogue_version, countries });
  return countries;
}
