import type { Db } from '../data/database.ts';
import { locationCountriesOf, storedCountries } from '../data/location-repository.ts';
import { findOrganisationById } from '../data/organisation-repository.ts';
import { readCatalogue } from './catalogue-cache.ts';

/**
 * The countries an organisation texts (design.md 9.1): those of its locations and those its policies
 * add (`sms_countries`). Asked by every booking's messages, so kept in the catalogue cache under the
 * organisation's catalogue_version as the caller read it (an import that changes the locations or
 * the organisation's policies moves the version on); a caller that knows no version reads afresh.
 */
export function textedCountriesOf(
  db: Db,
  organisationId: string,
  catalogueVersion?: number,
): Promise<ReadonlySet<string>> {
  return readCatalogue(db, organisationId, catalogueVersion, 'texted-countries', async () => {
    const [organisation, locations] = await Promise.all([
      findOrganisationById(db, organisationId),
      locationCountriesOf(db, [organisationId]),
    ]);
    return new Set([
      ...(locations.get(organisationId) ?? []),
      ...storedCountries(organisation?.sms_countries ?? ''),
    ]);
  });
}
