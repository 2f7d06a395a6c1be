/**
 * The outbox's figures (issue 18), run on its own: `node --import tsx bench/outbox.ts [bookings]`.
 *
 * 1. POST /v1/bookings through the whole stack (in process, app.inject), 16 requests in flight, for a
 *    client with a phone and an e-mail: each booking writes four outbox rows (confirmed and reminder, by
 *    SMS and e-mail) in its one INSERT. The "without" side is the same script run in a copy of the tree
 *    before the outbox (git archive of the parent commit), alternately with this one.
 * 2. Delivery throughput: the messages those bookings made that are due now (two per booking), by one
 *    worker, through nodemailer to a real SMTP server and the twilio package to the HTTP stand-in for
 *    Twilio, both in this process.
 */
import { existsSync } from 'node:fs';
import { ManualClock } from '../src/app/clock.ts';
import { createAppDeps } from '../src/app/deps.ts';
import { buildApp } from '../src/http/build-app.ts';
import { startSmtpSink, startTwilioStandIn } from '../test/helpers/message-sinks.ts';
import { bookingSlot, createBookingsDatabase } from './lib/bookings-database.ts';

const BOOKINGS = Number(process.argv[2] ?? 2000);
const IN_FLIGHT = 16;

const seeded = await createBookingsDatabase();
const { db } = seeded.database;
const clock = new ManualClock(new Date(seeded.now).toISOString());
const deps = createAppDeps({
  db,
  clock,
  secret: 'bench',
  limits: { requestsPerMinute: 1e9, failedAuthPerMinute: 1e9 },
});
const app = await buildApp(deps);
await app.ready();

let next = 0;
/** Books `count` slots, IN_FLIGHT requests at a time; the time it took in ms. */
async function book(count: number): Promise<number> {
  const start = performance.now();
  let left = count;
  const worker = async () => {
    while (left > 0) {
      left -= 1;
      const slot = bookingSlot(next++);
      const response = await app.inject({
        method: 'POST',
        url: '/v1/bookings',
        headers: { authorization: `Bearer ${seeded.writeKey}` },
        payload: {
          location_slug: 'islington',
          service_ids: [seeded.serviceId],
          staff_id: seeded.staffIds[slot.staff],
          client_id: seeded.clientId,
          starts_at: slot.startsAtIso,
        },
      });
      if (response.statusCode !== 201)
        throw new Error(`POST /v1/bookings: ${response.statusCode} ${response.body}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return performance.now() - start;
}

await book(200);
const ms = await book(BOOKINGS);
process.stdout.write(
  `POST /v1/bookings, SQLite, ${IN_FLIGHT} in flight, ${BOOKINGS} bookings: ${((BOOKINGS / ms) * 1000).toFixed(0)} bookings/s\n`,
);

// The tree before the outbox (the "without" side) has no delivery to measure.
if (!existsSync(new URL('../src/app/outbox-delivery.ts', import.meta.url))) process.exit(0);
const { customerLinks } = await import('../src/app/customer-links.ts');
const { deliverAllDue, sendersFor } = await import('../src/app/outbox-delivery.ts');
const rows = await db
  .selectFrom('outbox')
  .select((eb) => eb.fn.countAll<number>().as('n'))
  .executeTakeFirstOrThrow();
process.stdout.write(`outbox rows written: ${rows.n}\n`);
const smtp = await startSmtpSink();
const twilio = await startTwilioStandIn();
const delivery = {
  db,
  clock,
  senders: await sendersFor({
    email: { smtpUrl: smtp.url, mailFrom: 'bench@example.com' },
    sms: {
      accountSid: twilio.accountSid,
      authToken: twilio.authToken,
      from: '+447700900000',
      apiBase: twilio.base,
    },
  }),
  links: customerLinks(null, 'http://localhost'),
};
const started = performance.now();
const counts = await deliverAllDue(delivery);
const seconds = (performance.now() - started) / 1000;
const delivered = counts.sent;
process.stdout.write(
  `Delivery, one worker (batches of 16 sent concurrently): ${delivered} messages (${smtp.accepted.size} e-mails, ${twilio.accepted.size} SMS) in ${seconds.toFixed(1)} s: ${(delivered / seconds).toFixed(0)} messages/s; failed ${counts.failed}, retried ${counts.retried}\n`,
);
delivery.senders.email?.close?.();
await smtp.close();
await twilio.close();
await app.close();
await seeded.database.dispose();
