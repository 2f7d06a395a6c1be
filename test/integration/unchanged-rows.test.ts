import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { authenticateApiKey, createApiKey, revokeApiKey } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { changeMarkOf } from '../../src/data/change-mark.ts';
import { type DatabaseHandle, openDatabase } from '../../src/data/database.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * An API key's row is kept between requests while nothing commits (src/data/change-mark.ts): what
 * any connection commits, in this process or another on the same file, is seen by the very next
 * lookup. Each handle here stands for a process: its own connection to the file.
 */
let t: TempDatabase;
let other: DatabaseHandle;
/** A third handle that counts its queries. */
let counted: DatabaseHandle;
let queries = 0;
const now = Date.parse('2026-11-23T09:00:00Z');
beforeEach(async () => {
  t = await createTempDatabase();
  other = t.reopen();
  counted = openDatabase(t.url, { onQuery: () => queries++ });
});
afterEach(async () => {
  await counted.close();
  await other.close();
  await t.dispose();
});

describe('rows kept while nothing changes', () => {
  it('sees a key revoked and a catalogue changed by another connection at the next lookup', async () => {
    const report = await importCatalogue(t.db, demoCatalogue(), now);
    const slug = report.organisation.slug;
    const created = await createApiKey(t.db, { organisationSlug: slug, label: 'desk', scope: 'read' }, now);
    const first = await authenticateApiKey(t.db, created.key, now);
    expect(first?.apiKeyId).toBe(created.id);
    // Read again with nothing written: the same answer, without a query on SQLite.
    expect(await authenticateApiKey(counted.db, created.key, now)).toEqual(first);
    queries = 0;
    expect(await authenticateApiKey(counted.db, created.key, now + 1)).toEqual(first);
    expect(queries).toBe(onPostgres ? 1 : 0);
    if (!onPostgres) {
      const mark = changeMarkOf(t.db)!;
      const before = mark();
      expect(mark()).toBe(before);
      await other.db.updateTable('organisations').set({ catalogue_version: 99 }).execute();
      expect(mark()).not.toBe(before);
    } else {
      await other.db.updateTable('organisations').set({ catalogue_version: 99 }).execute();
      expect(changeMarkOf(t.db)).toBeNull();
    }
    expect((await authenticateApiKey(t.db, created.key, now + 2))?.organisation.catalogueVersion).toBe(99);
    await revokeApiKey(other.db, created.id, now + 3);
    expect(await authenticateApiKey(t.db, created.key, now + 4)).toBeNull();
  });

  it('sees what its own connection writes at the next lookup', async () => {
    const report = await importCatalogue(t.db, demoCatalogue(), now);
    const created = await createApiKey(
      t.db,
      { organisationSlug: report.organisation.slug, label: 'desk', scope: 'read' },
      now,
    );
    expect(await authenticateApiKey(t.db, created.key, now)).not.toBeNull();
    await revokeApiKey(t.db, created.id, now + 1);
    expect(await authenticateApiKey(t.db, created.key, now + 2)).toBeNull();
  });
});
