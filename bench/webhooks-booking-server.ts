/**
 * The full stack for the webhooks-booking-cost benchmark: the real app (the production wiring of
 * src/runtime.ts, a clock fixed a week before the first slot, no logger) on the two organisations of
 * bench/lib/webhooks-database.ts, one with an endpoint subscribed to booking.created and one with none.
 * No delivery worker runs: the events and their deliveries are written and stay pending. Beside it,
 * on other loopback ports:
 *
 * - a recorded instance: the same app on a second connection to the same database, opened with
 *   openDatabase's onQuery, through which the runner books one request at a time to count the SQL
 *   statements of a booking at each organisation (the measured instance runs without the hook);
 * - a control endpoint: POST {op: 'state'} answers each organisation's bookings, events and pending
 *   deliveries and this process's CPU time; {op: 'census-begin'} and {op: 'census-end'} bracket the
 *   recorded bookings and answer their statements.
 *
 * Runs as a child process: see bench/lib/server-process.ts.
 */
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../src/app/clock.ts';
import { createAppDeps } from '../src/app/deps.ts';
import { openDatabase } from '../src/data/database.ts';
import { buildApp } from '../src/http/build-app.ts';
import { BOOKINGS_SCENARIO } from './lib/bookings-database.ts';
import { serveFromChild } from './lib/child.ts';
import { listenForControl } from './lib/control-server.ts';
import { listenFullStack } from './lib/full-stack.ts';
import {
  createWebhooksDatabase,
  LOOPBACK_POLICY,
  type WebhookOrganisation,
  type WebhooksBenchDatabase,
} from './lib/webhooks-database.ts';

export interface WebhooksBookingInfo {
  /** This process, for the account of where the machine's CPU went. */
  pid: number;
  origin: string;
  /** The recorded instance (every statement noted), for the census. */
  recordedOrigin: string;
  /** POST here: WebhooksBookingControl. */
  controlOrigin: string;
  organisations: WebhooksBenchDatabase['organisations'];
}

export interface OrganisationCounts {
  bookings: number;
  events: number;
  /** Deliveries still pending (all of them: nothing delivers here). */
  pending: number;
}

export interface WebhooksBookingState {
  counts: Record<WebhookOrganisation, OrganisationCounts>;
  /** CPU time (user and system) this process has used so far, in milliseconds. */
  cpuMs: number;
}

export type WebhooksBookingControl = { op: 'state' } | { op: 'census-begin' } | { op: 'census-end' };

/** An address nothing answers on: nothing is delivered here, and the endpoint only has to be valid. */
const NOWHERE = 'http://127.0.0.1:9/hooks';

serveFromChild<null, WebhooksBookingInfo>(async () => {
  const seeded = await createWebhooksDatabase(NOWHERE);
  const { database, organisations } = seeded;
  // Fixed before every slot booked, so each one stays within notice and advance limits.
  const clock = new ManualClock(BOOKINGS_SCENARIO.now);
  const secret = randomBytes(32).toString('base64url');
  const deps = { clock, secret, webhookDestinations: LOOPBACK_POLICY };
  const stack = await listenFullStack(createAppDeps({ db: database.db, ...deps }), () => database.dispose());

  let recording = false;
  const statements: string[] = [];
  const recordedHandle = openDatabase(database.url, {
    onQuery: (text) => {
      if (recording) statements.push(text);
    },
  });
  const recorded = await buildApp(createAppDeps({ db: recordedHandle.db, ...deps }));
  const recordedOrigin = await recorded.listen({ host: '127.0.0.1', port: 0 });

  const counts = async (): Promise<Record<WebhookOrganisation, OrganisationCounts>> => {
    const { db } = database;
    const of = async (organisationId: string): Promise<OrganisationCounts> => {
      const [bookings, events, pending] = await Promise.all([
        db
          .selectFrom('bookings')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('organisation_id', '=', organisationId)
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('webhook_events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('organisation_id', '=', organisationId)
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('organisation_id', '=', organisationId)
          .where('status', '=', 'pending')
          .executeTakeFirstOrThrow(),
      ]);
      return { bookings: Number(bookings.n), events: Number(events.n), pending: Number(pending.n) };
    };
    return { subscribed: await of(organisations.subscribed.id), quiet: await of(organisations.quiet.id) };
  };

  const control = await listenForControl(async (body) => {
    const { op } = body as WebhooksBookingControl;
    if (op === 'state') {
      // Read first: an interval between two readings then holds the counting done at its start, not the
      // counting at its end (the same small cost in every interval).
      const { user, system } = process.cpuUsage();
      const state: WebhooksBookingState = { counts: await counts(), cpuMs: (user + system) / 1000 };
      return state;
    }
    if (op === 'census-begin') {
      statements.length = 0;
      recording = true;
      return {};
    }
    if (op === 'census-end') {
      recording = false;
      return { statements: [...statements] };
    }
    throw new Error(`No control operation ${JSON.stringify(op)}.`);
  });

  return {
    info: {
      pid: process.pid,
      origin: stack.origin,
      recordedOrigin,
      controlOrigin: control.origin,
      organisations,
    },
    close: async () => {
      await control.close();
      await recorded.close();
      await recordedHandle.close();
      await stack.close();
    },
  };
});
