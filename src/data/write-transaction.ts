import { sql } from 'kysely';
import { type Db, dialectOf, SQLITE_BUSY_TIMEOUT_MS } from './db.ts';

/** A unit of work that needs the write lock: everything it writes commits together or not at all. */
export type WriteWork<T> = (trx: Db) => Promise<T>;

/**
 * Runs `work` in a write transaction of its own, as far as anything it can observe goes: it sees what
 * committed before it, and its writes commit whole or not at all.
 *
 * On a database opened with group commit (embedded SQLite, see `enableGroupCommit`), units of work
 * that arrive in the same turn of the event loop share one transaction, each inside a savepoint of
 * its own; otherwise this is a plain transaction.
 */
export function writeTransaction<T>(db: Db, work: WriteWork<T>, options: WriteOptions = {}): Promise<T> {
  const durable = options.durable ?? true;
  const waits = options.waitsForLock ?? true;
  const group = groups.get(db);
  if (group) return group.run(work, durable, waits);
  if (dialectOf(db) === 'postgres') return redoneWhileAsked(() => db.transaction().execute(work));
  return durable ? db.transaction().execute(work) : lazilySynced(db, work, waits);
}

/**
 * Thrown by a unit of work whose transaction ended, at a statement that carried its COMMIT
 * (postgres-transaction-edges.ts), without the write that statement was for, and with nothing the work
 * needs written (a booking's reference was taken already: insertNewBooking). writeTransaction runs the
 * work again, from its start, in a new transaction.
 */
export class RedoTransaction extends Error {
  constructor() {
    super('The transaction ended before its work was done; it is run again.');
  }
}

/** How many times a unit of work runs at most while it asks to be redone: references are rarely taken. */
const MAX_RUNS = 5;

async function redoneWhileAsked<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof RedoTransaction) || attempt >= MAX_RUNS) throw error;
    }
  }
}

/** WriteOptions for bookkeeping that is done again if a power cut undoes it (durable false). */
export const REDONE_IF_LOST: WriteOptions = { durable: false };

/**
 * WriteOptions for bookkeeping a request may go without (a key's last use): not synced, and on SQLite
 * given up at once while another process holds the write lock (waitsForLock false).
 */
export const SKIPPED_IF_BUSY: WriteOptions = { durable: false, waitsForLock: false };

export interface WriteOptions {
  /**
   * false: bookkeeping that is done again if lost, such as claiming an outbox message or a webhook
   * delivery and recording how it went (delivery is at least once). On SQLite its COMMIT does not wait
   * for the disk (synchronous NORMAL for that transaction): a crash of the process keeps it, a power
   * cut may undo it. WAL is written in order, so the next durable commit's sync covers it too, and
   * nothing durable ever depends on it. A booking then costs one disk sync, not three (issue 47).
   * Default true.
   */
  durable?: boolean;
  /**
   * false, with durable false: on SQLite, fail at once (SQLITE_BUSY) while another process holds the
   * write lock, instead of waiting up to busy_timeout, 5 s, in which better-sqlite3 holds up the whole
   * process (every request it serves, every MCP call). Waits all the same when it shares its group with
   * a unit that waits. Default true.
   */
  waitsForLock?: boolean;
}

/**
 * `work` in a transaction whose COMMIT does not sync (WriteOptions.durable false). The connection is
 * held throughout, so no other statement runs between the pragma and its reset.
 */
function lazilySynced<T>(db: Db, work: WriteWork<T>, waitsForLock = true): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`pragma synchronous = NORMAL`.execute(connection);
    if (!waitsForLock) await sql`pragma busy_timeout = 0`.execute(connection);
    try {
      return await connection.transaction().execute(work);
    } finally {
      // The wait back first: a connection left not waiting would refuse every write while another
      // process writes.
      if (!waitsForLock) await sql.raw(`pragma busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`).execute(connection);
      await sql`pragma synchronous = FULL`.execute(connection);
    }
  });
}

/**
 * A write of exactly one statement, as a unit of work of its own. On PostgreSQL a statement is atomic
 * by itself, so it runs as it is: BEGIN and COMMIT around it would only add two round trips. On SQLite
 * it goes through writeTransaction like any other write (group commit shares the one writer's
 * transaction and its disk sync). `work` must run one statement, no more.
 */
export function writeStatement<T>(db: Db, work: WriteWork<T>, options: WriteOptions = {}): Promise<T> {
  return dialectOf(db) === 'postgres' ? work(db) : writeTransaction(db, work, options);
}

/**
 * Group commit for an embedded database with a single writer connection.
 *
 * With `synchronous = FULL` every COMMIT waits for the disk, and that wait, not the work, bounds how
 * many bookings a second one process can take. Units of work that are queued while the connection is
 * busy (callers on other keep-alive connections, arriving in the same turn of the event loop) run one
 * after another in one transaction, each in a savepoint, and the transaction commits once: one disk
 * sync for the whole group. A unit that fails rolls back to its savepoint, so the others are
 * untouched; each caller hears about its own unit only after the COMMIT, so nobody is told "booked"
 * before it is on disk. If the COMMIT fails, every unit in the group fails with it (those that failed
 * on their own too) and nothing of any of them is written.
 *
 * The units still run strictly one after another, each seeing the writes of those before it, exactly
 * as separate transactions would: the availability re-check of one booking sees the booking before it.
 */
export function enableGroupCommit(db: Db, maxGroupSize = 64): void {
  groups.set(db, new GroupCommit(db, maxGroupSize));
}

const groups = new WeakMap<Db, GroupCommit>();

interface QueuedWork {
  work: WriteWork<unknown>;
  durable: boolean;
  waits: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

class GroupCommit {
  readonly #db: Db;
  readonly #maxGroupSize: number;
  #queue: QueuedWork[] = [];
  /** A flush is scheduled or running; new work waits for the next one. */
  #busy = false;

  constructor(db: Db, maxGroupSize: number) {
    this.#db = db;
    this.#maxGroupSize = maxGroupSize;
  }

  run<T>(work: WriteWork<T>, durable: boolean, waits: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, durable, waits, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#busy) this.#schedule();
    });
  }

  /**
   * setImmediate runs after the I/O callbacks of the current turn, so every request that turn read
   * off its socket has queued its work by the time the group starts.
   */
  #schedule(): void {
    this.#busy = true;
    setImmediate(() => void this.#flush());
  }

  async #flush(): Promise<void> {
    const group = this.#queue.splice(0, this.#maxGroupSize);
    const outcomes = await this.#commit(group);
    for (const [index, item] of group.entries()) {
      const outcome = outcomes[index]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    }
    // An error thrown in the group keeps, in its stack trace, the closures of the frames it passed
    // through, and with them these two arrays. Emptied, they hold nothing of the group once it has
    // settled: else a unit queued later that holds such an error (a refusal stored under its
    // idempotency key) kept this whole group alive, whose units held errors of earlier groups, and so
    // on back: the mixed load's server grew 0.4 MB of heap a second.
    group.length = 0;
    outcomes.length = 0;
    if (this.#queue.length > 0) this.#schedule();
    else this.#busy = false;
  }

  /** One transaction for the group; the outcome of each unit, all failed if the transaction did. */
  async #commit(group: readonly QueuedWork[]): Promise<Outcome[]> {
    // The group's COMMIT syncs when any of its units must be durable (WriteOptions).
    const transaction = <T>(work: WriteWork<T>) =>
      group.some((item) => item.durable)
        ? this.#db.transaction().execute(work)
        : lazilySynced(
            this.#db,
            work,
            group.some((item) => item.waits),
          );
    // A lone unit needs no savepoint: its failure rolls back the transaction, which holds only it.
    if (group.length === 1) {
      try {
        return [{ ok: true, value: await transaction(group[0]!.work) }];
      } catch (error) {
        return [{ ok: false, error }];
      }
    }
    const outcomes: Outcome[] = [];
    try {
      await transaction(async (trx) => {
        for (const item of group) outcomes.push(await inSavepoint(trx, item.work));
      });
      return outcomes;
    } catch (error) {
      // The COMMIT (or a savepoint's rollback) failed: nothing of the group was written, so every unit
      // hears that, a unit that failed on its own too. Its own failure may rest on what a unit before
      // it wrote (a replay of that unit's answer under their idempotency key, a slot that unit took),
      // which now never was: told as it stood, a replay would answer 201 for a booking not written.
      return group.map(() => ({ ok: false, error }));
    }
  }
}

async function inSavepoint(trx: Db, work: WriteWork<unknown>): Promise<Outcome> {
  await sql`savepoint unit_of_work`.execute(trx);
  try {
    const value = await work(trx);
    await sql`release unit_of_work`.execute(trx);
    return { ok: true, value };
  } catch (error) {
    try {
      await sql`rollback to unit_of_work`.execute(trx);
      await sql`release unit_of_work`.execute(trx);
    } catch {
      // The transaction is broken (SQLite may already have rolled it back, on a full disk say): the
      // unit's own error, the real cause, ends the whole group.
      throw error;
    }
    return { ok: false, error };
  }
}
