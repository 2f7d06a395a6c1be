import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  StatementAfterCommit,
  THEN_COMMIT,
  transactionEdges,
  wasSent,
} from '../../src/data/postgres-transaction-edges.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * A transaction's BEGIN goes out with its first statement, and its COMMIT where asked with its last,
 * in one round trip (src/data/postgres-transaction-edges.ts), on a real PostgreSQL server: the
 * statements run inside the transaction, nothing is sent for a transaction that runs nothing, and
 * failures leave the transaction and the connection as they would.
 */
describe.runIf(onPostgres)('BEGIN with the first statement, COMMIT with the last, on PostgreSQL', () => {
  let database: TempDatabase;
  let client: pg.PoolClient;
  let pool: pg.Pool;
  /** Statements handed to node-postgres, each a round trip. */
  let sent: string[];
  let send: (config: pg.QueryConfig) => Promise<pg.QueryResult>;

  beforeAll(async () => {
    database = await createTempDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 1 });
    const real = await pool.connect();
    const counted = Object.create(real) as pg.PoolClient;
    counted.query = ((config: string | pg.QueryConfig | pg.Submittable, ...rest: unknown[]) => {
      sent.push(typeof config === 'string' ? config : ((config as pg.QueryConfig).text ?? '?'));
      return (real.query as (...args: unknown[]) => unknown).call(real, config, ...rest);
    }) as pg.PoolClient['query'];
    client = real;
    send = transactionEdges(counted, pg.Query);
    await real.query('CREATE TABLE begin_probe (id int PRIMARY KEY)');
  });

  afterAll(async () => {
    client?.release();
    await pool?.end();
    await database?.dispose();
  });

  const setting = `SELECT current_setting('probe.value', true) AS value`;

  it('runs the first statement inside the transaction, BEGIN and it in one round trip', async () => {
    sent = [];
    await send({ text: 'begin' });
    // Local to the transaction: seen by the next statement only if both ran inside it.
    await send({ text: `SELECT set_config('probe.value', $1, true)`, values: ['inside'] });
    const inside = await send({ text: setting });
    await send({ text: 'commit' });
    const after = await send({ text: setting });
    expect(inside.rows).toEqual([{ value: 'inside' }]);
    expect(after.rows).toEqual([{ value: '' }]);
    expect(sent).toEqual([`SELECT set_config('probe.value', $1, true)`, setting, 'commit', setting]);
  });

  it('answers the statement’s own result, rows and count', async () => {
    sent = [];
    await send({ text: 'begin' });
    const inserted = await send({
      text: 'INSERT INTO begin_probe VALUES ($1), ($2) RETURNING id',
      values: [1, 2],
    });
    await send({ text: 'rollback' });
    expect(inserted.command).toBe('INSERT');
    expect(inserted.rowCount).toBe(2);
    expect(inserted.rows).toEqual([{ id: 1 }, { id: 2 }]);
    // Rolled back with the transaction: it ran inside it.
    expect((await send({ text: 'SELECT count(*)::int AS n FROM begin_probe' })).rows).toEqual([{ n: 0 }]);
  });

  it('sends nothing for a transaction that runs nothing', async () => {
    sent = [];
    expect((await send({ text: 'begin' })).command).toBe('BEGIN');
    expect((await send({ text: 'commit' })).command).toBe('COMMIT');
    await send({ text: 'begin' });
    await send({ text: 'rollback' });
    expect(sent).toEqual([]);
  });

  it('sends BEGIN alone before a first statement without parameters', async () => {
    sent = [];
    await send({ text: 'begin' });
    await send({ text: `SELECT set_config('probe.value', 'simple', true)` });
    const inside = await send({ text: setting });
    await send({ text: 'commit' });
    expect(inside.rows).toEqual([{ value: 'simple' }]);
    expect(sent[0]).toBe('begin');
  });

  it('fails the first statement with its own error, leaves the transaction to roll back and the connection usable', async () => {
    await send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [7] });
    await send({ text: 'begin' });
    await expect(send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [7] })).rejects.toMatchObject({
      code: '23505',
    });
    // The transaction is open and failed, as after an answered BEGIN: it refuses until rolled back.
    await expect(send({ text: 'SELECT 1 AS one' })).rejects.toMatchObject({ code: '25P02' });
    await send({ text: 'rollback' });
    expect((await send({ text: 'SELECT $1::int AS one', values: [1] })).rows).toEqual([{ one: 1 }]);
  });

  it('parses a named statement again after its first Parse failed, once what it needs is there', async () => {
    const later = {
      text: 'SELECT count(*)::int AS n FROM begin_later WHERE id > $1',
      values: [0],
      name: 'later',
    };
    await send({ text: 'begin' });
    await expect(send(later)).rejects.toMatchObject({ code: '42P01' });
    // Its Parse failed first, so nothing began: the rollback finds no transaction, and says so only as a notice.
    await send({ text: 'rollback' });
    await send({ text: 'CREATE TABLE begin_later (id int)' });
    await send({ text: 'begin' });
    expect((await send(later)).rows).toEqual([{ n: 0 }]);
    await send({ text: 'commit' });
  });

  it('gives BEGIN’s error, and runs nothing, when BEGIN fails', async () => {
    // A failed transaction left open behind the wrapper's back: BEGIN is refused in it.
    await client.query('BEGIN');
    await client.query('SELECT 1 / 0').catch(() => undefined);
    await send({ text: 'begin' });
    await expect(
      send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [55], name: 'insert_one' }),
    ).rejects.toMatchObject({ code: '25P02' });
    await send({ text: 'rollback' });
    expect(
      (await send({ text: 'SELECT count(*)::int AS n FROM begin_probe WHERE id = $1', values: [55] })).rows,
    ).toEqual([{ n: 0 }]);
  });

  /** Rows of begin_probe from `from` to `from + 9`, from another connection: what has committed. */
  const committedIds = async (from: number) =>
    (
      await sql<{
        id: number;
      }>`SELECT id FROM begin_probe WHERE id BETWEEN ${from} AND ${from + 9} ORDER BY id`.execute(database.db)
    ).rows.map((row) => row.id);

  it('commits with a statement that asks for it, BEGIN, it and COMMIT in one round trip', async () => {
    sent = [];
    await send({ text: 'begin' });
    const insert = `INSERT INTO begin_probe VALUES ($1) RETURNING id${THEN_COMMIT}`;
    const inserted = await send({ text: insert, values: [1300] });
    // Its own answer; and committed already, before Kysely's COMMIT: another connection sees it.
    expect(inserted.rows).toEqual([{ id: 1300 }]);
    expect(await committedIds(1300)).toEqual([1300]);
    expect((await send({ text: 'commit' })).command).toBe('COMMIT');
    expect(sent).toEqual([insert]);
  });

  it('commits with the last of several statements, the transaction whole', async () => {
    sent = [];
    await send({ text: 'begin' });
    await send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [1310] });
    expect(await committedIds(1310)).toEqual([]);
    await send({ text: `INSERT INTO begin_probe VALUES ($1)${THEN_COMMIT}`, values: [1311] });
    expect(await committedIds(1310)).toEqual([1310, 1311]);
    await send({ text: 'commit' });
    expect(sent).toHaveLength(2);
    // The connection is out of the transaction: this one stands alone.
    await send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [1312] });
    expect(await committedIds(1310)).toEqual([1310, 1311, 1312]);
  });

  it('refuses, unsent, a statement after the one that carried the COMMIT; a rollback then keeps the writes', async () => {
    await send({ text: 'begin' });
    await send({ text: `INSERT INTO begin_probe VALUES ($1)${THEN_COMMIT}`, values: [1320] });
    sent = [];
    await expect(
      send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [1321] }),
    ).rejects.toBeInstanceOf(StatementAfterCommit);
    expect((await send({ text: 'rollback' })).command).toBe('ROLLBACK');
    expect(sent).toEqual([]);
    expect(await committedIds(1320)).toEqual([1320]);
  });

  it('skips the COMMIT when the statement fails: the transaction rolls back whole', async () => {
    await send({ text: 'begin' });
    await send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [1330] });
    await expect(
      send({ text: `INSERT INTO begin_probe VALUES ($1), ($1)${THEN_COMMIT}`, values: [1331] }),
    ).rejects.toMatchObject({ code: '23505' });
    sent = [];
    await send({ text: 'rollback' });
    expect(sent).toEqual(['rollback']);
    expect(await committedIds(1330)).toEqual([]);
  });

  it('changes nothing outside a transaction, or for a statement without parameters', async () => {
    await send({ text: `INSERT INTO begin_probe VALUES ($1)${THEN_COMMIT}`, values: [1340] });
    await send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [1341] });
    await send({ text: 'begin' });
    await send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [1342] });
    await send({ text: `INSERT INTO begin_probe VALUES (1343)${THEN_COMMIT}` });
    expect(await committedIds(1340)).toEqual([1340, 1341]);
    await send({ text: 'rollback' });
    expect(await committedIds(1340)).toEqual([1340, 1341]);
  });

  it('refuses a statement sent while the one carrying the COMMIT is on its way; the end waits for it', async () => {
    await send({ text: 'begin' });
    const carrying = send({ text: `INSERT INTO begin_probe VALUES ($1)${THEN_COMMIT}`, values: [1360] });
    const meanwhile = send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [1361] });
    await expect(meanwhile).rejects.toBeInstanceOf(StatementAfterCommit);
    // As Kysely would when its callback failed on the refusal: the rollback comes before the answer.
    const rolledBack = send({ text: 'rollback' });
    await carrying;
    expect(wasSent(await rolledBack)).toBe(false);
    expect(await committedIds(1360)).toEqual([1360]);
    // The connection is itself again.
    await send({ text: 'begin' });
    await send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [1362] });
    await send({ text: 'commit' });
    expect(await committedIds(1360)).toEqual([1360, 1362]);
  });

  it('refuses every statement after a COMMIT that failed, and sends the rollback', async () => {
    await send({ text: 'CREATE TABLE deferred_probe (id int UNIQUE DEFERRABLE INITIALLY DEFERRED)' });
    await send({ text: 'begin' });
    await expect(
      send({ text: `INSERT INTO deferred_probe VALUES ($1), ($1)${THEN_COMMIT}`, values: [1] }),
    ).rejects.toMatchObject({ code: '23505' });
    // The transaction ended with its COMMIT: a statement now would run on its own.
    await expect(
      send({ text: 'INSERT INTO begin_probe VALUES ($1)', values: [1370] }),
    ).rejects.toBeInstanceOf(StatementAfterCommit);
    // Kysely's COMMIT, as from a callback that swallowed the error: it fails too, after a ROLLBACK.
    sent = [];
    await expect(send({ text: 'commit' })).rejects.toMatchObject({ code: '23505' });
    expect(sent).toEqual(['rollback']);
    expect(await committedIds(1370)).toEqual([]);
    expect(
      (await send({ text: 'SELECT count(*)::int AS n FROM deferred_probe WHERE id > $1', values: [0] })).rows,
    ).toEqual([{ n: 0 }]);
  });

  it('parses a named statement first used with BEGIN and COMMIT, and runs it by name after', async () => {
    const named = { text: `INSERT INTO begin_probe VALUES ($1)${THEN_COMMIT}`, name: 'insert_commit' };
    sent = [];
    for (const id of [1380, 1381]) {
      await send({ text: 'begin' });
      await send({ ...named, values: [id] });
      await send({ text: 'commit' });
    }
    expect(sent).toEqual([named.text, named.text]);
    expect(await committedIds(1380)).toEqual([1380, 1381]);
  });

  it('sends BEGIN and COMMIT alone around a statement read a page at a time', async () => {
    sent = [];
    await send({ text: 'begin' });
    const paged = {
      text: `INSERT INTO begin_probe VALUES ($1) RETURNING id${THEN_COMMIT}`,
      values: [1390],
      rows: 10,
    };
    expect((await send(paged)).rows).toEqual([{ id: 1390 }]);
    expect(await committedIds(1390)).toEqual([]);
    await send({ text: 'commit' });
    expect(sent).toEqual(['begin', paged.text, 'commit']);
    expect(await committedIds(1390)).toEqual([1390]);
  });

  it('commits a Kysely transaction through openPostgres with its marked statement', async () => {
    const { db } = database;
    await db.transaction().execute(async (trx) => {
      await sql`INSERT INTO begin_probe VALUES (${1350})`.execute(trx);
      await sql`INSERT INTO begin_probe VALUES (${1351})${sql.raw(THEN_COMMIT)}`.execute(trx);
      // Committed before Kysely's own COMMIT: seen from another of the pool's connections.
      expect(await committedIds(1350)).toEqual([1350, 1351]);
    });
  });

  it('keeps Kysely’s transactions whole through openPostgres: a failed one leaves nothing', async () => {
    const { db } = database;
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`INSERT INTO begin_probe VALUES (${100})`.execute(trx);
        await sql`INSERT INTO begin_probe VALUES (${101})`.execute(trx);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    await db.transaction().execute(async (trx) => {
      await sql`INSERT INTO begin_probe VALUES (${200})`.execute(trx);
    });
    const { rows } = await sql<{
      id: number;
    }>`SELECT id FROM begin_probe WHERE id BETWEEN 100 AND 999 ORDER BY id`.execute(db);
    expect(rows).toEqual([{ id: 200 }]);
  });
});
