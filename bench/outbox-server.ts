/**
 * The full stack for the outbox benchmark's bookings phase: the bookings-endpoint server (the real app
 * with the production wiring of src/runtime.ts, a clock fixed a week before the first slot, no logger)
 * on the outbox database of bench/lib/outbox-database.ts, whose clients decide how many outbox rows a
 * booking writes. Beside it, on another loopback port, GET /state tells the parent how many bookings
 * and outbox rows each client has and how much CPU time this process has used, so the benchmark can
 * check what each side wrote and what each cost the server. Runs as a child process: see
 * bench/lib/server-process.ts.
 */
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../src/app/clock.ts';
import { createAppDeps } from '../src/app/deps.ts';
import { BOOKINGS_SCENARIO } from './lib/bookings-database.ts';
import { serveFromChild } from './lib/child.ts';
import { listenForControl } from './lib/control-server.ts';
import { listenFullStack } from './lib/full-stack.ts';
import { createOutboxDatabase, type OutboxBenchDatabase } from './lib/outbox-database.ts';

export interface OutboxStackInfo {
  /** This process, for the benchmark's account of where the machine's CPU went. */
  pid: number;
  origin: string;
  /** GET /state here answers OutboxState. */
  stateOrigin: string;
  writeKey: string;
  serviceId: string;
  clientIds: OutboxBenchDatabase['clientIds'];
  /** Staff ids by index, as bookingSlot numbers them. */
  staffIds: string[];
}

/** Per client id: its bookings, and the outbox rows of its bookings. */
export type OutboxCounts = Record<string, { bookings: number; outbox: number }>;

export interface OutboxState {
  counts: OutboxCounts;
  /** CPU time (user and system) this process has used so far, in milliseconds. */
  cpuMs: number;
}

serveFromChild<null, OutboxStackInfo>(async () => {
  const seeded = await createOutboxDatabase();
  const { database, writeKey, serviceId, clientIds, staffIds } = seeded;
  const deps = createAppDeps({
    db: database.db,
    // Fixed before every slot booked, so each one stays within notice and advance limits.
    clock: new ManualClock(BOOKINGS_SCENARIO.now),
    secret: randomBytes(32).toString('base64url'),
  });
  const stack = await listenFullStack(deps, () => database.dispose());

  const counts = async (): Promise<OutboxCounts> => {
    const { db } = database;
    const bookings = await db
      .selectFrom('bookings')
      .select(['client_id', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('client_id')
      .execute();
    const outbox = await db
      .selectFrom('outbox as o')
      .innerJoin('bookings as b', (join) =>
        join.onRef('b.organisation_id', '=', 'o.organisation_id').onRef('b.id', '=', 'o.booking_id'),
      )
      .select(['b.client_id', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('b.client_id')
      .execute();
    const result: OutboxCounts = {};
    for (const id of Object.values(clientIds)) {
      result[id] = {
        bookings: Number(bookings.find((b) => b.client_id === id)?.n ?? 0),
        outbox: Number(outbox.find((o) => o.client_id === id)?.n ?? 0),
      };
    }
    return result;
  };
  const control = await listenForControl(async () => {
    // Read first: an interval between two readings then holds the counting done at its start, not the
    // counting at its end (the same small cost in every interval).
    const { user, system } = process.cpuUsage();
    const state: OutboxState = { counts: await counts(), cpuMs: (user + system) / 1000 };
    return state;
  });
  return {
    info: {
      pid: process.pid,
      origin: stack.origin,
      stateOrigin: control.origin,
      writeKey,
      serviceId,
      clientIds,
      staffIds,
    },
    close: async () => {
      await control.close();
      await stack.close();
    },
  };
});
