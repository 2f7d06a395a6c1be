import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerLinks } from '../../src/app/customer-links.ts';
import { deliverAllDue } from '../../src/app/outbox-delivery.ts';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The cancellation window and the reminder count hours as they pass, not hours of the wall clock
 * (design.md 6: a change "less than cancellation_window_hours before starts_at" is late; docs/api.md,
 * docs/messages.md). Across a night the clocks change, 24 hours before a 10:00 appointment is another
 * time of day the day before: 11:00 in London when the clocks go back (a 25-hour Saturday night),
 * 09:00 in New York when they go forward, and half an hour off on Lord Howe Island, whose clocks move
 * by 30 minutes. Each salon has a 24-hour window, late changes allowed, a reminder 24 hours before,
 * and a Trim booked for 10:00 on the Sunday the clocks change; the clock starts three days before.
 */
const PLACES = {
  london: { zone: 'Europe/London', country: 'GB', phone: '+442071234567', client: '+447911123456' },
  'new-york': { zone: 'America/New_York', country: 'US', phone: '+12125550100', client: '+12125550199' },
  'lord-howe': { zone: 'Australia/Lord_Howe', country: 'AU', phone: '+61265632000', client: '+61412345678' },
} as const;
type Place = keyof typeof PLACES;

function salon(slug: Place) {
  const place = PLACES[slug];
  const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  return {
    organisation: {
      slug,
      name: 'Clock Cuts',
      currency: 'GBP',
      booking_reference_prefix: 'CC',
      locale: 'en-GB',
    },
    locations: [
      {
        ref: 'here',
        slug: 'here',
        name: 'Here',
        timezone: place.zone,
        country: place.country,
        phone: place.phone,
        policy: { min_notice_minutes: 0, cancellation_window_hours: 24, reminder_hours_before: 24 },
      },
    ],
    services: [
      {
        ref: 'trim',
        name: 'Trim',
        duration_minutes: 30,
        buffer_after_minutes: 0,
        price: { amount: 2000, currency: 'GBP' },
        locations: ['here'],
      },
    ],
    staff: [
      {
        ref: 'kit',
        name: 'Kit',
        services: ['trim'],
        working_hours: { here: Object.fromEntries(days.map((d) => [d, [['09:00', '17:00']]])) },
      },
    ],
    clients: [
      { ref: 'sam', first_name: 'Sam', last_name: 'Lee', phone: place.client, email: 'sam@example.com' },
    ],
  };
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    catalogues: (Object.keys(PLACES) as Place[]).map(salon),
    limits: { requestsPerMinute: 100_000 },
  });
});
afterAll(async () => {
  await t.close();
});

/** Books the Trim at `startsAt` at `slug`'s salon, the clock three days before; its reference. */
async function book(slug: Place, startsAt: string): Promise<{ reference: string; key: string }> {
  t.clock.set(new Date(Date.parse(startsAt) - 3 * 86_400_000).toISOString());
  const key = await t.keyFor(slug);
  const db = t.database.db;
  const organisation = await db
    .selectFrom('organisations')
    .select('id')
    .where('slug', '=', slug)
    .executeTakeFirstOrThrow();
  const [service, client] = await Promise.all([
    db
      .selectFrom('services')
      .select('id')
      .where('organisation_id', '=', organisation.id)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('clients')
      .select('id')
      .where('organisation_id', '=', organisation.id)
      .executeTakeFirstOrThrow(),
  ]);
  const booked = await t.request({
    method: 'POST',
    url: '/v1/bookings',
    key,
    payload: { location_slug: 'here', service_ids: [service.id], client_id: client.id, starts_at: startsAt },
  });
  expect(booked.statusCode, booked.body).toBe(201);
  return { reference: booked.json().data.reference, key };
}

/** Whether cancelling at `at` (a local time with its offset) would be late, asked with dry_run. */
async function lateAt(booking: { reference: string; key: string }, at: string): Promise<boolean> {
  t.clock.set(at);
  const answer = await t.request({
    method: 'POST',
    url: `/v1/bookings/${booking.reference}/cancel`,
    key: booking.key,
    payload: { dry_run: true },
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json().data.change.late;
}

/** The reminders of `slug`'s booking the outbox worker has sent (logged: no provider) by `at`. */
async function remindersBy(slug: Place, reference: string, at: string): Promise<number> {
  t.clock.set(at);
  await deliverAllDue({
    db: t.database.db,
    clock: t.clock,
    senders: { sms: null, email: null },
    links: customerLinks(localCheckout, 'https://book.example'),
  });
  const organisation = await t.database.db
    .selectFrom('organisations')
    .select('id')
    .where('slug', '=', slug)
    .executeTakeFirstOrThrow();
  const logged = await listOutbox(t.database.db, organisation.id, 'logged');
  return logged.filter((m) => m.reference === reference && m.kind === 'reminder').length;
}

describe('24 hours before an appointment on the day the clocks change', () => {
  it('is 11:00 BST on the Saturday in London when the clocks go back, not 10:00', async () => {
    const booking = await book('london', '2026-10-25T10:00:00+00:00');
    expect(await lateAt(booking, '2026-10-24T10:45:00+01:00')).toBe(false);
    expect(await lateAt(booking, '2026-10-24T11:15:00+01:00')).toBe(true);
    expect(await remindersBy('london', booking.reference, '2026-10-24T10:59:00+01:00')).toBe(0);
    expect(await remindersBy('london', booking.reference, '2026-10-24T11:00:00+01:00')).toBe(2);
  });

  it('is 09:00 EST on the Saturday in New York when the clocks go forward, not 10:00', async () => {
    const booking = await book('new-york', '2026-03-08T10:00:00-04:00');
    expect(await lateAt(booking, '2026-03-07T08:45:00-05:00')).toBe(false);
    expect(await lateAt(booking, '2026-03-07T09:15:00-05:00')).toBe(true);
    expect(await remindersBy('new-york', booking.reference, '2026-03-07T08:59:00-05:00')).toBe(0);
    expect(await remindersBy('new-york', booking.reference, '2026-03-07T09:00:00-05:00')).toBe(2);
  });

  it('is half an hour off on Lord Howe Island, whose clocks move by 30 minutes', async () => {
    // Back on Sunday 5 April 2026 (02:00 to 01:30): 24 hours before 10:00 is 10:30 the day before.
    const back = await book('lord-howe', '2026-04-05T10:00:00+10:30');
    expect(await lateAt(back, '2026-04-04T10:15:00+11:00')).toBe(false);
    expect(await lateAt(back, '2026-04-04T10:45:00+11:00')).toBe(true);
    expect(await remindersBy('lord-howe', back.reference, '2026-04-04T10:29:00+11:00')).toBe(0);
    expect(await remindersBy('lord-howe', back.reference, '2026-04-04T10:30:00+11:00')).toBe(2);
    // Forward on Sunday 4 October 2026 (02:00 to 02:30): it is 09:30 the day before.
    const forward = await book('lord-howe', '2026-10-04T10:00:00+11:00');
    expect(await lateAt(forward, '2026-10-03T09:15:00+10:30')).toBe(false);
    expect(await lateAt(forward, '2026-10-03T09:45:00+10:30')).toBe(true);
    expect(await remindersBy('lord-howe', forward.reference, '2026-10-03T09:29:00+10:30')).toBe(0);
    expect(await remindersBy('lord-howe', forward.reference, '2026-10-03T09:30:00+10:30')).toBe(2);
  });
});
