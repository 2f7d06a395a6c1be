import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { customerLinks } from '../../src/app/customer-links.ts';
import { deliverDueMessages, type OutboxDelivery, sendersFor } from '../../src/app/outbox-delivery.ts';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { claimDueMessages } from '../../src/data/outbox-repository.ts';
import { MAX_ATTEMPTS, type OutboxMessage } from '../../src/domain/outbox.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A message no attempt can settle (a provider's answer without the message's id, facts its words
 * cannot be written from, a worker dying on it every time) is settled all the same: never claimed
 * and sent again for ever, its attempts past MAX_ATTEMPTS, while the rest of the outbox goes on.
 */
let t: TestApp;
let ids: CatalogueIds;
let smsRequests = 0;
let twilio: Server;
let delivery: OutboxDelivery;
let day = 0;

beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
  await t.database.db.updateTable('locations').set({ reminder_hours_before: 0 }).execute();
  // A "Twilio" that accepts every message (201) but answers without the message's sid.
  twilio = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      smsRequests += 1;
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => twilio.listen(0, '127.0.0.1', resolve));
  delivery = {
    db: t.database.db,
    clock: t.clock,
    senders: await sendersFor({
      email: null,
      sms: {
        accountSid: 'AC00000000000000000000000000000001',
        authToken: 'stand-in-auth-token',
        from: '+447700900000',
        apiBase: `http://127.0.0.1:${(twilio.address() as AddressInfo).port}`,
      },
    }),
    links: customerLinks(localCheckout, 'https://book.example'),
  };
});
afterAll(async () => {
  await new Promise<void>((resolve) => twilio.close(() => resolve()));
  await t.close();
});

async function book(): Promise<string> {
  day += 1;
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services.cut],
    client_id: ids.jo,
    // Tuesdays, weeks apart: the clock moves on by hours in each test.
    starts_at: `2026-12-${String(1 + 7 * (day - 1)).padStart(2, '0')}T10:00:00+00:00`,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.reference;
}

async function messagesOf(reference: string): Promise<OutboxMessage[]> {
  return (await listOutbox(t.database.db, ids.organisation)).filter((m) => m.reference === reference);
}

async function deliverTimes(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await deliverDueMessages(delivery);
    t.clock.advance({ hours: 2 });
  }
}

it('a text the provider accepted without saying its id is recorded sent, and sent once', async () => {
  const reference = await book();
  const before = smsRequests;
  await deliverTimes(3);
  const sms = (await messagesOf(reference)).find((m) => m.channel === 'sms')!;
  expect(sms).toMatchObject({ status: 'sent', attempts: 1 });
  expect(smsRequests - before).toBe(1);
});

it('a message whose words cannot be written is retried with backoff, then failed', async () => {
  const location = await t.database.db
    .selectFrom('locations')
    .select(['id', 'timezone'])
    .executeTakeFirstOrThrow();
  const reference = await book();
  await t.database.db.updateTable('locations').set({ timezone: 'Nowhere/Atlantis' }).execute();
  try {
    await deliverTimes(MAX_ATTEMPTS + 2);
  } finally {
    await t.database.db.updateTable('locations').set({ timezone: location.timezone }).execute();
  }
  const messages = await messagesOf(reference);
  expect(messages.map((m) => [m.channel, m.status, m.attempts, m.lastError])).toEqual([
    ['sms', 'failed', MAX_ATTEMPTS, 'the message could not be written'],
    ['email', 'failed', MAX_ATTEMPTS, 'the message could not be written'],
  ]);
});

it('a message whose every attempt ended without an outcome is failed, not sent again', async () => {
  const reference = await book();
  // Workers that claimed it and died before recording anything, as often as it may be tried.
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    await claimDueMessages(t.database.db, `dead-${i}`, t.clock.nowMs(), t.clock.nowMs() + 60_000, 16);
    t.clock.advance({ minutes: 2 });
  }
  const before = smsRequests;
  await deliverTimes(2);
  const messages = await messagesOf(reference);
  expect(messages.map((m) => [m.status, m.attempts])).toEqual([
    ['failed', MAX_ATTEMPTS + 1],
    ['failed', MAX_ATTEMPTS + 1],
  ]);
  expect(smsRequests).toBe(before);
});
