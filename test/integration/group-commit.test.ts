import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/data/database.ts';
import { type DatabaseHandle, openDatabase } from '../../src/data/database.ts';
import { storageProblemOf } from '../../src/data/storage-health.ts';
import { REDONE_IF_LOST, writeTransaction } from '../../src/data/write-transaction.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * Group commit (src/data/write-transaction.ts) on a real SQLite file: units of work queued in the same
 * turn of the event loop share one transaction and one COMMIT, yet each one's writes land whole or not
 * at all, and each caller hears only of its own unit.
 *
 * Group commit exists only on embedded SQLite, where one connection writes and every COMMIT waits for
 * the disk (openDatabase enables it there alone). On PostgreSQL each unit is a plain transaction of
 * its own, on a connection of the pool: what the last describe block checks instead.
 */
let t: TempDatabase;
let counted: DatabaseHandle;
let statements: string[];

beforeEach(async () => {
  t = await createTempDatabase();
  await sql`create table scratch (id integer primary key, parent integer references scratch (id))`.execute(
    t.db,
  );
  statements = [];
  counted = openDatabase(t.url, { onQuery: (text) => statements.push(text.toLowerCase()) });
});
afterEach(async () => {
  await counted.close();
  await t.dispose();
});

const db = () => counted.db as unknown as Db;
const insert = (trx: Db, id: number, parent: number | null = null) =>
  sql`insert into scratch (id, parent) values (${id}, ${parent})`.execute(trx);
const ids = async () =>
  (await sql<{ id: number }>`select id from scratch order by id`.execute(t.db)).rows.map((r) => r.id);
const commits = () => statements.filter((s) => s === 'commit').length;

describe.skipIf(onPostgres)('group commit', () => {
  it('commits units queued in the same turn once, together', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        writeTransaction(db(), async (trx) => {
          await insert(trx, i + 1);
          return i + 1;
        }),
      ),
    );
    expect(results).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await ids()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(commits()).toBe(1);
  });

  it('rolls back only the unit that fails, and tells only its caller', async () => {
    const outcomes = await Promise.allSettled([
      writeTransaction(db(), (trx) => insert(trx, 1)),
      writeTransaction(db(), async (trx) => {
        await insert(trx, 2);
        throw new Error('changed my mind');
      }),
      writeTransaction(db(), (trx) => insert(trx, 3)),
      // A constraint violation inside a unit is that unit's failure alone.
      writeTransaction(db(), async (trx) => {
        await insert(trx, 4);
        await insert(trx, 1);
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('changed my mind');
    expect((outcomes[3] as PromiseRejectedResult).reason.message).toMatch(/UNIQUE/);
    expect(await ids()).toEqual([1, 3]);
    expect(commits()).toBe(1);
  });

  it('runs the units one after another, each seeing the writes of those before it', async () => {
    const seen = await Promise.all(
      [1, 2, 3].map((id) =>
        writeTransaction(db(), async (trx) => {
          const before = (await sql<{ n: number }>`select count(*) as n from scratch`.execute(trx)).rows[0]!
            .n;
          await insert(trx, id);
          return before;
        }),
      ),
    );
    expect(seen).toEqual([0, 1, 2]);
  });

  it('fails every unit when the COMMIT fails, and writes nothing of any', async () => {
    const outcomes = await Promise.allSettled([
      writeTransaction(db(), (trx) => insert(trx, 1)),
      writeTransaction(db(), async (trx) => {
        // A deferred foreign key is checked only at COMMIT, which therefore fails for the whole group.
        await sql`pragma defer_foreign_keys = on`.execute(trx);
        await insert(trx, 2, 99);
      }),
      writeTransaction(db(), (trx) => insert(trx, 3)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const outcome of outcomes) {
      expect((outcome as PromiseRejectedResult).reason.message).toMatch(/FOREIGN KEY/);
    }
    expect(await ids()).toEqual([]);
    // The connection is usable again afterwards.
    await writeTransaction(db(), (trx) => insert(trx, 5));
    expect(await ids()).toEqual([5]);
  });

  it('tells a unit that failed on what the group wrote of the failed COMMIT, not of its own error', async () => {
    // The second unit refuses because of the first unit's write (a replay of its answer, a slot it
    // took): once the COMMIT fails, that write never was, and neither is the reason for the refusal.
    const outcomes = await Promise.allSettled([
      writeTransaction(db(), (trx) => insert(trx, 1)),
      writeTransaction(db(), async (trx) => {
        if ((await sql`select id from scratch where id = 1`.execute(trx)).rows.length > 0) {
          throw new Error('1 is taken');
        }
      }),
      writeTransaction(db(), async (trx) => {
        await sql`pragma defer_foreign_keys = on`.execute(trx);
        await insert(trx, 2, 99);
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const outcome of outcomes) {
      expect((outcome as PromiseRejectedResult).reason.message).toMatch(/FOREIGN KEY/);
    }
    expect(await ids()).toEqual([]);
  });

  it('starts the next group for units queued while one is running', async () => {
    let queuedMeanwhile: Promise<unknown> | undefined;
    await writeTransaction(db(), async (trx) => {
      await insert(trx, 1);
      // Another caller queues now: it waits for the next group instead of joining this one.
      queuedMeanwhile = writeTransaction(db(), (next) => insert(next, 2));
    });
    expect(await ids()).toEqual([1]);
    await queuedMeanwhile;
    expect(await ids()).toEqual([1, 2]);
    expect(commits()).toBe(2);
  });
});

describe.runIf(onPostgres)('write transactions on PostgreSQL', () => {
  it('commits each unit in a transaction of its own, and rolls back only the unit that fails', async () => {
    const outcomes = await Promise.allSettled([
      writeTransaction(db(), (trx) => insert(trx, 1)),
      writeTransaction(db(), async (trx) => {
        await insert(trx, 2);
        throw new Error('changed my mind');
      }),
      writeTransaction(db(), (trx) => insert(trx, 3)),
      writeTransaction(db(), async (trx) => {
        await insert(trx, 4);
        await insert(trx, 4);
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('changed my mind');
    expect((outcomes[3] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
    expect(await ids()).toEqual([1, 3]);
    // One COMMIT per unit that succeeded, none shared; the two that failed rolled back.
    expect(commits()).toBe(2);
    expect(statements.filter((s) => s === 'rollback')).toHaveLength(2);
  });
});

/** SQLite's synchronous setting as a unit of work sees it: 2 FULL (COMMIT syncs), 1 NORMAL (it does not). */
const synchronous = async (trx: Db) =>
  (await sql<{ synchronous: number }>`pragma synchronous`.execute(trx)).rows[0]!.synchronous;

describe.skipIf(onPostgres)('bookkeeping redone if lost commits without a disk sync (issue 47)', () => {
  it('a group of such units alone commits with synchronous NORMAL, and the connection is FULL again after', async () => {
    const seen = await Promise.all([
      writeTransaction(db(), synchronous, REDONE_IF_LOST),
      writeTransaction(db(), synchronous, REDONE_IF_LOST),
    ]);
    expect(seen).toEqual([1, 1]);
    expect(await writeTransaction(db(), synchronous)).toBe(2);
  });

  it('one durable unit in the group makes the whole group sync', async () => {
    const seen = await Promise.all([
      writeTransaction(db(), synchronous, REDONE_IF_LOST),
      writeTransaction(db(), async (trx) => {
        await insert(trx, 1);
        return synchronous(trx);
      }),
    ]);
    expect(seen).toEqual([2, 2]);
    expect(await ids()).toEqual([1]);
  });

  it('a lazy commit is no proof that the disk writes again; a durable one is (readiness)', async () => {
    await writeTransaction(db(), (trx) => insert(trx, 1));
    // A full disk: no page may be added to the file, and a write that needs one fails.
    const pages = (await sql<{ page_count: number }>`pragma page_count`.execute(db())).rows[0]!.page_count;
    await sql.raw(`pragma max_page_count = ${pages}`).execute(db());
    await expect(
      writeTransaction(db(), async (trx) => {
        for (let id = 2; id < 5_000; id += 1) await insert(trx, id);
      }),
    ).rejects.toMatchObject({ code: 'SQLITE_FULL' });
    expect(storageProblemOf(db())).not.toBeNull();
    // A change that needs no new page commits, but without a sync it proves nothing.
    const touch = (trx: Db) => sql`update scratch set parent = 1 where id = 1`.execute(trx);
    await writeTransaction(db(), touch, REDONE_IF_LOST);
    expect(storageProblemOf(db())).not.toBeNull();
    await writeTransaction(db(), touch);
    expect(storageProblemOf(db())).toBeNull();
  });

  it('a unit that fails still leaves the connection FULL', async () => {
    await expect(
      writeTransaction(
        db(),
        async (trx) => {
          await insert(trx, 1);
          throw new Error('refused');
        },
        REDONE_IF_LOST,
      ),
    ).rejects.toThrow('refused');
    expect(await ids()).toEqual([]);
    expect(await writeTransaction(db(), synchronous)).toBe(2);
  });
});
