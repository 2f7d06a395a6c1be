/**
 * The delivery side of the outbox benchmark: the real delivery of src/app/outbox-delivery.ts
 * (deliverAllDue: claim a batch of due messages, render each, send it with the provider, record the
 * outcome; batch after batch until nothing is due) with the real providers of sendersFor (nodemailer
 * for e-mail, the twilio package for SMS), pointed at the stand-ins the parent runs.
 *
 * At setup it books, through the service layer (createBooking, as POST /v1/bookings does), the
 * batches the parent asks for: each batch for one client of bench/lib/outbox-database.ts reached by
 * one channel only, so a batch's confirmations are messages of one channel, and each batch at a clock
 * one minute later than the one before, so its confirmations are due from that minute (the reminders
 * are due a day before each start, in 2031: never during the run). POST /deliver {"batch": k} sets the
 * clock to batch k's minute and delivers everything due: exactly that batch, as the earlier ones are
 * sent. It answers with the time taken, the outcome counts, the time of each provider call and what
 * the outbox records of each of the batch's messages afterwards. Runs as a child process
 * (bench/lib/server-process.ts), so the worker has core 0 to itself while the stand-ins run in the
 * parent.
 */
import { createBooking } from '../src/app/booking-service.ts';
import { ManualClock } from '../src/app/clock.ts';
import { customerLinks } from '../src/app/customer-links.ts';
import type { MessageSender, TwilioSettings } from '../src/app/message-sender.ts';
import {
  type DeliveryCounts,
  deliverAllDue,
  type OutboxDelivery,
  sendersFor,
} from '../src/app/outbox-delivery.ts';
import { writeTransaction } from '../src/data/write-transaction.ts';
import type { OutboxChannel } from '../src/domain/outbox.ts';
import { BOOKINGS_SCENARIO, bookingSlot } from './lib/bookings-database.ts';
import { serveFromChild } from './lib/child.ts';
import { listenForControl } from './lib/control-server.ts';
import { createOutboxDatabase } from './lib/outbox-database.ts';

export interface DeliveryInit {
  smtpUrl: string;
  mailFrom: string;
  sms: TwilioSettings;
  /** The batches to book, in order: each this many bookings for the client of that channel. */
  batches: { channel: OutboxChannel; size: number }[];
}

export interface DeliveryInfo {
  /** POST /deliver here. */
  origin: string;
}

export interface DeliveryRun {
  channel: OutboxChannel;
  /** Messages of the batch (its confirmations). */
  size: number;
  /** Wall time of deliverAllDue. */
  seconds: number;
  counts: DeliveryCounts;
  /** Milliseconds of each provider call (sender.send), from the call to the provider's acceptance. */
  sendTimes: number[];
  /** The batch's messages as the outbox records them afterwards. */
  messages: { id: string; status: string; attempts: number; providerId: string | null }[];
  /** The most provider calls that were in flight at once. */
  maxInFlight: number;
  /** Messages still due at the batch's minute afterwards (none when delivery is done). */
  stillDue: number;
}

const BOOKING_CONCURRENCY = 16;
const MINUTE = 60_000;

serveFromChild<DeliveryInit, DeliveryInfo>(async (init) => {
  const seeded = await createOutboxDatabase();
  const { database, organisationId, serviceId, staffIds, clientIds, apiKeyId } = seeded;
  const { db } = database;
  const clock = new ManualClock(BOOKINGS_SCENARIO.now);
  const minuteOf = (batch: number) => seeded.now + (batch + 1) * MINUTE;
  const clientOf = { sms: clientIds.texted, email: clientIds.mailed } as const;

  let nextSlot = 0;
  for (const [batch, { channel, size }] of init.batches.entries()) {
    const now = minuteOf(batch);
    let left = size;
    const booker = async () => {
      while (left > 0) {
        left -= 1;
        const slot = bookingSlot(nextSlot++);
        await writeTransaction(db, (trx) =>
          createBooking(
            trx,
            {
              organisationId,
              currency: 'GBP',
              referencePrefix: 'SS',
              actor: `api_key:${apiKeyId}`,
              source: 'api',
            },
            {
              locationSlug: BOOKINGS_SCENARIO.location,
              serviceIds: [serviceId],
              staffId: staffIds[slot.staff],
              clientId: clientOf[channel],
              startsAt: slot.startsAt,
            },
            now,
            { payments: null, publicBaseUrl: 'http://127.0.0.1' },
          ),
        );
      }
    };
    await Promise.all(Array.from({ length: BOOKING_CONCURRENCY }, booker));
  }

  let sendTimes: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const timed = (sender: MessageSender | null): MessageSender | null =>
    sender && {
      async send(message) {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const start = performance.now();
        try {
          const accepted = await sender.send(message);
          sendTimes.push(performance.now() - start);
          return accepted;
        } finally {
          inFlight -= 1;
        }
      },
      close: () => sender.close?.(),
    };
  const senders = await sendersFor({
    email: { smtpUrl: init.smtpUrl, mailFrom: init.mailFrom },
    sms: init.sms,
  });
  const delivery: OutboxDelivery = {
    db,
    clock,
    senders: { email: timed(senders.email), sms: timed(senders.sms) },
    links: customerLinks(null, 'http://127.0.0.1'),
  };

  const deliver = async (batch: number): Promise<DeliveryRun> => {
    const planned = init.batches[batch];
    if (!planned) throw new Error(`No batch ${batch}.`);
    const at = minuteOf(batch);
    clock.set(new Date(at).toISOString());
    sendTimes = [];
    maxInFlight = 0;
    const start = performance.now();
    const counts = await deliverAllDue(delivery);
    const seconds = (performance.now() - start) / 1000;
    const messages = await db
      .selectFrom('outbox')
      .select(['id', 'status', 'attempts', 'provider_id as providerId'])
      .where('kind', '=', 'confirmed')
      .where('created_at', '=', at)
      .execute();
    const due = await db
      .selectFrom('outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .where('due_at', '<=', at)
      .executeTakeFirstOrThrow();
    return {
      channel: planned.channel,
      size: planned.size,
      seconds,
      counts,
      sendTimes,
      maxInFlight,
      messages,
      stillDue: Number(due.n),
    };
  };

  const control = await listenForControl((body: unknown) => deliver((body as { batch: number }).batch));
  return {
    info: { origin: control.origin },
    close: async () => {
      await control.close();
      delivery.senders.email?.close?.();
      await database.dispose();
    },
  };
});
