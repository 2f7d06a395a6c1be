/**
 * The delivery side of the webhooks-delivery-rate benchmark: the real webhook delivery of
 * src/app/webhooks/delivery.ts with the real sender (httpSender: node's http with keep-alive, 32
 * sockets), to the receiver the runner runs.
 *
 * Asked to `seed` (after setup: it takes a while), it books, through the service layer (createBooking, as POST /v1/bookings does, which
 * publishes booking.created), the batches the runner asks for at the organisation whose endpoint is
 * subscribed (bench/lib/webhooks-database.ts), each batch at a clock one minute later than the one
 * before, so that its deliveries are due from that minute. Then two operations, by POST to the
 * control endpoint:
 *
 * - `deliver` {batch}: sets the clock to the batch's minute and delivers as the worker does, claim by
 *   claim (deliverDueWebhooks, at once again after a full batch, until a batch comes back short: the
 *   cost of claims, attempts and settles; the running worker keeps 64 out, claiming as places free, at
 *   most 16 to one endpoint): exactly that batch is due. It answers the wall time, the outcomes, the
 *   time of each POST and what the deliveries record afterwards.
 * - `raw` {batch}: the baseline. The same POSTs (the batch's event bodies, signed headers) through
 *   the same sender to the receiver's other path, in groups of the worker's batch size, each group
 *   awaited whole as the worker awaits its batch, with no claim and no settle: what the HTTP side alone
 *   allows.
 *
 * Runs as a child process (bench/lib/server-process.ts), so the worker has core 0 to itself while the
 * receiver runs in the runner.
 */
import { createBooking } from '../src/app/booking-service.ts';
import { ManualClock } from '../src/app/clock.ts';
import {
  deliverDueWebhooks,
  type WebhookCounts,
  type WebhookDelivery,
} from '../src/app/webhooks/delivery.ts';
import { httpSender, type WebhookSender } from '../src/app/webhooks/sender.ts';
import { signatureHeader } from '../src/app/webhooks/signature.ts';
import { writeTransaction } from '../src/data/write-transaction.ts';
import { BOOKINGS_SCENARIO, bookingSlot } from './lib/bookings-database.ts';
import { serveFromChild } from './lib/child.ts';
import { listenForControl } from './lib/control-server.ts';
import { createWebhooksDatabase, LOOPBACK_POLICY } from './lib/webhooks-database.ts';

export interface WebhooksDeliveryInit {
  /** The endpoint's URL (the receiver's worker path). */
  endpointUrl: string;
  /** Where the baseline's POSTs go (the receiver's other path). */
  rawUrl: string;
  /** Bookings (events) per batch, in order. */
  batches: number[];
}

export interface WebhooksDeliveryInfo {
  /** This process, for the account of where the machine's CPU went. */
  pid: number;
  /** POST here: WebhooksDeliveryControl. */
  controlOrigin: string;
  /** The endpoint's secret, for the receiver's signature check. */
  secret: string;
  /** Epoch milliseconds of each batch's minute (its events' created_at, the clock of its delivery). */
  minutes: number[];
  /** The worker's batch size (deliverDueWebhooks's default). */
  batchSize: number;
}

export type WebhooksDeliveryControl =
  | { op: 'seed' }
  | { op: 'deliver'; batch: number }
  | { op: 'raw'; batch: number };

export interface WebhooksDeliveryRun {
  batch: number;
  size: number;
  /** Wall time of the pass (or of the baseline's POSTs). */
  seconds: number;
  /** Milliseconds of each POST, from the call to the receiver's whole answer. */
  postTimes: number[];
  maxInFlight: number;
  /** The worker's outcomes (the baseline's: 2xx answers as succeeded). */
  counts: WebhookCounts;
  /** deliverDueWebhooks calls (claims) the pass made. */
  claims: number;
  /** The batch's deliveries afterwards, by status and attempts ("succeeded/1"); none for the baseline. */
  recorded: Record<string, number>;
  /** The ids of the batch's events, which the receiver must have got once each. */
  eventIds: string[];
}

const BATCH_SIZE = 64;
const BOOKING_CONCURRENCY = 16;
const MINUTE = 60_000;

serveFromChild<WebhooksDeliveryInit, WebhooksDeliveryInfo>(async (init) => {
  const seeded = await createWebhooksDatabase(init.endpointUrl);
  const { database, organisations, apiKeyId } = seeded;
  const { db } = database;
  const organisation = organisations.subscribed;
  const clock = new ManualClock(BOOKINGS_SCENARIO.now);
  const minutes = init.batches.map((_, batch) => seeded.now + (batch + 1) * MINUTE);

  let postTimes: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const sender = httpSender(LOOPBACK_POLICY);
  const timed: WebhookSender = {
    async post(url, headers, body) {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const start = performance.now();
      try {
        return await sender.post(url, headers, body);
      } finally {
        postTimes.push(performance.now() - start);
        inFlight -= 1;
      }
    },
    close: () => sender.close(),
  };
  const delivery: WebhookDelivery = { db, clock, sender: timed, batchSize: BATCH_SIZE };

  let nextSlot = 0;
  const seed = async () => {
    for (const [batch, size] of init.batches.entries()) {
      let left = size;
      const booker = async () => {
        while (left > 0) {
          left -= 1;
          const slot = bookingSlot(nextSlot++);
          await writeTransaction(db, (trx) =>
            createBooking(
              trx,
              {
                organisationId: organisation.id,
                currency: 'GBP',
                referencePrefix: 'SS',
                actor: `api_key:${apiKeyId}`,
                source: 'api',
              },
              {
                locationSlug: BOOKINGS_SCENARIO.location,
                serviceIds: [organisation.serviceId],
                staffId: organisation.staffIds[slot.staff],
                clientId: organisation.clientId,
                startsAt: slot.startsAt,
              },
              minutes[batch]!,
              { payments: null, publicBaseUrl: 'http://127.0.0.1' },
            ),
          );
        }
      };
      await Promise.all(Array.from({ length: BOOKING_CONCURRENCY }, booker));
    }
  };

  const eventsOf = (batch: number) =>
    db
      .selectFrom('webhook_events')
      .select(['seq', 'id', 'type', 'payload'])
      .where('organisation_id', '=', organisation.id)
      .where('created_at', '=', minutes[batch]!)
      .orderBy('seq')
      .execute();

  const run = async (op: Exclude<WebhooksDeliveryControl, { op: 'seed' }>): Promise<WebhooksDeliveryRun> => {
    const size = init.batches[op.batch];
    if (size === undefined) throw new Error(`No batch ${op.batch}.`);
    clock.set(new Date(minutes[op.batch]!).toISOString());
    // Read before timing: the baseline sends these bodies, the check below counts their deliveries.
    const events = await eventsOf(op.batch);
    postTimes = [];
    maxInFlight = 0;
    const counts: WebhookCounts = { succeeded: 0, retried: 0, failed: 0 };
    let claims = 0;
    const start = performance.now();
    if (op.op === 'deliver') {
      // The worker's claims, batch after batch while they come back full.
      for (;;) {
        const pass = await deliverDueWebhooks(delivery);
        claims += 1;
        counts.succeeded += pass.succeeded;
        counts.retried += pass.retried;
        counts.failed += pass.failed;
        if (pass.succeeded + pass.retried + pass.failed < BATCH_SIZE) break;
      }
    } else {
      for (let from = 0; from < events.length; from += BATCH_SIZE) {
        await Promise.all(
          events.slice(from, from + BATCH_SIZE).map(async (event) => {
            const headers = {
              'content-type': 'application/json',
              'user-agent': 'booking-webhooks/1',
              'booking-event-id': event.id,
              'booking-event-type': event.type,
              'booking-delivery-attempt': '1',
              'booking-signature': signatureHeader(
                seeded.endpoint.secret,
                event.payload,
                Math.floor(clock.nowMs() / 1000),
              ),
            };
            const result = await timed.post(init.rawUrl, headers, event.payload);
            const ok = 'status' in result && result.status >= 200 && result.status < 300;
            counts[ok ? 'succeeded' : 'failed'] += 1;
          }),
        );
      }
    }
    const seconds = (performance.now() - start) / 1000;
    const recorded: Record<string, number> = {};
    if (op.op === 'deliver') {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select(['status', 'attempts', (eb) => eb.fn.countAll<number>().as('n')])
        .where('organisation_id', '=', organisation.id)
        .where('created_at', '=', minutes[op.batch]!)
        .groupBy(['status', 'attempts'])
        .execute();
      for (const row of rows) recorded[`${row.status}/${row.attempts}`] = Number(row.n);
    }
    return {
      batch: op.batch,
      size,
      seconds,
      postTimes,
      maxInFlight,
      counts,
      claims,
      recorded,
      eventIds: events.map((e) => e.id),
    };
  };

  const control = await listenForControl(async (body) => {
    const op = body as WebhooksDeliveryControl;
    if (op.op !== 'seed') return run(op);
    await seed();
    return {};
  });
  return {
    info: {
      pid: process.pid,
      controlOrigin: control.origin,
      secret: seeded.endpoint.secret,
      minutes,
      batchSize: BATCH_SIZE,
    },
    close: async () => {
      await control.close();
      sender.close();
      await database.dispose();
    },
  };
});
