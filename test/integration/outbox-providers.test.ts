import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { customerLinks } from '../../src/app/customer-links.ts';
import { smtpSender } from '../../src/app/email-sender.ts';
import {
  deliverAllDue,
  deliverDueMessages,
  type OutboxDelivery,
  sendersFor,
} from '../../src/app/outbox-delivery.ts';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { MAX_ATTEMPTS, MAX_SMS_SEGMENTS, type OutboxMessage, smsSegments } from '../../src/domain/outbox.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import {
  type SmtpSink,
  startSmtpSink,
  startTricklingSmtp,
  startTwilioStandIn,
  type TwilioStandIn,
} from '../helpers/message-sinks.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Delivery through the real provider packages to real servers on this machine: nodemailer to an SMTP
 * server (smtp-server), the twilio package to an HTTP stand-in for Twilio's Messages API that checks
 * the form and the basic auth. Outages are retried with backoff, final refusals fail at once, and no
 * reason stored or reported carries the recipient.
 */
let t: TestApp;
let ids: CatalogueIds;
let smtp: SmtpSink;
let twilio: TwilioStandIn;
let delivery: OutboxDelivery;
const failures: { reason: string; final: boolean }[] = [];
const MAIL_FROM = 'Acme Hair <bookings@acme.example>';
let booked = 0;

beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
  // No reminders here: the tests step the clock by hours and count only the messages they cause.
  await t.database.db.updateTable('locations').set({ reminder_hours_before: 0 }).execute();
  smtp = await startSmtpSink({ user: 'mailer', pass: 's3cret' });
  twilio = await startTwilioStandIn();
  delivery = {
    db: t.database.db,
    clock: t.clock,
    senders: await sendersFor({
      email: { smtpUrl: smtp.url, mailFrom: MAIL_FROM },
      sms: {
        accountSid: twilio.accountSid,
        authToken: twilio.authToken,
        from: '+447700900000',
        apiBase: twilio.base,
      },
    }),
    links: customerLinks(localCheckout, 'https://book.example'),
    onAttemptFailed: (event) => failures.push(event),
  };
});
afterAll(async () => {
  delivery.senders.email?.close?.();
  await smtp.close();
  await twilio.close();
  await t.close();
});
beforeEach(() => {
  t.clock.set('2026-11-23T09:00:00Z');
});

async function clientWith(contact: { phone?: string; email?: string }): Promise<string> {
  const response = await t.request({
    method: 'POST',
    url: '/v1/clients',
    payload: { first_name: 'Sam', last_name: 'Lee', ...contact },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.id;
}

/** A confirmed Cut with Ana on a Tuesday, an hour of its own (from 10:00 to 16:00). */
async function book(clientId: string): Promise<string> {
  const date = ['2026-11-24', '2026-12-01'][Math.floor(booked / 7)];
  const hour = 10 + (booked % 7);
  booked += 1;
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services.cut],
    client_id: clientId,
    starts_at: `${date}T${hour}:00:00+00:00`,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.reference;
}

async function messagesOf(reference: string): Promise<OutboxMessage[]> {
  return (await listOutbox(t.database.db, ids.organisation)).filter(
    (m) => m.reference === reference && m.kind !== 'reminder',
  );
}

describe('delivery through the providers', () => {
  it('sends the e-mail over SMTP and the SMS through Twilio, once', async () => {
    const reference = await book(ids.jo);
    const counts = await deliverAllDue(delivery);
    expect(counts).toMatchObject({ sent: 2, failed: 0, retried: 0 });
    const messages = await messagesOf(reference);
    expect(messages.map((m) => `${m.channel}:${m.status}:${m.attempts}`).sort()).toEqual([
      'email:sent:1',
      'sms:sent:1',
    ]);
    const emailMessage = messages.find((m) => m.channel === 'email')!;
    const received = smtp.accepted.get(`<${emailMessage.id}@booking-engine.outbox>`)!;
    expect(received.to).toEqual(['jo@example.com']);
    expect(received.from).toBe('bookings@acme.example');
    expect(received.raw).toMatch(/^Subject: Org acme-hair: Your booking is confirmed/m);
    // MAIL_FROM's address, the organisation's name (issue 44): not MAIL_FROM's "Acme Hair" for everyone.
    expect(received.raw).toMatch(/^From: "Org acme-hair" <bookings@acme\.example>$/m);
    expect(received.raw).toContain('text/plain');
    expect(received.raw).toContain('text/html');

    const smsMessage = messages.find((m) => m.channel === 'sms')!;
    const request = twilio.accepted.get(smsMessage.id)!;
    expect(request).toMatchObject({ to: '+447911123456', from: '+447700900000' });
    expect(request.body).toContain(`Ref ${reference}`);
    expect(smsSegments(request.body)).toBeLessThanOrEqual(MAX_SMS_SEGMENTS);
    expect(twilio.malformed).toEqual([]);

    // Delivered is delivered: another pass sends nothing again.
    const before = twilio.requests.length + smtp.received.length;
    expect((await deliverAllDue(delivery)).sent).toBe(0);
    expect(twilio.requests.length + smtp.received.length).toBe(before);
  });

  it('retries an outage with exponential backoff, then sends', async () => {
    const client = await clientWith({ phone: '+447911123457' });
    const reference = await book(client);
    twilio.failNext(2);
    expect(await deliverAllDue(delivery)).toMatchObject({ retried: 1, sent: 0 });
    let [sms] = await messagesOf(reference);
    expect(sms).toMatchObject({ status: 'pending', attempts: 1, dueAt: t.clock.nowMs() + 30_000 });
    expect(sms!.lastError).toMatch(/^Twilio HTTP 503/);
    // Not due before its time.
    expect(await deliverAllDue(delivery)).toMatchObject({ retried: 0, sent: 0 });
    t.clock.advance({ seconds: 30 });
    await deliverAllDue(delivery);
    [sms] = await messagesOf(reference);
    expect(sms).toMatchObject({ status: 'pending', attempts: 2, dueAt: t.clock.nowMs() + 60_000 });
    t.clock.advance({ seconds: 60 });
    await deliverAllDue(delivery);
    [sms] = await messagesOf(reference);
    expect(sms).toMatchObject({ status: 'sent', attempts: 3 });
  });

  it(`fails after ${MAX_ATTEMPTS} attempts of an outage, with the provider's reason`, async () => {
    const client = await clientWith({ phone: '+447911123458' });
    const reference = await book(client);
    twilio.failNext(1000);
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        await deliverAllDue(delivery);
        t.clock.advance({ hours: 1 });
      }
    } finally {
      twilio.failNext(0);
    }
    const [sms] = await messagesOf(reference);
    expect(sms).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS });
    expect(sms!.lastError).toMatch(/^Twilio HTTP 503 code 20500: Service unavailable/);
  });

  it('fails a final refusal at once, and no reason carries the recipient', async () => {
    const client = await clientWith({ phone: '+447911120000', email: 'reject-me@example.com' });
    const reference = await book(client);
    failures.length = 0;
    expect(await deliverAllDue(delivery)).toMatchObject({ failed: 2 });
    const messages = await messagesOf(reference);
    expect(messages.map((m) => `${m.channel}:${m.status}:${m.attempts}`).sort()).toEqual([
      'email:failed:1',
      'sms:failed:1',
    ]);
    const reasons = [...messages.map((m) => m.lastError!), ...failures.map((f) => f.reason)];
    expect(reasons.find((r) => r.startsWith('Twilio'))).toMatch(/^Twilio HTTP 400 code 21211/);
    expect(reasons.find((r) => r.startsWith('SMTP'))).toMatch(/550|rejected/i);
    for (const reason of reasons) {
      expect(reason).not.toContain('1120000');
      expect(reason).not.toContain('reject-me');
    }
    expect(failures.every((f) => f.final)).toBe(true);
  });
});

describe('credentials the provider refuses', () => {
  /** The delivery as a server started with TWILIO_AUTH_TOKEN set to `authToken` would run it. */
  const withTwilioToken = async (authToken: string) => ({
    ...delivery,
    senders: await sendersFor({
      email: null,
      sms: { accountSid: twilio.accountSid, authToken, from: '+447700900000', apiBase: twilio.base },
    }),
  });

  it('retries an SMS refused for bad credentials (401) until the token is mended, then sends it', async () => {
    const reference = await book(await clientWith({ phone: '+447911123471' }));
    const mistyped = await withTwilioToken('mistyped-token');
    failures.length = 0;
    expect(await deliverAllDue(mistyped)).toMatchObject({ retried: 1, failed: 0 });
    const [sms] = await messagesOf(reference);
    expect(sms).toMatchObject({ status: 'pending', attempts: 1, dueAt: t.clock.nowMs() + 30_000 });
    expect(sms!.lastError).toMatch(/^Twilio HTTP 401\b.*credentials were refused/);
    expect(sms!.lastError).not.toContain('1123471');
    expect(failures).toMatchObject([{ final: false }]);
    twilio.malformed.length = 0;
    // The operator mends TWILIO_AUTH_TOKEN and restarts: the next try goes.
    t.clock.advance({ seconds: 30 });
    expect(await deliverAllDue(delivery)).toMatchObject({ sent: 1 });
    expect((await messagesOf(reference)).map((m) => `${m.status}:${m.attempts}`)).toEqual(['sent:2']);
  });

  it('retries an e-mail refused at login (535, EAUTH) until the password is mended, then sends it', async () => {
    const reference = await book(await clientWith({ email: 'login-refused@example.com' }));
    const expired = {
      ...delivery,
      senders: await sendersFor({
        email: { smtpUrl: smtp.url.replace(':s3cret@', ':expired@'), mailFrom: MAIL_FROM },
        sms: null,
      }),
    };
    failures.length = 0;
    try {
      expect(await deliverAllDue(expired)).toMatchObject({ retried: 1, failed: 0 });
    } finally {
      expired.senders.email?.close?.();
    }
    const [email] = await messagesOf(reference);
    expect(email).toMatchObject({ status: 'pending', attempts: 1, dueAt: t.clock.nowMs() + 30_000 });
    expect(email!.lastError).toMatch(/^SMTP .*credentials were refused/);
    expect(email!.lastError).not.toMatch(/login-refused|mailer/);
    expect(failures).toMatchObject([{ final: false }]);
    t.clock.advance({ seconds: 30 });
    expect(await deliverAllDue(delivery)).toMatchObject({ sent: 1 });
    expect((await messagesOf(reference)).map((m) => `${m.status}:${m.attempts}`)).toEqual(['sent:2']);
  });

  it(`fails a message still refused for credentials after ${MAX_ATTEMPTS} attempts`, async () => {
    const reference = await book(await clientWith({ phone: '+447911123472' }));
    const mistyped = await withTwilioToken('never-mended');
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      await deliverAllDue(mistyped);
      t.clock.advance({ hours: 1 });
    }
    twilio.malformed.length = 0;
    const [sms] = await messagesOf(reference);
    expect(sms).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS });
    expect(sms!.lastError).toMatch(/credentials were refused/);
  });
});

describe('a change to the booking while its message is out', () => {
  /** Delivers with Twilio holding its answers; `change` runs once the SMS has reached Twilio. */
  async function whileOut(change: () => Promise<void>, release: 'accept' | 'outage') {
    const seen = twilio.requests.length;
    twilio.hold(true);
    const delivering = deliverAllDue(delivery);
    try {
      await until(() => twilio.requests.length > seen);
      await change();
    } finally {
      twilio.hold(false, release);
    }
    return delivering;
  }

  const cancel = (reference: string) => async () => {
    const response = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: {},
    });
    expect(response.statusCode, response.body).toBe(200);
  };

  it('keeps the record of a confirmation the provider accepts after the booking was cancelled', async () => {
    const reference = await book(await clientWith({ phone: '+447911123461' }));
    await whileOut(cancel(reference), 'accept');
    const messages = await messagesOf(reference);
    const confirmed = messages.find((m) => m.kind === 'confirmed');
    // It reached the customer, so the outbox says so (it used to be deleted mid-send, leaving no trace).
    expect(confirmed).toMatchObject({ status: 'sent', channel: 'sms' });
    expect(twilio.accepted.has(confirmed!.id)).toBe(true);
    expect(messages.map((m) => m.kind).sort()).toEqual(['cancelled', 'confirmed']);
  });

  it('does not send again a confirmation whose send failed after the booking was cancelled', async () => {
    const reference = await book(await clientWith({ phone: '+447911123462' }));
    await whileOut(cancel(reference), 'outage');
    const [confirmed] = (await messagesOf(reference)).filter((m) => m.kind === 'confirmed');
    expect(confirmed).toMatchObject({ status: 'pending', attempts: 1 });
    t.clock.advance({ minutes: 5 });
    const counts = await deliverAllDue(delivery);
    // The retry finds the booking cancelled: dropped, and only the cancellation goes.
    expect(counts).toMatchObject({ dropped: 1 });
    expect(twilio.accepted.has(confirmed!.id)).toBe(false);
    expect((await messagesOf(reference)).map((m) => `${m.kind}:${m.status}`)).toEqual(['cancelled:sent']);
  });

  it('does not send again a notice a newer one replaced while it was out', async () => {
    const reference = await book(await clientWith({ phone: '+447911123463' }));
    await deliverAllDue(delivery);
    const move = (hour: number) => async () => {
      const response = await t.request({
        method: 'PATCH',
        url: `/v1/bookings/${reference}`,
        payload: { starts_at: `2026-11-30T${hour}:00:00+00:00` },
      });
      expect(response.statusCode, response.body).toBe(200);
    };
    await move(10)();
    // The first "rescheduled" is out when the booking moves again; its send fails.
    await whileOut(move(11), 'outage');
    t.clock.advance({ minutes: 5 });
    expect(await deliverAllDue(delivery)).toMatchObject({ dropped: 1, sent: 0 });
    const notices = (await messagesOf(reference)).filter((m) => m.kind === 'rescheduled');
    expect(notices.map((m) => m.status)).toEqual(['sent']);
    const said = twilio.accepted.get(notices[0]!.id)!.body;
    expect(said).toMatch(/11:00|11am|11 am/);
  });
});

describe('a slow SMTP server and the lease', () => {
  it('hands no e-mail to the server once its lease has too little left: another worker sends it once, not twice', async () => {
    await deliverAllDue(delivery);
    // Twelve e-mails in one batch through a pool of four connections, each answered 25 s after it
    // reached the server: the third four would start 50 s into a 60 s lease.
    const emailIds: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const client = await clientWith({ email: `slow-${i}@example.com` });
      const response = await postBooking(t, {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        client_id: client,
        starts_at: `2026-12-${i < 6 ? '08' : '15'}T${10 + (i % 6)}:00:00+00:00`,
      });
      expect(response.statusCode, response.body).toBe(201);
      const [email] = await messagesOf(response.json().data.reference);
      emailIds.push(email!.id);
    }
    smtp.hold(true);
    let firstDone = false;
    const first = deliverDueMessages(delivery).finally(() => {
      firstDone = true;
    });
    try {
      for (const _wave of [1, 2]) {
        await until(() => smtp.held === 4);
        t.clock.advance({ seconds: 25 });
        smtp.release();
      }
      // The third four: handed to the server with 10 s of their lease left, or given back unsent.
      await until(() => firstDone || smtp.held === 4);
      t.clock.advance({ seconds: 11 });
      smtp.hold(false);
      // Another instance, after the lease: it takes over whatever the first worker still holds.
      const second = {
        ...delivery,
        senders: await sendersFor({ email: { smtpUrl: smtp.url, mailFrom: MAIL_FROM }, sms: null }),
      };
      try {
        await deliverDueMessages(second);
      } finally {
        second.senders.email?.close?.();
      }
    } finally {
      smtp.hold(false);
      smtp.release();
    }
    const firstCounts = await first;
    const receipts = emailIds.map(
      (id) => smtp.received.filter((m) => m.messageId === `<${id}@booking-engine.outbox>`).length,
    );
    expect(receipts).toEqual(emailIds.map(() => 1));
    // Eight sent; the third four were given back unsent at 50 s, not handed to the server.
    expect(firstCounts).toMatchObject({ sent: 8, retried: 0, failed: 0 });
    const messages = (await listOutbox(t.database.db, ids.organisation)).filter((m) =>
      emailIds.includes(m.id),
    );
    expect(messages.map((m) => m.status)).toEqual(emailIds.map(() => 'sent'));
    // A message given back unsent was tried once: by the worker that sent it.
    expect(messages.map((m) => m.attempts)).toEqual(emailIds.map(() => 1));
  });

  it('still sends everything under a lease shorter than the timeout: what waited goes in the next batch', async () => {
    await deliverAllDue(delivery);
    const emailIds: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const client = await clientWith({ email: `short-lease-${i}@example.com` });
      const response = await postBooking(t, {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        client_id: client,
        starts_at: `2026-12-22T${10 + i}:00:00+00:00`,
      });
      expect(response.statusCode, response.body).toBe(201);
      const [email] = await messagesOf(response.json().data.reference);
      emailIds.push(email!.id);
    }
    expect(await deliverAllDue({ ...delivery, leaseMs: 10_000 })).toMatchObject({ sent: 6 });
    const messages = (await listOutbox(t.database.db, ids.organisation)).filter((m) =>
      emailIds.includes(m.id),
    );
    expect(messages.map((m) => `${m.status}:${m.attempts}`)).toEqual(emailIds.map(() => 'sent:1'));
    expect(emailIds.map((id) => smtp.accepted.has(`<${id}@booking-engine.outbox>`))).toEqual(
      emailIds.map(() => true),
    );
  });
});

describe('an SMTP server that trickles its replies', () => {
  it('ends a send at its deadline, whatever the server trickles: the connection closed, tried again later', async () => {
    const slow = await startTricklingSmtp();
    // The provider's 20 s, shortened: its inactivity timeouts and its deadline alike.
    const sender = smtpSender({ smtpUrl: slow.url, mailFrom: MAIL_FROM }, { timeoutMs: 1_000 });
    const stalled = { ...delivery, senders: { email: sender, sms: null } };
    try {
      await deliverAllDue(delivery);
      const reference = await book(await clientWith({ email: 'trickled@example.com' }));
      // A byte every 100 ms: never quiet for a second, yet the reply to MAIL FROM takes 6.6 s. At one
      // byte every few seconds and the real timeouts, a send would outlast the worker's 60 s lease.
      slow.trickle(true, 100);
      const started = Date.now();
      const counts = await deliverDueMessages(stalled);
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(counts).toMatchObject({ retried: 1, sent: 0 });
      // Nothing of it is still out: the connection was closed mid-reply, before the message went.
      expect(slow.cutMidReply).toBe(1);
      expect(slow.received).toEqual([]);
      const [email] = await messagesOf(reference);
      expect(email).toMatchObject({ status: 'pending', attempts: 1, dueAt: t.clock.nowMs() + 30_000 });
      expect(email!.lastError).toMatch(/^SMTP: no answer within 1 s/);

      slow.trickle(false);
      t.clock.advance({ seconds: 30 });
      expect(await deliverDueMessages(stalled)).toMatchObject({ sent: 1 });
      expect(slow.received).toEqual([`<${email!.id}@booking-engine.outbox>`]);
    } finally {
      sender.close?.();
      await slow.close();
    }
  });
});

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
