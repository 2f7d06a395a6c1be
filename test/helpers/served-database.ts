import { createApiKey } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { openDatabase } from '../../src/data/database.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import type { ApiKeyScope } from '../../src/domain/api-key.ts';
import { smallCatalogue } from './catalogue-fixtures.ts';

export interface KeyRequest {
  organisation: string;
  scope?: ApiKeyScope;
  /** Requests a minute; none means the default (120). */
  rateLimitPerMinute?: number;
}

/**
 * Sets up the database at `url` for a `booking` process under test, in this process (quicker than the
 * CLI): migrated, `catalogues` imported (the small catalogue by default), and a key per request,
 * returned in order.
 */
export async function prepareDatabase(
  url: string,
  options: { catalogues?: unknown[]; keys?: KeyRequest[] } = {},
): Promise<string[]> {
  const handle = openDatabase(url);
  try {
    await migrateToLatest(handle.db);
    for (const catalogue of options.catalogues ?? [smallCatalogue()]) {
      await importCatalogue(handle.db, catalogue, Date.now());
    }
    const keys: string[] = [];
    for (const request of options.keys ?? [{ organisation: 'acme-hair' }]) {
      const created = await createApiKey(
        handle.db,
        {
          organisationSlug: request.organisation,
          label: 'e2e',
          scope: request.scope ?? 'read_write',
          rateLimitPerMinute: request.rateLimitPerMinute ?? null,
        },
        Date.now(),
      );
      keys.push(created.key);
    }
    return keys;
  } finally {
    await handle.close();
  }
}
