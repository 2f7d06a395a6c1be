import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/data/database.ts';
import type { DatabaseHandle } from '../../src/data/db.ts';
import { storageProblemOf } from '../../src/data/storage-health.ts';
import { onPostgres } from '../helpers/temp-database.ts';

/**
 * What the SQLite connection tells storage health (storage-health.ts), on a real file whose size is
 * capped (max_page_count): a write past the cap fails with SQLITE_FULL as on a full disk. Only a
 * transaction that changed something and committed proves the storage writable again.
 */
let dir: string;
let handle: DatabaseHandle;
beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'booking-storage-'));
  handle = openDatabase(`sqlite:${path.join(dir, 'health.sqlite')}`);
  await sql`create table notes (id integer primary key, body blob)`.execute(handle.db);
  await sql`insert into notes (body) values ('first')`.execute(handle.db);
});
afterEach(async () => {
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Caps the file at its current size: the next write that needs a page fails with SQLITE_FULL. */
async function fillUp(db: DatabaseHandle['db']) {
  const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(db);
  await sql.raw(`pragma max_page_count = ${rows[0]!.page_count}`).execute(db);
}

const bigInsert = sql`insert into notes (body) values (zeroblob(1000000))`;

describe.skipIf(onPostgres)('storage health on SQLite', () => {
  it('stays failing through transactions that change nothing, reads that start with WITH, and failed ones', async () => {
    const { db } = handle;
    await fillUp(db);
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`update notes set body = 'changed' where id = 1`.execute(trx);
        await bigInsert.execute(trx);
      }),
    ).rejects.toMatchObject({ code: 'SQLITE_FULL' });
    expect(storageProblemOf(db)?.message).toMatch(/full/);

    // A worker's claim that found nothing: a transaction that changed nothing.
    await db.transaction().execute(async (trx) => {
      await sql`update notes set body = 'none' where id = -1`.execute(trx);
    });
    expect(storageProblemOf(db)).not.toBeNull();
    // A read written as WITH returns rows but changes nothing.
    await sql`with n as (select id from notes) select id from n`.execute(db);
    await db.transaction().execute(async () => {});
    expect(storageProblemOf(db)).not.toBeNull();

    // A write that changes a row within the pages the file has proves the storage writable.
    await sql`update notes set body = 'x' where id = 1`.execute(db);
    expect(storageProblemOf(db)).toBeNull();
  });

  it('does not credit the next COMMIT with the changes of a transaction the failure ended', async () => {
    const { db } = handle;
    await fillUp(db);
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`update notes set body = 'changed' where id = 1`.execute(trx);
        await bigInsert.execute(trx);
      }),
    ).rejects.toMatchObject({ code: 'SQLITE_FULL' });
    await db.transaction().execute(async () => {});
    expect(storageProblemOf(db)).not.toBeNull();
  });
});
