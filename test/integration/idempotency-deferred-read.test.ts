import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdempotently, type StoredResponse } from '../../src/app/idempotency.ts';
import { keyRecordAfterTurn } from '../../src/data/idempotency-records.ts';
import { RedoTransaction } from '../../src/data/write-transaction.ts';
import { AppError } from '../../src/domain/errors.ts';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { onPostgres, untilLockWaiters } from '../helpers/temp-database.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';

/**
 * runIdempotently with workReadsRecord: the work reads its key's record itself (a booking, with its
 * location's bookings). A work that would write or answer before reading it is a fault in the code:
 * it is stopped before anything is written or stored, so a key can never make two things.
 */
let t: TestApp;
let ids: CatalogueIds;
beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
});
afterAll(async () => {
  await t.close();
});

const scope = (key: string) => ({
  organisationId: ids.organisation,
  key,
  fingerprint: 'f'.repeat(64),
  now: Date.parse(TEST_START),
});
const recordsOf = (key: string) =>
  t.database.db
    .selectFrom('idempotency_records')
    .select('idempotency_key')
    .where('idempotency_key', '=', key)
    .execute();
const ANSWER: StoredResponse = { status: 201, body: { data: 'made' } };

describe('a unit of work that reads its own idempotency record', () => {
  it('may not write its answer’s record before it read the key’s record', async () => {
    const run = runIdempotently(
      t.database.db,
      scope('unread-write'),
      async (_trx, record) => {
        record.rowFor(ANSWER);
        return ANSWER;
      },
      { workReadsRecord: true },
    );
    await expect(run).rejects.toThrow('The work wrote or answered before it read its idempotency record.');
    expect(await recordsOf('unread-write')).toEqual([]);
  });

  it('may not answer without having read it', async () => {
    const run = runIdempotently(t.database.db, scope('unread-answer'), async () => ANSWER, {
      workReadsRecord: true,
    });
    await expect(run).rejects.toThrow('The work wrote or answered before it read its idempotency record.');
    expect(await recordsOf('unread-answer')).toEqual([]);
  });

  it.runIf(onPostgres)(
    'reads it again in each run of the work (a taken reference runs it again)',
    async () => {
      const runs: string[] = [];
      const run = runIdempotently(
        t.database.db,
        scope('each-run'),
        async (trx, record) => {
          const read = record.deferredRead!;
          if (runs.length === 0) {
            read.settle(await keyRecordAfterTurn(trx, read.ask));
            runs.push('read, then redo');
            throw new RedoTransaction();
          }
          runs.push('answered unread');
          return ANSWER;
        },
        { workReadsRecord: true },
      );
      await expect(run).rejects.toThrow('The work wrote or answered before it read its idempotency record.');
      expect(runs).toEqual(['read, then redo', 'answered unread']);
      expect(await recordsOf('each-run')).toEqual([]);
    },
  );

  it('answers with the stored response once it reads one, whatever the work would have done next', async () => {
    const stored = await runIdempotently(t.database.db, scope('read'), async () => ANSWER);
    expect(stored).toEqual(ANSWER);
    let wentOn = false;
    const replay = await runIdempotently(
      t.database.db,
      scope('read'),
      async (trx, record) => {
        const read = record.deferredRead!;
        read.settle(await keyRecordAfterTurn(trx, read.ask));
        wentOn = true;
        return { status: 201, body: { data: 'made again' } };
      },
      { workReadsRecord: true },
    );
    expect(replay).toEqual({ ...ANSWER, replayed: true });
    expect(wentOn).toBe(false);
  });
});

describe('a refusal under a key another request answered meanwhile', () => {
  // The first request's work is refused (a 4xx, stored in a transaction of its own once the work's is
  // rolled back); a second request with the same key and body, queued behind the first one's turn,
  // books in between. The first then finds the second's record where it meant to store its refusal:
  // it answers with that record, as if it had come second, so every request under the key has one
  // answer. (PostgreSQL: the second request's turn is granted before the first asks again.)
  it.runIf(onPostgres).each([false, true])(
    'answers with the record stored meanwhile (work reads the record itself: %s)',
    async (workReadsRecord) => {
      const key = `refused-then-booked-${workReadsRecord}`;
      let second: Promise<StoredResponse> | undefined;
      const first = runIdempotently(
        t.database.db,
        scope(key),
        async (trx, record) => {
          const read = record.deferredRead;
          if (read) read.settle(await keyRecordAfterTurn(trx, read.ask));
          second = runIdempotently(t.database.db, scope(key), async () => ANSWER);
          // Until the second request waits for the key's turn this transaction holds.
          await untilLockWaiters(t.database.db);
          throw new AppError('conflict', 'That time was just taken.');
        },
        { workReadsRecord },
      );
      expect(await first).toEqual({ ...ANSWER, replayed: true });
      expect(await second).toEqual(ANSWER);
      expect(await recordsOf(key)).toHaveLength(1);
    },
  );
});
