import { spawn } from 'node:child_process';
import path from 'node:path';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOutbox } from '../../src/app/outbox-service.ts';
import type { OutboxMessage } from '../../src/domain/outbox.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { REPO_ROOT, runCliAsync } from '../helpers/cli.ts';
import {
  providerEnv,
  type SmtpSink,
  startSmtpSink,
  startTwilioStandIn,
  type TwilioStandIn,
} from '../helpers/message-sinks.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Delivery by real processes (`booking outbox deliver`, what `booking serve` runs continuously): one
 * killed with SIGKILL in the middle of delivering, then restarted, delivers every message at least once
 * and each message the provider accepted once (by its idempotency key); two running at once on one
 * database deliver every message once, each claimed by one of them.
 */
let t: TestApp;
let ids: CatalogueIds;
let smtp: SmtpSink;
let twilio: TwilioStandIn;
let env: Record<string, string>;
let slot = 0;
const LONDON = 'Europe/London';

/**
 * Ana's working days (Mondays and Tuesdays, 9:00 to 17:00 in London) from tomorrow on. The worker
 * processes read the real clock, and a confirmation is not sent once its appointment has ended: the
 * bookings lie ahead of the real date, and the app books them as of that date.
 */
const DAYS = anasNextDays(3);

function anasNextDays(count: number): string[] {
  const days: string[] = [];
  for (let day = DateTime.now().setZone(LONDON).startOf('day').plus({ days: 1 }); days.length < count; ) {
    if (day.weekday === 1 || day.weekday === 2) days.push(day.toISODate()!);
    day = day.plus({ days: 1 });
  }
  return days;
}

beforeAll(async () => {
  t = await startTestApp({ now: new Date().toISOString() });
  ids = await catalogueIds(t.database.db);
  await t.database.db.updateTable('locations').set({ reminder_hours_before: 0 }).execute();
  smtp = await startSmtpSink();
  twilio = await startTwilioStandIn();
  env = {
    DATABASE_URL: t.database.url,
    ...providerEnv(smtp, twilio),
    OUTBOX_LEASE_SECONDS: '2',
  };
});
afterAll(async () => {
  await smtp.close();
  await twilio.close();
  await t.close();
});

/** `count` confirmed bookings of Jo (phone and e-mail): two messages each. */
async function bookMany(count: number): Promise<string[]> {
  const references: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const day = DAYS[Math.floor(slot / 8)]!;
    const hour = String(9 + (slot % 8)).padStart(2, '0');
    slot += 1;
    const response = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: DateTime.fromISO(`${day}T${hour}:00`, { zone: LONDON }).toISO({
        suppressMilliseconds: true,
      })!,
    });
    expect(response.statusCode, response.body).toBe(201);
    references.push(response.json().data.reference);
  }
  return references;
}

async function messagesOf(references: string[]): Promise<OutboxMessage[]> {
  const wanted = new Set(references);
  return (await listOutbox(t.database.db, ids.organisation)).filter((m) => wanted.has(m.reference));
}

const timesRequested = (token: string) => twilio.requests.filter((r) => r.token === token).length;
const timesMailed = (id: string) =>
  smtp.received.filter((m) => m.messageId === `<${id}@booking-engine.outbox>`).length;

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('outbox delivery by processes', () => {
  it('survives kill -9 in the middle of delivering: every message at least once, each accepted one once', async () => {
    const references = await bookMany(10);
    twilio.hold(true);
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/booking.js'), 'outbox', 'deliver'], {
      cwd: REPO_ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      // Twilio has accepted messages whose answers have not reached the worker: kill it there.
      await until(() => twilio.requests.length >= 3, 90_000);
    } finally {
      child.kill('SIGKILL');
      await exited;
      twilio.hold(false);
    }
    const acceptedBeforeCrash = new Set(twilio.accepted.keys());
    const recordedBeforeCrash = (await messagesOf(references))
      .filter((m) => m.status === 'sent')
      .map((m) => m.id);
    expect(acceptedBeforeCrash.size).toBeGreaterThan(0);

    // After the lease (2 s) a new worker takes the abandoned claims over.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const again = await runCliAsync(['outbox', 'deliver'], env);
    expect(again.status, again.stderr).toBe(0);

    const messages = await messagesOf(references);
    expect(messages).toHaveLength(20);
    expect(messages.every((m) => m.status === 'sent')).toBe(true);
    for (const message of messages) {
      if (message.channel === 'sms') {
        expect(twilio.accepted.has(message.id)).toBe(true);
        // A message recorded as sent is never requested again.
        if (recordedBeforeCrash.includes(message.id)) expect(timesRequested(message.id)).toBe(1);
      } else {
        expect(smtp.accepted.has(`<${message.id}@booking-engine.outbox>`)).toBe(true);
        if (recordedBeforeCrash.includes(message.id)) expect(timesMailed(message.id)).toBe(1);
      }
    }
    // Those accepted but unanswered at the crash were sent again with the same key: one message each.
    const sms = messages.filter((m) => m.channel === 'sms');
    expect(new Set(sms.map((m) => m.id)).size).toBe(sms.length);
    expect(
      sms.filter((m) => acceptedBeforeCrash.has(m.id) && timesRequested(m.id) > 1).length,
    ).toBeGreaterThan(0);
    expect(twilio.malformed).toEqual([]);
  }, 240_000);

  it('two instances delivering one outbox send each message once', async () => {
    const references = await bookMany(12);
    // The default lease (60 s): a claim lapses only when its worker is gone, not merely slow.
    const { OUTBOX_LEASE_SECONDS: _, ...normal } = env;
    const [first, second] = await Promise.all([
      runCliAsync(['outbox', 'deliver'], normal),
      runCliAsync(['outbox', 'deliver'], normal),
    ]);
    expect(first.status, first.stderr).toBe(0);
    expect(second.status, second.stderr).toBe(0);
    const messages = await messagesOf(references);
    expect(messages).toHaveLength(24);
    expect(messages.map((m) => `${m.status}:${m.attempts}`)).toEqual(messages.map(() => 'sent:1'));
    for (const message of messages) {
      expect(message.channel === 'sms' ? timesRequested(message.id) : timesMailed(message.id)).toBe(1);
    }
  }, 240_000);
});
