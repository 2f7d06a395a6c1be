import type {
  CatalogueBooking,
  CatalogueClient,
  CatalogueLocation,
  CatalogueOrganisation,
  CatalogueService,
  CatalogueStaff,
} from '../format/schema.ts';

/**
 * What the shape check hands the semantic checks: kept apart from validate.ts, which runs both, so
 * that the checks can name it without importing the file that imports them.
 */

/** An entity that passed its shape check, with its position in the file for problem paths. */
export interface Indexed<T> {
  index: number;
  value: T;
}

/** What parsed, part by part, so the semantic checks can run even when some entities are malformed. */
export interface ParsedCatalogue {
  raw: Record<string, unknown>;
  organisation: CatalogueOrganisation | undefined;
  locations: Indexed<CatalogueLocation>[];
  services: Indexed<CatalogueService>[];
  staff: Indexed<CatalogueStaff>[];
  clients: Indexed<CatalogueClient>[];
  bookings: Indexed<CatalogueBooking>[];
}
