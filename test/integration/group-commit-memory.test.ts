import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeTransaction } from '../../src/data/write-transaction.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * A settled group of the group commit (src/data/write-transaction.ts) holds nothing of its units, even
 * while an error thrown in it lives on: an error's stack trace keeps the closures of the frames it
 * passed through, and the group's arrays were among them, so a request holding such an error (a
 * refusal being stored under its idempotency key) kept a whole earlier group alive, whose units held
 * errors of groups before it: the server's heap grew for as long as bookings were refused.
 */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

let t: TempDatabase;

beforeEach(async () => {
  t = await createTempDatabase();
});
afterEach(async () => {
  await t.dispose();
});

describe.skipIf(onPostgres)('group commit memory', () => {
  it('lets the units of a settled group go while an error thrown in it is kept', async () => {
    const { held, unitAnswer, unitData } = await runGroupWithOneFailure(t);
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(held).toBeInstanceOf(Error);
    expect(unitAnswer.deref()).toBeUndefined();
    expect(unitData.deref()).toBeUndefined();
  });
});

/** Runs two units in one group, one failing; keeps only the error and weak references to the other. */
async function runGroupWithOneFailure(database: TempDatabase) {
  const data = { rows: Array.from({ length: 1_000 }, (_, i) => ({ i })) };
  const answer = { booked: true };
  const unitData = new WeakRef(data);
  const unitAnswer = new WeakRef(answer);
  const [, failed] = await Promise.allSettled([
    writeTransaction(database.db, unitAnswering(data, answer)),
    writeTransaction(database.db, failingUnit()),
  ]);
  return { held: (failed as PromiseRejectedResult).reason as Error, unitAnswer, unitData };
}

/** Each unit made in a scope of its own: closures of one scope share what any of them holds. */
function unitAnswering(data: { rows: unknown[] }, answer: object) {
  return async () => (data.rows.length > 0 ? answer : null);
}

function failingUnit() {
  return async (): Promise<never> => {
    throw new Error('slot taken');
  };
}
