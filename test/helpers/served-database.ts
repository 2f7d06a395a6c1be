import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { createApiKey } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { openDatabase } from '../../src/data/database.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import type { ApiKeyScope } from '../../src/domain/api-key.ts';
import { smallCatalogue } from './catalogue-fixtures.ts';
import type { RunningServer } from './cli.ts';
import { freshDatabaseUrl } from './temp-database.ts';

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

/** What each test of a file using `eachTestServes` gets: its folder, its database and its server. */
export interface ServedTest {
  dir: string;
  /** The environment of a `booking` process on the test's database (DATABASE_URL). */
  env: Record<string, string>;
  /** The server the test started, stopped after it. */
  server: RunningServer | undefined;
}

/**
 * Gives every test of the calling file a fresh folder and database (not created yet on SQLite, an empty
 * one on PostgreSQL) for `booking` processes, and stops the server it started, drops the database and
 * removes the folder after it.
 */
export function eachTestServes(folderPrefix: string): ServedTest {
  const served: ServedTest = { dir: '', env: {}, server: undefined };
  let drop: () => Promise<void> = async () => undefined;
  beforeEach(async () => {
    served.dir = mkdtempSync(path.join(tmpdir(), folderPrefix));
    const database = await freshDatabaseUrl(served.dir);
    served.env = { DATABASE_URL: database.url };
    drop = database.drop;
  });
  afterEach(async () => {
    await served.server?.stop();
    served.server = undefined;
    await drop();
    rmSync(served.dir, { recursive: true, force: true });
  });
  return served;
}
