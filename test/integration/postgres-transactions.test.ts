import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/data/database.ts';
import { writeTransaction } from '../../src/data/write-transaction.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * On PostgreSQL a transaction's BEGIN is sent with its first statement, in one round trip, once that
 * statement is prepared on the connection (src/data/postgres.ts, beginThen; issue 47). The
 * transaction must be exactly what separate BEGIN and statement made: its writes invisible to others
 * until COMMIT, undone whole by ROLLBACK, and a first statement that fails leaving nothing behind and
 * the connection fit for the next transaction.
 */
let t: TempDatabase;

const insert = (db: Db, id: number) => sql`INSERT INTO tx_probe (id) VALUES (${id})`.execute(db);
const stored = async () =>
  (await sql<{ id: number }>`SELECT id FROM tx_probe ORDER BY id`.execute(t.db)).rows.map((r) => r.id);

describe.runIf(onPostgres)('a PostgreSQL transaction whose BEGIN goes with its first statement', () => {
  beforeAll(async () => {
    t = await createTempDatabase();
    await sql`CREATE TABLE tx_probe (id integer PRIMARY KEY)`.execute(t.db);
  });
  afterEach(async () => {
    await sql`DELETE FROM tx_probe`.execute(t.db);
  });
  afterAll(async () => {
    await t.dispose();
  });

  /** Runs `work` in transactions on one connection, so the insert is prepared there after the first. */
  const onOneConnection = <T>(
    work: (transaction: (w: (trx: Db) => Promise<void>) => Promise<void>) => Promise<T>,
  ) => t.db.connection().execute((connection) => work((w) => connection.transaction().execute(w)));

  it('keeps its first write from others until COMMIT', async () => {
    await onOneConnection(async (transaction) => {
      await transaction((trx) => insert(trx, 1).then(() => undefined));
      await transaction(async (trx) => {
        await insert(trx, 2);
        // Another connection does not see the row: it is in an open transaction, not autocommitted.
        expect(await stored()).toEqual([1]);
      });
    });
    expect(await stored()).toEqual([1, 2]);
  });

  it('undoes its first write on ROLLBACK', async () => {
    await onOneConnection(async (transaction) => {
      await transaction((trx) => insert(trx, 1).then(() => undefined));
      await expect(
        transaction(async (trx) => {
          await insert(trx, 2);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
    });
    expect(await stored()).toEqual([1]);
  });

  it('fails with its first statement, leaves nothing, and the connection serves the next', async () => {
    await onOneConnection(async (transaction) => {
      await transaction((trx) => insert(trx, 1).then(() => undefined));
      const refusal = await transaction(async (trx) => {
        await insert(trx, 1);
        await insert(trx, 3);
      }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refusal).toHaveProperty('code', '23505');
      await transaction(async (trx) => {
        await insert(trx, 2);
        await insert(trx, 3);
      });
    });
    expect(await stored()).toEqual([1, 2, 3]);
  });

  it('runs a transaction of no statement, and a write transaction through writeTransaction', async () => {
    await onOneConnection((transaction) => transaction(async () => undefined));
    await writeTransaction(t.db, async (trx) => {
      await insert(trx, 4);
      await insert(trx, 5);
    });
    await writeTransaction(t.db, async (trx) => {
      await insert(trx, 6);
    });
    expect(await stored()).toEqual([4, 5, 6]);
  });
});
