import { DateTime } from 'luxon';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { createUser } from '../../src/app/staff-account-service.ts';
import { deliverAllDueWebhooks } from '../../src/app/webhooks/delivery.ts';
import { httpSender } from '../../src/app/webhooks/sender.ts';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { connectInProcess, demoCatalogue, type McpHarness } from '../helpers/mcp-harness.ts';
import {
  bookOnPage,
  deliveredCode,
  OWN_ORIGIN,
  pagePathOf,
  pagePost,
  referenceOnPage,
} from '../helpers/public-booking.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';
import { type Received, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * Every face that changes a booking, a client or a message writes its webhook event in the
 * transaction of the change (design.md 9.2), with the resource after the change as `data`: MCP tools,
 * REST, the public page and its code step, the booking's page (card, move, cancel), the hosted
 * checkout, the staff console, the CLI, and the lazy expiry a booking does on its way (the sweeper's
 * is in webhooks.test.ts). One endpoint subscribes to every event type, and after each
 * test every event written has been delivered and accounted for: no face writes an event a test did
 * not expect. The demo catalogue (Northside, Camden without protection, a £20 deposit on colour,
 * Amara at Camden Monday to Wednesday); the clock starts Monday 23 November 2026, 09:00 in London.
 */
const ORG = 'northside-hair';
const PASSWORD = 'correct horse battery';
const LOOPBACK_ALLOWED = { allowInsecure: true, allowPrivateNetworks: false };

let t: TestApp;
let ids: CatalogueIds;
let mcp: McpHarness;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
const sender = httpSender(LOOPBACK_ALLOWED, 2_000);

beforeAll(async () => {
  t = await startTestApp({
    catalogues: [demoCatalogue()],
    limits: { requestsPerMinute: 100_000 },
    webhookDestinations: LOOPBACK_ALLOWED,
  });
  ids = await catalogueIds(t.database.db);
  receiver = await startWebhookReceiver({ nowSeconds: () => Math.floor(t.clock.nowMs() / 1000) });
  const created = await t.request({
    method: 'POST',
    url: '/v1/webhook-endpoints',
    payload: { url: receiver.url, events: [...WEBHOOK_EVENT_TYPES] },
  });
  expect(created.statusCode, created.body).toBe(201);
  receiver.state.secret = created.json().data.secret;
  mcp = await connectInProcess(t, t.keys.readWrite);
});
afterAll(async () => {
  await mcp?.close();
  sender.close();
  await receiver?.close();
  await t?.close();
});

beforeEach(() => {
  t.clock.set(TEST_START);
  receiver.received.length = 0;
});
// Whatever a test changed, it has taken every event written: nothing more is on its way.
afterEach(async () => {
  expect(await deliverAllDueWebhooks({ db: t.database.db, clock: t.clock, sender })).toEqual({
    succeeded: 0,
    retried: 0,
    failed: 0,
  });
});

type Event = Received['json'];

/** Delivers what is due, as the worker of `booking serve` does: the events, each received signed once. */
async function delivered(): Promise<Event[]> {
  const counts = await deliverAllDueWebhooks({ db: t.database.db, clock: t.clock, sender });
  const received = receiver.received.splice(0);
  expect(counts).toEqual({ succeeded: received.length, retried: 0, failed: 0 });
  for (const r of received) {
    expect(r.signed).toBe(true);
    expect(r.headers['booking-event-type']).toBe(r.json.type);
    expect(r.json.organisation).toBe(ORG);
  }
  return received.map((r) => r.json);
}

/**
 * The events of the change just made: exactly these types, returned in the order asked. Events of
 * different bookings (or a client's and a booking's) may arrive in any order: a worker sends a batch
 * at once, and orders only the events of one booking.
 */
async function expectEvents(...types: string[]): Promise<Event[]> {
  const events = await delivered();
  expect(events.map((e) => e.type).sort()).toEqual([...types].sort());
  return types.map((type) => events.find((e) => e.type === type)!);
}

/** The REST Booking now, as a read_write key reads it, capability links aside (what `data` is). */
async function bookingResource(reference: string) {
  const response = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
  expect(response.statusCode, response.body).toBe(200);
  return { ...response.json().data, booking_page_url: null, payment_url: null };
}

async function clientResource(id: string) {
  const response = await t.request({ method: 'GET', url: `/v1/clients/${id}` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

async function restBooking(service: 'cut' | 'colour', startsAt: string, staff = 'amara'): Promise<string> {
  const response = await postBooking(t, {
    location_slug: 'camden',
    service_ids: [ids.services[service]],
    staff_id: ids.staff[staff],
    client_id: ids.jo,
    starts_at: startsAt,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.reference;
}

describe('MCP', () => {
  it('book for a client on file: booking.created with the Booking', async () => {
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'amara',
      starts_at: '2026-11-24T10:00:00+00:00',
      client_id: ids.jo,
    });
    expect(booked).toMatchObject({ ok: true, status: 'confirmed' });
    const reference = booked.booking.reference;
    const [created] = await expectEvents('booking.created');
    expect(created!.data).toEqual(await bookingResource(reference));
    expect(created!.data).toMatchObject({ status: 'confirmed', client_id: ids.jo });
  });

  it('book for a new caller: client.created with the Client, then booking.created', async () => {
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'amara',
      starts_at: '2026-11-25T12:00:00+00:00',
      client: { first_name: 'Nia', last_name: 'Okafor', phone: '07911 223301' },
    });
    expect(booked.ok, JSON.stringify(booked)).toBe(true);
    const [client, created] = await expectEvents('client.created', 'booking.created');
    const clientId = created!.data.client_id as string;
    expect(client!.data).toEqual(await clientResource(clientId));
    expect(client!.data).toMatchObject({ first_name: 'Nia', phone: '+447911223301' });
    expect(created!.data).toEqual(await bookingResource(booked.booking.reference));
  });

  it('cancel: booking.cancelled with the cancelled Booking', async () => {
    const reference = await restBooking('cut', '2026-11-24T14:00:00+00:00');
    await expectEvents('booking.created');
    const cancelled = await mcp.call('cancel', { reference });
    expect(cancelled.booking.status).toBe('cancelled');
    const [event] = await expectEvents('booking.cancelled');
    expect(event!.data).toEqual(await bookingResource(reference));
    expect(event!.data).toMatchObject({ reference, status: 'cancelled' });
  });

  it('take_message: message.created with the Message', async () => {
    const taken = await mcp.call('take_message', {
      caller_name: 'Sam',
      phone: '07911 223303',
      message: 'Please call me back about a colour.',
      location: 'camden',
    });
    expect(taken.ok).toBe(true);
    const [event] = await expectEvents('message.created');
    expect(event!.data).toEqual({
      id: taken.message_id,
      caller_name: 'Sam',
      phone: '+447911223303',
      message: 'Please call me back about a colour.',
      reference: null,
      location_slug: 'camden',
      status: 'open',
      created_at: '2026-11-23T09:00:00Z',
    });
  });
});

describe('REST', () => {
  it('POST /v1/clients: client.created for a new client, nothing for one already on file', async () => {
    const fresh = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Ola', last_name: 'Berg', email: 'ola.berg@example.com' },
    });
    expect(fresh.statusCode, fresh.body).toBe(201);
    const [event] = await expectEvents('client.created');
    expect(event!.data).toEqual(fresh.json().data);
    expect(event!.data).toEqual(await clientResource(fresh.json().data.id));

    for (const payload of [
      { first_name: 'Ola', last_name: 'Berg', email: 'OLA.BERG@example.com' },
      { first_name: 'Jo', last_name: 'Bloggs', phone: '+447911123456' },
    ]) {
      const again = await t.request({ method: 'POST', url: '/v1/clients', payload });
      expect(again.statusCode, again.body).toBe(200);
    }
    await expectEvents();
  });

  it('POST /v1/messages: message.created with the Message it answers', async () => {
    const created = await t.request({
      method: 'POST',
      url: '/v1/messages',
      payload: { caller_name: 'Kim', message: 'Running late', location_slug: 'camden' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const [event] = await expectEvents('message.created');
    expect(event!.data).toEqual(created.json().data);
  });

  it('a booking taking a lapsed hold’s slot: booking.expired for the hold, then booking.created', async () => {
    const hold = await restBooking('colour', '2026-11-25T10:00:00+00:00');
    const [held] = await expectEvents('booking.created');
    expect(held!.data).toMatchObject({ status: 'pending_payment' });
    // The hold lapses (30 minutes) with no sweeper running: the next booking there expires it itself.
    t.clock.advance({ minutes: 31 });
    const taker = await restBooking('cut', '2026-11-25T10:00:00+00:00');
    const [expired, created] = await expectEvents('booking.expired', 'booking.created');
    expect(expired!.data).toEqual(await bookingResource(hold));
    expect(expired!.data).toMatchObject({ reference: hold, status: 'expired' });
    expect(created!.data).toEqual(await bookingResource(taker));
  });
});

describe('the public page', () => {
  it('booking.created pending, then, with the code, booking.confirmed and client.created for a new contact', async () => {
    const path = pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: '2026-11-24T15:00:00Z',
        firstName: 'Rosa',
        lastName: 'Parks',
        phone: '07911 223302',
      }),
    );
    const reference = await referenceOnPage(t, path);
    // The unproven contact is nobody's client yet: no client.created.
    const [created] = await expectEvents('booking.created');
    expect(created!.data).toMatchObject({ reference, status: 'pending_confirmation' });
    expect(created!.data).toEqual(await bookingResource(reference));

    const { code } = await deliveredCode(t, reference);
    expect((await pagePost(t, `${path}/verify`, { code })).statusCode).toBe(303);
    const [confirmed, client] = await expectEvents('booking.confirmed', 'client.created');
    expect(confirmed!.data).toEqual(await bookingResource(reference));
    expect(confirmed!.data).toMatchObject({ status: 'confirmed', client_id: client!.data.id });
    expect(client!.data).toEqual(await clientResource(String(client!.data.id)));
    expect(client!.data).toMatchObject({ first_name: 'Rosa', phone: '+447911223302' });
  });

  it('a contact already on file: booking.confirmed, and no client.created', async () => {
    const path = pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: '2026-11-24T16:00:00Z',
        phone: '07911 123456',
      }),
    );
    const reference = await referenceOnPage(t, path);
    await expectEvents('booking.created');
    const { code } = await deliveredCode(t, reference);
    expect((await pagePost(t, `${path}/verify`, { code })).statusCode).toBe(303);
    const [confirmed] = await expectEvents('booking.confirmed');
    expect(confirmed!.data).toMatchObject({ status: 'confirmed', client_id: ids.jo });
    expect(confirmed!.data).toEqual(await bookingResource(reference));
  });
});

describe('the public page without the code step (public_verification: none)', () => {
  beforeAll(async () => {
    const catalogue = demoCatalogue() as { policies?: Record<string, unknown> };
    catalogue.policies = { ...catalogue.policies, public_verification: 'none' };
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
  });
  afterAll(async () => {
    await importCatalogue(t.database.db, demoCatalogue(), t.clock.nowMs());
  });

  it('client.created for the record of its own the booking is made for, and booking.created confirmed', async () => {
    const path = pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: '2026-11-30T15:00:00Z',
        firstName: 'Ada',
        lastName: 'Lovelace',
        phone: '07911 223399',
      }),
    );
    const reference = await referenceOnPage(t, path);
    const [created, client] = await expectEvents('booking.created', 'client.created');
    expect(created!.data).toEqual(await bookingResource(reference));
    expect(created!.data).toMatchObject({ status: 'confirmed', client_id: client!.data.id });
    expect(client!.data).toEqual(await clientResource(String(client!.data.id)));
    expect(client!.data).toMatchObject({ first_name: 'Ada', phone: '+447911223399' });
  });
});

describe('the booking’s page', () => {
  it('a protected hold by MCP, then its card saved, moved and cancelled by the customer on its page', async () => {
    const booked = await mcp.call('book', {
      location: 'islington',
      services: 'cut',
      starts_at: '2026-11-25T14:00:00+00:00',
      client: { first_name: 'Max', last_name: 'Ode', phone: '07911 778899' },
    });
    expect(booked).toMatchObject({ ok: true, status: 'pending_confirmation' });
    const reference = booked.booking.reference as string;
    const path = new URL(booked.booking_page_url).pathname;
    const [, held] = await expectEvents('client.created', 'booking.created');
    expect(held!.data).toEqual(await bookingResource(reference));
    expect(held!.data).toMatchObject({ pending_confirmation: { requirements: ['protection_setup'] } });

    const form = (url: string, payload = '') =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: OWN_ORIGIN },
        payload,
      });
    const setup = await form(`${path}/setup`);
    expect(setup.statusCode, setup.body).toBe(303);
    const saved = await form(new URL(String(setup.headers.location)).pathname);
    expect(saved.statusCode, saved.body).toBe(303);
    const [confirmed] = await expectEvents('booking.confirmed');
    expect(confirmed!.data).toEqual(await bookingResource(reference));
    expect(confirmed!.data).toMatchObject({ status: 'confirmed', pending_confirmation: null });

    const times = await t.app.inject({ method: 'GET', url: `${path}/reschedule?date=2026-11-27` });
    const startsAt = /name="starts_at" value="([^"]+)"/.exec(times.body)?.[1];
    expect(startsAt, times.body).toBeDefined();
    const moved = await form(`${path}/reschedule`, `starts_at=${encodeURIComponent(startsAt!)}`);
    expect(moved.statusCode, moved.body).toBe(303);
    const [rescheduled] = await expectEvents('booking.rescheduled');
    expect(rescheduled!.data).toEqual(await bookingResource(reference));
    expect(Date.parse(String(rescheduled!.data.starts_at))).toBe(Date.parse(startsAt!));

    const cancelled = await form(`${path}/cancel`);
    expect(cancelled.statusCode, cancelled.body).toBe(303);
    const [gone] = await expectEvents('booking.cancelled');
    expect(gone!.data).toEqual(await bookingResource(reference));
    expect(gone!.data).toMatchObject({ status: 'cancelled' });
  });
});

describe('the hosted checkout', () => {
  it('a paid deposit: booking.confirmed with the deposit paid', async () => {
    const response = await postBooking(t, {
      location_slug: 'camden',
      service_ids: [ids.services.colour],
      staff_id: ids.staff.amara,
      client_id: ids.jo,
      starts_at: '2026-11-30T10:00:00+00:00',
    });
    expect(response.statusCode, response.body).toBe(201);
    const { reference, payment_url } = response.json().data;
    const [created] = await expectEvents('booking.created');
    expect(created!.data).toMatchObject({ status: 'pending_payment', deposit_status: 'pending' });
    const checkout = new URL(payment_url).pathname;
    const paid = await t.app.inject({
      method: 'POST',
      url: `${checkout}/pay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: OWN_ORIGIN },
      payload: '',
    });
    expect(paid.statusCode, paid.body).toBe(303);
    const [confirmed] = await expectEvents('booking.confirmed');
    expect(confirmed!.data).toEqual(await bookingResource(reference));
    expect(confirmed!.data).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
  });
});

describe('staff actions', () => {
  it('complete in the console: booking.completed', async () => {
    const reference = await restBooking('cut', '2026-11-24T12:00:00+00:00');
    await expectEvents('booking.created');
    await createUser(
      t.database.db,
      { organisationSlug: ORG, email: 'owner@northside.test', role: 'owner', password: PASSWORD },
      t.clock.nowMs(),
    );
    t.clock.set('2026-11-24T13:00:00Z');
    const form = (fields: Record<string, string>, cookie?: string) =>
      t.app.inject({
        method: 'POST',
        url: fields.action ? `/console/bookings/${reference}/action` : '/console/sign-in',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: OWN_ORIGIN,
          ...(cookie && { cookie }),
        },
        payload: new URLSearchParams(fields).toString(),
      });
    const signIn = await form({
      organisation: ORG,
      email: 'owner@northside.test',
      password: PASSWORD,
      next: '/console/diary',
    });
    expect(signIn.statusCode, signIn.body).toBe(303);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const page = await t.app.inject({
      method: 'GET',
      url: `/console/bookings/${reference}`,
      headers: { cookie },
    });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const done = await form({ _csrf: csrf, action: 'complete' }, cookie);
    expect(done.statusCode, done.body).toBe(303);
    const [completed] = await expectEvents('booking.completed');
    expect(completed!.data).toEqual(await bookingResource(reference));
    expect(completed!.data).toMatchObject({ status: 'completed' });
  });

  it('no-show with `booking bookings <reference> no-show`: booking.no_show', async () => {
    // The command runs on the real clock, after the appointment (November 2026 has passed).
    const reference = await restBooking('cut', '2026-11-25T14:00:00+00:00');
    await expectEvents('booking.created');
    const ran = await runCliAsync(['bookings', reference, 'no-show'], { DATABASE_URL: t.database.url });
    expect(ran.status, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`${reference}: confirmed -> no_show`);
    // Its event is due from the command's own now: deliver then.
    t.clock.set(DateTime.utc());
    const [noShow] = await expectEvents('booking.no_show');
    expect(noShow!.data).toEqual(await bookingResource(reference));
    expect(noShow!.data).toMatchObject({ status: 'no_show' });
  });
});
