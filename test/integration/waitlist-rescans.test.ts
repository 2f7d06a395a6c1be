import { afterEach, describe, expect, it } from 'vitest';
import { requestWaitlistRescan, takeRescans } from '../../src/data/waitlist-repository.ts';
import { writeTransaction } from '../../src/data/write-transaction.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * A rescan asked (a cancellation frees a time) while the worker takes an older request for the same
 * location is not lost. On PostgreSQL the worker can take the request and search before the asking
 * transaction commits, so it must leave that request behind for its next pass. SQLite runs one writer
 * at a time: the worker's take waits for the commit, and its search sees the freed time.
 */
let database: TempDatabase | undefined;
afterEach(async () => {
  await database?.close();
  database = undefined;
});

describe.skipIf(!onPostgres)('waitlist rescans on PostgreSQL', () => {
  it('keeps a rescan asked while the worker takes an older one, until the worker’s next pass', async () => {
    database = await createTempDatabase();
    const { db } = database;
    await requestWaitlistRescan(db, 'org', 'camden', 1_000);

    // A cancellation's transaction asks again and has not committed yet when the worker takes.
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let asked!: () => void;
    const askedYet = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const cancellation = writeTransaction(db, async (trx) => {
      await requestWaitlistRescan(trx, 'org', 'camden', 2_000);
      asked();
      await committed;
    });
    await askedYet;
    const taking = writeTransaction(db, (trx) => takeRescans(trx, 10));
    // The worker's take waits for the cancellation's row (or has taken it already, before the fix).
    await new Promise((resolve) => setTimeout(resolve, 200));
    commit();
    await cancellation;
    const first = await taking;
    // Whatever the first pass took, a request is left for the cancellation's freed time.
    expect(first).toEqual([]);
    const second = await writeTransaction(db, (trx) => takeRescans(trx, 10));
    expect(second.map((r) => r.location_id)).toEqual(['camden']);
    expect(await writeTransaction(db, (trx) => takeRescans(trx, 10))).toEqual([]);
  });

  it('never waits for a location being asked for again: no deadlock with a transaction asking for several', async () => {
    database = await createTempDatabase();
    const { db } = database;
    await requestWaitlistRescan(db, 'org', 'camden', 1_000);
    await requestWaitlistRescan(db, 'org', 'soho', 2_000);
    // A cancellation at Soho whose staff also work at Camden asks for both, Soho first.
    let goOn!: () => void;
    const gate = new Promise<void>((resolve) => {
      goOn = resolve;
    });
    let askedSoho!: () => void;
    const sohoAsked = new Promise<void>((resolve) => {
      askedSoho = resolve;
    });
    const cancellation = writeTransaction(db, async (trx) => {
      await requestWaitlistRescan(trx, 'org', 'soho', 3_000);
      askedSoho();
      await gate;
      await requestWaitlistRescan(trx, 'org', 'camden', 3_000);
    });
    await sohoAsked;
    // The worker takes Camden (the oldest) and does not wait for Soho, which is being asked for again.
    const taking = writeTransaction(db, (trx) => takeRescans(trx, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));
    goOn();
    const [asked, taken] = await Promise.allSettled([cancellation, taking]);
    expect(asked.status).toBe('fulfilled');
    expect(taken).toMatchObject({ status: 'fulfilled', value: [{ location_id: 'camden' }] });
    // Both locations are asked for again, for the worker's next pass.
    const next = await writeTransaction(db, (trx) => takeRescans(trx, 10));
    expect(next.map((r) => r.location_id).sort()).toEqual(['camden', 'soho']);
  });

  it('gives a request to one of two workers taking it at once', async () => {
    database = await createTempDatabase();
    const { db } = database;
    await requestWaitlistRescan(db, 'org', 'camden', 1_000);
    const [a, b] = await Promise.all([
      writeTransaction(db, (trx) => takeRescans(trx, 10)),
      writeTransaction(db, (trx) => takeRescans(trx, 10)),
    ]);
    expect(a.length + b.length).toBe(1);
  });
});
