import { spawn } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCardSetup } from '../../src/app/card-setup-service.ts';
import { bookForCaller } from '../../src/app/console-service.ts';
import { createUser } from '../../src/app/staff-account-service.ts';
import { chargeFee, markNoShow, payDepositByStaff, waiveFee } from '../../src/app/staff-actions.ts';
import { makeStripeProvider } from '../../src/app/stripe-payments.ts';
import type { StripeProvider } from '../../src/app/stripe-provider.ts';
import { offerFreedTimes } from '../../src/app/waitlist/offers.ts';
import { createLogger } from '../../src/cli/logger.ts';
import { AppError } from '../../src/domain/errors.ts';
import { type CatalogueIds, catalogueIds, getBooking, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { REPO_ROOT, runCliAsync } from '../helpers/cli.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { connectInProcess, demoCatalogue } from '../helpers/mcp-harness.ts';
import { onPostgres, untilLockWaiters } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookAnaOnTuesday, joinWaitlist, TUESDAY } from '../helpers/waitlist-fixtures.ts';

/**
 * PAYMENT_PROVIDER=stripe end to end: the real `stripe` package against a local server answering
 * Stripe's endpoints (test/helpers/fake-stripe.ts), webhooks signed with the package's own test-header
 * helper and posted to POST /webhooks/stripe, fee charges through the real `booking` command (run
 * without blocking: the Stripe stand-in answers from this process). Soho's
 * colour needs a £20 deposit (hold 30 minutes); Kings Cross has Booking Protection (no-show fee 100%).
 * The clock starts Monday 2026-11-23 09:00 UTC.
 */
const STARTS_AT = '2026-11-24T10:00:00+00:00';
const PROTECTED = 'AC-PRTCT2';

let fake: FakeStripe;
let t: TestApp;
// A Stripe of its own per test: catalogue imports give each test's booking the same id, so the same
// idempotency keys.
beforeEach(async () => {
  fake = await startFakeStripe();
});
afterEach(async () => {
  await t?.close();
  await fake.close();
});

function catalogue() {
  const c = smallCatalogue() as ReturnType<typeof smallCatalogue> & { bookings: unknown[] };
  c.bookings = [
    {
      reference: PROTECTED,
      location: 'kings-cross',
      services: ['cut'],
      staff: 'bo',
      client: 'jo',
      starts_at: '2026-11-26T10:00:00',
      status: 'pending_confirmation',
      protection: { setup_status: 'pending', payment_method_saved: false },
    },
  ];
  return c;
}

/** A Stripe provider for this test's Stripe, as the app's own is made. */
function stripeProvider(): StripeProvider {
  return makeStripeProvider({
    secretKey: fake.secretKey,
    webhookSecret: fake.webhookSecret,
    apiBase: new URL(fake.url),
  });
}

/**
 * `asked` of this test's Stripe (too slow to answer) from `startedAt` on is refused payments_unavailable
 * by its `deadline`, and what the client would still try in the background (its retries) is over by
 * then too.
 */
async function expectGivenUpBy(asked: Promise<unknown>, startedAt: number, deadline: number) {
  await expect(asked).rejects.toMatchObject({ code: 'payments_unavailable' });
  expect(performance.now()).toBeLessThan(deadline + 250);
  await sleep(2_000);
  const requests = fake.requests.filter((r) => r.at >= startedAt);
  expect(requests.length).toBeGreaterThan(0);
  expect(requests.filter((r) => r.at > deadline)).toEqual([]);
}

/** The app with this test's Stripe; `watch` wraps it (a test that looks at what is asked of it). */
async function start(
  catalogues: unknown[] = [catalogue()],
  watch: (stripe: StripeProvider) => StripeProvider = (stripe) => stripe,
) {
  const payments = watch(stripeProvider());
  t = await startTestApp({ payments, catalogues, http: { logger: createLogger('info', logSink) } });
  return t;
}

/** What the app logged (JSON lines, as `booking serve` writes them), for the test that reads it. */
let logLines: string[] = [];
const logSink = new Writable({
  write(chunk, _encoding, done) {
    logLines.push(String(chunk));
    done();
  },
});
beforeEach(() => {
  logLines = [];
});

/** The warnings that a Stripe event was not applied, as logged. */
const mismatchWarnings = () =>
  logLines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => String(entry.msg).startsWith('stripe event not applied'));

/** POST /v1/bookings's body for Jo's colour at Soho (a £20 deposit), with `more` over it. */
const colourAtSoho = (ids: CatalogueIds, more: Record<string, unknown> = {}) => ({
  location_slug: 'soho',
  service_ids: [ids.services.colour],
  client_id: ids.jo,
  starts_at: STARTS_AT,
  ...more,
});

/** A Soho colour booking: pending_payment with a Stripe Checkout Session behind its payment link. */
async function bookWithDeposit() {
  const ids = await catalogueIds(t.database.db);
  const response = await postBooking(t, colourAtSoho(ids));
  expect(response.statusCode).toBe(201);
  const data = response.json().data;
  expect(data).toMatchObject({ status: 'pending_payment', deposit: { amount: 2000, currency: 'GBP' } });
  const checkoutId = new URL(data.payment_url).pathname.split('/')[2]!;
  const session = stripeSessionOf(checkoutId);
  return {
    reference: data.reference as string,
    paymentUrl: data.payment_url as string,
    pageUrl: data.booking_page_url as string,
    session,
  };
}

/** Posts a Stripe delivery of `event`, signed now (the test clock) unless told otherwise. */
function deliver(event: Record<string, unknown>, options: { secret?: string; signature?: string } = {}) {
  const signed = fake.signed(event, Math.floor(t.clock.nowMs() / 1000), options.secret);
  return t.app.inject({
    method: 'POST',
    url: '/webhooks/stripe',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': options.signature ?? signed.signature,
    },
    payload: signed.payload,
  });
}

/**
 * Max's colour at Islington (the demo catalogue: Booking Protection and a deposit) on Wednesday at
 * 2 pm, booked over MCP: MCP's answer, its reference and Stripe's session for its deposit.
 */
async function maxsProtectedColour() {
  await start([demoCatalogue()]);
  const mcp = await connectInProcess(t, t.keys.readWrite);
  const booked = await mcp.call('book', {
    location: 'islington',
    services: 'colour',
    starts_at: 'Wednesday 25 November at 2 pm',
    client: { first_name: 'Max', last_name: 'Ode', phone: '07911 778899' },
  });
  await mcp.close();
  const deposit = stripeSessionOf(new URL(booked.payment_url).pathname.split('/')[2]);
  return { booked, reference: booked.booking.reference as string, deposit };
}

/** Max's protected colour at Islington, its deposit paid through Stripe, its card not saved: its reference. */
async function paidProtectedHold() {
  const { reference, deposit } = await maxsProtectedColour();
  expect((await deliver(fake.pay(String(deposit.id)))).statusCode).toBe(200);
  return reference;
}

/** A card setup for the protected booking, through Stripe: its organisation, the setup and Stripe's session. */
async function startProtectedSetup() {
  const org = await t.database.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
  const started = await startCardSetup(
    t.database.db,
    t.deps.payments,
    org.id,
    PROTECTED,
    'http://localhost',
    t.clock.nowMs(),
  );
  const session = stripeSessionOf(started.setupId);
  return { org, started, session };
}

const bookingOf = async (reference: string) => (await getBooking(t, reference)).json().data;

/** Stripe's session for our checkout (or card setup) `id`: its client_reference_id. */
const stripeSessionOf = (id: string | undefined) =>
  [...fake.sessions.values()].find((s) => s.client_reference_id === id)!;

/**
 * The checkout `checkoutId` of the booking `reference` is kept with the URL of Stripe's session for it,
 * which names that booking.
 */
async function expectStripeCheckout(checkoutId: string, reference: string) {
  const session = stripeSessionOf(checkoutId);
  expect(session.metadata).toMatchObject({ booking_reference: reference });
  const row = await t.database.db
    .selectFrom('checkout_sessions')
    .select('provider_url')
    .where('id', '=', checkoutId)
    .executeTakeFirstOrThrow();
  expect(row.provider_url).toBe(session.url);
}

/** The one checkout written, with its booking's reference. */
const onlyCheckout = () =>
  t.database.db
    .selectFrom('checkout_sessions')
    .innerJoin('bookings', 'bookings.id', 'checkout_sessions.booking_id')
    .select(['checkout_sessions.id', 'bookings.reference'])
    .executeTakeFirstOrThrow();

/**
 * Dee waits for a colour (£20 deposit) at Soho on Tuesday, when Ana is booked all day; then two of
 * Ana's hours free up. The waitlist worker's deps, with this test's Stripe.
 */
async function colourFreedForDee() {
  const ids = await catalogueIds(t.database.db);
  const booked = await bookAnaOnTuesday(t, ['09', '10', '11', '12', '13', '14', '15', '16']);
  await joinWaitlist(t, {
    service_ids: [ids.services.colour],
    client: { first_name: 'Dee', last_name: 'Posit', email: 'dee@example.com' },
    from_date: TUESDAY,
    to_date: TUESDAY,
  });
  for (const hour of ['13', '14']) {
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get(hour)}/cancel` });
  }
  return { db: t.database.db, clock: t.clock, payments: t.deps.payments, publicBaseUrl: 'http://localhost' };
}
const eventsOf = (reference: string) =>
  t.database.db
    .selectFrom('booking_events')
    .innerJoin('bookings', 'bookings.id', 'booking_events.booking_id')
    .select(['booking_events.from_status', 'booking_events.to_status', 'booking_events.actor'])
    .where('bookings.reference', '=', reference)
    .orderBy('booking_events.seq')
    .execute();

describe('deposits through Stripe Checkout', () => {
  it('opens a session for the deposit that ends with the hold, and the payment link leads there', async () => {
    await start();
    const { paymentUrl, session } = await bookWithDeposit();
    expect(session).toMatchObject({ mode: 'payment', amount_total: 2000, currency: 'gbp', status: 'open' });
    // Soho holds 30 minutes; Stripe's shortest session is 30 minutes, so it ends a minute after.
    const hold = Date.parse('2026-11-23T09:30:00Z') / 1000;
    expect(Number(session.expires_at)).toBe(hold + 60);
    const page = await t.app.inject({ method: 'GET', url: new URL(paymentUrl).pathname });
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe(session.url);
    const create = fake.requests.find((r) => r.path === '/v1/checkout/sessions');
    expect(create?.idempotencyKey).toBe(`checkout:${session.client_reference_id}`);
  });

  it('sends a customer who leaves Stripe without paying to the booking page, as checkout_cancel_url defaults', async () => {
    await start();
    const { pageUrl, session } = await bookWithDeposit();
    // Back to the checkout link would only hand them to Stripe again, with no way to the booking.
    expect(session.cancel_url).toBe(pageUrl);
  });

  it('confirms the booking once Stripe reports the payment, and applies a replayed event once', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    const paid = fake.pay(String(session.id));
    const first = await deliver(paid);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ received: true, outcome: 'applied' });
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed', hold_expires_at: null });
    const replay = await deliver(paid);
    expect(replay.statusCode).toBe(200);
    expect(replay.json().outcome).toBe('replayed');
    expect(await eventsOf(reference)).toEqual([
      { from_status: null, to_status: 'pending_payment', actor: expect.stringMatching(/^api_key:/) },
      { from_status: 'pending_payment', to_status: 'confirmed', actor: 'payment:stripe' },
    ]);
    const stored = await t.database.db.selectFrom('payment_events').select(['event_id', 'type']).execute();
    expect(stored).toEqual([{ event_id: paid.id, type: 'checkout.session.completed' }]);
  });

  it('does not tell the customer Stripe sent back that the deposit is unpaid before its webhook arrives', async () => {
    await start();
    const { reference, paymentUrl, session } = await bookWithDeposit();
    const done = `${new URL(paymentUrl).pathname}/done`;
    // Paid on Stripe's page, which sends the customer back at once; its webhook comes after.
    const paid = fake.pay(String(session.id));
    const early = await t.app.inject({ method: 'GET', url: done });
    expect(early.statusCode).toBe(200);
    expect(early.headers['content-type']).toMatch(/^text\/html/);
    expect(early.body).not.toContain('has not been paid');
    expect(early.body).toContain('If you have just paid');
    expect(early.body).toContain(reference);
    expect(await bookingOf(reference)).toMatchObject({ status: 'pending_payment' });
    expect((await deliver(paid)).statusCode).toBe(200);
    const confirmed = await t.app.inject({ method: 'GET', url: done });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.body).toContain('Booking confirmed');
  });

  it('applies a payment only of the deposit’s amount and currency; any other is answered 200, logged and changes nothing', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    const checkoutRow = () =>
      t.database.db
        .selectFrom('checkout_sessions')
        .select(['status', 'payment_ref'])
        .executeTakeFirstOrThrow();
    const unchanged = async () => {
      expect(await bookingOf(reference)).toMatchObject({
        status: 'pending_payment',
        deposit_status: 'pending',
      });
      expect(await checkoutRow()).toEqual({ status: 'open', payment_ref: null });
    };
    // Stripe's session took another amount (£19.99), then another currency: as the event says and as
    // Stripe says when asked.
    session.amount_total = 1999;
    const wrongAmount = fake.pay(String(session.id));
    Object.assign(session, { amount_total: 2000, currency: 'usd' });
    const wrongCurrency = fake.event('checkout.session.completed', session);
    session.currency = 'gbp';
    // Stripe's session is right, but the event names another amount.
    const wrongInEvent = fake.event('checkout.session.completed', { ...session, amount_total: 1 });
    for (const event of [wrongAmount, wrongCurrency, wrongInEvent]) {
      const answer = await deliver(event);
      expect(answer.statusCode).toBe(200);
      expect(answer.json()).toEqual({ received: true, outcome: 'mismatched' });
      await unchanged();
    }
    const warnings = mismatchWarnings();
    expect(warnings.map((w) => [w.level, w.event_id, w.event_type])).toEqual(
      [wrongAmount, wrongCurrency, wrongInEvent].map((e) => [40, e.id, 'checkout.session.completed']),
    );
    const logged = logLines.join('\n');
    for (const personal of [reference, 'Bloggs', '+447911123456', 'jo@example.com']) {
      expect(logged).not.toContain(personal);
    }

    // The deposit's own amount and currency confirm it.
    const right = await deliver(fake.event('checkout.session.completed', session));
    expect(right.json()).toEqual({ received: true, outcome: 'applied' });
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
  });

  it('refuses a forged signature with 400 and changes nothing', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    const paid = fake.pay(String(session.id));
    for (const forged of [
      await deliver(paid, { secret: 'whsec_someone_else' }),
      await deliver(paid, { signature: 't=1,v1=00' }),
      await t.app.inject({
        method: 'POST',
        url: '/webhooks/stripe',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(paid),
      }),
    ]) {
      expect(forged.statusCode).toBe(400);
      expect(forged.json().error).toMatchObject({ code: 'invalid_request', param: 'Stripe-Signature' });
    }
    expect((await bookingOf(reference)).status).toBe('pending_payment');
    expect(await t.database.db.selectFrom('payment_events').selectAll().execute()).toEqual([]);
  });

  it('applies what is true now whatever the order: a stale expiry after the payment changes nothing', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    // Stripe sent an expiry notice about the session as it was earlier, delivered after the payment's.
    const stale = fake.event('checkout.session.expired', { ...session, status: 'expired' });
    const paid = fake.pay(String(session.id));
    expect((await deliver(paid)).statusCode).toBe(200);
    expect((await deliver(stale)).statusCode).toBe(200);
    // And the payment's notice delivered again after both, under an event of its own.
    expect((await deliver(fake.event('checkout.session.async_payment_succeeded', session))).statusCode).toBe(
      200,
    );
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed' });
    expect((await eventsOf(reference)).map((e) => e.to_status)).toEqual(['pending_payment', 'confirmed']);
  });

  it('lets the hold lapse when Stripe expires the checkout', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    t.clock.advance({ minutes: 31 });
    expect((await deliver(fake.expire(String(session.id)))).statusCode).toBe(200);
    expect((await bookingOf(reference)).status).toBe('expired');
    const row = await t.database.db
      .selectFrom('checkout_sessions')
      .select('status')
      .where('id', '=', String(session.client_reference_id))
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('expired');
    expect((await eventsOf(reference)).at(-1)).toMatchObject({ to_status: 'expired' });
  });

  it('keeps a deposit held longer than Stripe keeps a session payable: the next session follows the expired one', async () => {
    // Soho holds an unpaid deposit two days; Stripe's sessions last 24 hours at most.
    const held = catalogue();
    const soho = (held.locations as Record<string, unknown>[]).find((l) => l.ref === 'soho')!;
    soho.policy = { pending_payment_hold_minutes: 2880 };
    await start([held]);
    const ids = await catalogueIds(t.database.db);
    const response = await postBooking(t, colourAtSoho(ids, { starts_at: '2026-11-30T10:00:00+00:00' }));
    expect(response.statusCode, response.body).toBe(201);
    const { reference, payment_url: paymentUrl, hold_expires_at: holdEnds } = response.json().data;
    expect(holdEnds).toBe('2026-11-25T09:00:00Z');
    const first = stripeSessionOf(new URL(paymentUrl).pathname.split('/')[2]);
    expect(first.expires_at).toBe(Date.parse('2026-11-24T08:59:00Z') / 1000);

    // A day on, Stripe expires its session: the booking is still held, and its link leads to a new one.
    t.clock.advance({ hours: 24 });
    const delivered = await deliver(fake.expire(String(first.id)));
    expect(delivered.statusCode, delivered.body).toBe(200);
    expect(await bookingOf(reference)).toMatchObject({
      status: 'pending_payment',
      hold_expires_at: holdEnds,
    });
    const sessions = [...fake.sessions.values()].filter(
      (s) => s.client_reference_id === first.client_reference_id,
    );
    expect(sessions).toHaveLength(2);
    const next = sessions.find((s) => s.id !== first.id)!;
    expect(next).toMatchObject({
      status: 'open',
      amount_total: 2000,
      success_url: first.success_url,
      cancel_url: first.cancel_url,
      // Again as long as Stripe allows: a minute before the hold ends, when it lapses with it.
      expires_at: Date.parse('2026-11-25T08:59:00Z') / 1000,
    });
    const link = await t.app.inject({ method: 'GET', url: new URL(paymentUrl).pathname });
    expect(link.statusCode).toBe(303);
    expect(link.headers.location).toBe(next.url);
    // Stripe telling of that expiry again opens nothing more (the same key, the same session).
    expect((await deliver(fake.event('checkout.session.expired', first))).statusCode).toBe(200);
    expect(
      [...fake.sessions.values()].filter((s) => s.client_reference_id === first.client_reference_id),
    ).toHaveLength(2);

    // Paid there, it is confirmed.
    expect((await deliver(fake.pay(String(next.id)))).json().outcome).toBe('applied');
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
  });

  it('opens the session that follows an expired one when Stripe is told of the expiry again, its first answer lost', async () => {
    // Soho holds an unpaid deposit four days: the session that follows lasts Stripe's 24 hours, from
    // when it is opened.
    const held = catalogue();
    const soho = (held.locations as Record<string, unknown>[]).find((l) => l.ref === 'soho')!;
    soho.policy = { pending_payment_hold_minutes: 5760 };
    await start([held]);
    const ids = await catalogueIds(t.database.db);
    const response = await postBooking(t, colourAtSoho(ids, { starts_at: '2026-11-30T10:00:00+00:00' }));
    expect(response.statusCode, response.body).toBe(201);
    const { reference, payment_url: paymentUrl } = response.json().data;
    const first = stripeSessionOf(new URL(paymentUrl).pathname.split('/')[2]);
    t.clock.advance({ hours: 24 });
    const expired = fake.expire(String(first.id));
    // Stripe opens the next session, but its answer never arrives: the delivery fails, to come again.
    fake.loseAnswersTo = '/v1/checkout/sessions';
    expect((await deliver(expired)).statusCode).not.toBe(200);
    fake.loseAnswersTo = null;
    // Stripe delivers the event again some minutes on: the next session is opened, the link leads there.
    t.clock.advance({ minutes: 10 });
    const again = await deliver(expired);
    expect(again.statusCode, again.body).toBe(200);
    const opened = [...fake.sessions.values()].filter(
      (s) => s.client_reference_id === first.client_reference_id && s.status === 'open',
    );
    expect(opened.length).toBeGreaterThan(0);
    const link = await t.app.inject({ method: 'GET', url: new URL(paymentUrl).pathname });
    expect(link.headers.location).toBe(opened.at(-1)!.url);
    expect(await bookingOf(reference)).toMatchObject({ status: 'pending_payment' });
  });

  it('refunds the deposit on a timely cancellation: deposit_refunded says so only once Stripe accepted', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    await deliver(fake.pay(String(session.id)));
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: { reason: 'ill' },
    });
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    expect(await bookingOf(reference)).toMatchObject({ deposit_status: 'refunded' });
    const refunds = [...fake.refunds.values()];
    expect(refunds).toEqual([
      expect.objectContaining({ amount: 2000, payment_intent: session.payment_intent }),
    ]);
    const create = fake.requests.find((r) => r.path === '/v1/refunds');
    expect(create?.idempotencyKey).toBe(`refund:${session.client_reference_id}`);
  });

  it('says the deposit was not refunded when Stripe refuses the refund', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    await deliver(fake.pay(String(session.id)));
    fake.refuseRefunds = true;
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: {},
    });
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: false });
    expect(await bookingOf(reference)).toMatchObject({ deposit_status: 'paid' });
    expect([...fake.refunds.values()]).toEqual([]);
  });

  it('tells the caller of a refund Stripe refused that the deposit goes back by hand, not that it is kept', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    await deliver(fake.pay(String(session.id)));
    fake.refuseRefunds = true;
    const mcp = await connectInProcess(t, t.keys.readWrite);
    const done = await mcp.call('cancel', { reference });
    await mcp.close();
    expect(done).toMatchObject({ ok: true, late: false, deposit_refunded: false, fee: null });
    expect(done.spoken).not.toMatch(/kept/);
    expect(done.spoken).toContain(
      'The deposit of 20 pounds could not be refunded automatically; the shop will return it.',
    );
  });

  it('changes nothing when Stripe cannot be reached for the refund (503), and cancels on a retry', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    await deliver(fake.pay(String(session.id)));
    // Stripe refunds, but its answers never arrive (the package's own retries, same key, included).
    fake.loseAnswersTo = '/v1/refunds';
    const cancel = () => t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: {} });
    const lost = await cancel();
    expect(lost.statusCode).toBe(503);
    expect(lost.json().error.code).toBe('payments_unavailable');
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
    expect(fake.requests.filter((r) => r.path === '/v1/refunds').length).toBeGreaterThan(1);
    fake.loseAnswersTo = null;
    const retried = await cancel();
    expect(retried.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    // The same idempotency key: Stripe's first refund is answered again, none is made twice.
    expect([...fake.refunds.values()]).toHaveLength(1);
  });
});

// The fee tests run the `booking` command (twice in the crash test): a few seconds each.
describe('Booking Protection cards and fees through Stripe', { timeout: 120_000 }, () => {
  async function saveCard(options: { declining?: boolean } = {}) {
    const { org, started, session } = await startProtectedSetup();
    expect(started.url).toBe(session.url);
    expect(session).toMatchObject({ mode: 'setup', currency: 'gbp' });
    expect((await deliver(fake.saveCard(String(session.id), options))).statusCode).toBe(200);
    return org.id;
  }

  function cli(args: string[]) {
    return {
      DATABASE_URL: t.database.url,
      PAYMENT_PROVIDER: 'stripe',
      STRIPE_SECRET_KEY: fake.secretKey,
      STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
      STRIPE_API_BASE: fake.url,
      args,
    };
  }

  async function noShow(organisationId: string) {
    t.clock.set('2026-11-26T11:00:00Z');
    await markNoShow(t.database.db, organisationId, PROTECTED, t.clock.nowMs());
  }

  /**
   * A no-show's fee charged by `booking bookings … charge-fee`, the command killed once Stripe has
   * charged the card and before it hears so (and before it writes anything): its arguments and
   * environment, to run it again, and the signal it ended on.
   */
  async function chargeFeeKilledAfterStripe() {
    await start();
    await noShow(await saveCard());
    const { args, ...env } = cli(['bookings', PROTECTED, 'charge-fee']);
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/booking.js'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: 'ignore',
    });
    fake.afterCreate = (kind) => {
      if (kind !== 'payment_intent') return false;
      child.kill('SIGKILL');
      return true;
    };
    const signal = await new Promise((resolve) => child.once('exit', (_code, ended) => resolve(ended)));
    return { args, env, signal };
  }

  it('saves the card in setup mode: payment_method_saved and the setup status follow Stripe', async () => {
    await start();
    expect((await bookingOf(PROTECTED)).status).toBe('pending_confirmation');
    await saveCard();
    const booking = await bookingOf(PROTECTED);
    expect(booking).toMatchObject({ status: 'confirmed' });
    expect(booking.booking_protection.setup).toMatchObject({
      status: 'succeeded',
      payment_method_saved: true,
    });
    expect(booking.pending_confirmation).toBeNull();
  });

  it('saves no card from a setup session that names an amount or another currency', async () => {
    await start();
    const { session } = await startProtectedSetup();
    session.amount_total = 4500;
    const charging = fake.saveCard(String(session.id));
    Object.assign(session, { amount_total: null, currency: 'eur' });
    const otherCurrency = fake.event('checkout.session.completed', session);
    for (const event of [charging, otherCurrency]) {
      const answer = await deliver(event);
      expect(answer.json()).toEqual({ received: true, outcome: 'mismatched' });
      const booking = await bookingOf(PROTECTED);
      expect(booking.status).toBe('pending_confirmation');
      expect(booking.booking_protection.setup).toMatchObject({
        status: 'pending',
        payment_method_saved: false,
      });
    }
    expect(mismatchWarnings()).toHaveLength(2);
    session.currency = 'gbp';
    const saved = await deliver(fake.event('checkout.session.completed', session));
    expect(saved.json()).toEqual({ received: true, outcome: 'applied' });
    expect(await bookingOf(PROTECTED)).toMatchObject({ status: 'confirmed' });
  });

  it('charges a no-show fee with staff charge-fee: an off-session PaymentIntent on the saved card', async () => {
    await start();
    await noShow(await saveCard());
    const { args, ...env } = cli(['bookings', PROTECTED, 'charge-fee']);
    const run = await runCliAsync(args, env);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`${PROTECTED}: no_show fee charged`);
    const charges = fake.charged();
    expect(charges).toEqual([expect.objectContaining({ amount: 4500, currency: 'gbp', off_session: true })]);
    expect((await bookingOf(PROTECTED)).no_show_fee).toMatchObject({
      status: 'charged',
      charge_amount_minor: 4500,
    });
  });

  it('refuses charge-fee run without the server’s PAYMENT_PROVIDER on a card Stripe saved, writing nothing', async () => {
    await start();
    await noShow(await saveCard());
    const { args, ...env } = cli(['bookings', PROTECTED, 'charge-fee']);
    const run = await runCliAsync(args, { DATABASE_URL: env.DATABASE_URL });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('saved with a payment provider and is charged only through it');
    expect(run.stdout).toBe('');
    expect(fake.charged()).toEqual([]);
    expect((await bookingOf(PROTECTED)).no_show_fee).toMatchObject({ status: null });
    const charged = await runCliAsync(args, env);
    expect(charged.stdout).toContain(`${PROTECTED}: no_show fee charged`);
  });

  it('records a declined fee as failed with Stripe’s reason', async () => {
    await start();
    await noShow(await saveCard({ declining: true }));
    const { args, ...env } = cli(['bookings', PROTECTED, 'charge-fee']);
    const run = await runCliAsync(args, env);
    expect(run.stdout).toContain(
      'no_show fee failed (Your card has insufficient funds. (insufficient_funds))',
    );
    const fee = await t.database.db.selectFrom('booking_fees').selectAll().executeTakeFirstOrThrow();
    expect(fee).toMatchObject({
      status: 'failed',
      failure_reason: 'Your card has insufficient funds. (insufficient_funds)',
    });
    expect(fake.charged()).toEqual([]);
  });

  it('never charges twice when the command dies between Stripe’s charge and the database write', async () => {
    const { args, env, signal } = await chargeFeeKilledAfterStripe();
    expect(signal).toBe('SIGKILL');
    expect(fake.charged()).toHaveLength(1);
    expect(
      (await t.database.db.selectFrom('booking_fees').select('status').executeTakeFirstOrThrow()).status,
    ).toBeNull();

    fake.afterCreate = null;
    const again = await runCliAsync(args, env);
    expect(again.stdout).toContain('no_show fee charged');
    expect(fake.charged()).toHaveLength(1);
  });

  it('records a fee the command died charging once the server settles it, charged once', async () => {
    await chargeFeeKilledAfterStripe();
    fake.afterCreate = null;
    expect(fake.charged()).toHaveLength(1);
    const { settlePaymentCalls } = await import('../../src/app/settle-payment-calls.ts');
    // The sweeper of `booking serve` finds the charge the command asked for (on the real clock), minutes later.
    const later = Date.now() + 5 * 60_000;
    expect(await settlePaymentCalls(t.database.db, t.deps.payments, later)).toBe(1);
    expect((await bookingOf(PROTECTED)).no_show_fee).toMatchObject({
      status: 'charged',
      charge_amount_minor: 4500,
      failure_reason: null,
    });
    expect(fake.charged()).toHaveLength(1);
    expect(await settlePaymentCalls(t.database.db, t.deps.payments, later)).toBe(0);
  });
});

describe('a Booking Protection hold with a deposit, finished on its booking page through Stripe', () => {
  it('settles the card and the deposit from Stripe’s webhooks, the last confirming; both return to the page', async () => {
    const { booked, reference, deposit } = await maxsProtectedColour();
    expect(booked.booking.pending_confirmation.requirements).toEqual(['protection_setup', 'deposit']);
    const pagePath = new URL(booked.booking_page_url).pathname;
    expect(new URL(String(deposit.success_url)).pathname).toBe(pagePath);
    // Its forms' answers redirect to Stripe's hosted pages (the stand-in's, here): its CSP names them.
    const formAction = async () =>
      /form-action [^;]*/.exec(
        String((await t.app.inject({ method: 'GET', url: pagePath })).headers['content-security-policy']),
      )?.[0];
    expect(await formAction()).toBe(`form-action 'self' https://checkout.stripe.com ${fake.url}`);

    // The page's "Save a card" opens Stripe Checkout in setup mode.
    const setup = await t.app.inject({
      method: 'POST',
      url: `${pagePath}/setup`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
      payload: '',
    });
    expect(setup.statusCode, setup.body).toBe(303);
    const card = [...fake.sessions.values()].find(
      (s) => s.mode === 'setup' && s.url === setup.headers.location,
    )!;
    expect(new URL(String(card.success_url)).pathname).toBe(pagePath);
    expect((await deliver(fake.saveCard(String(card.id)))).statusCode).toBe(200);
    expect(await bookingOf(reference)).toMatchObject({
      status: 'pending_confirmation',
      pending_confirmation: { requirements: ['deposit'] },
    });

    expect((await deliver(fake.pay(String(deposit.id)))).statusCode).toBe(200);
    expect(await bookingOf(reference)).toMatchObject({
      status: 'confirmed',
      deposit_status: 'paid',
      pending_confirmation: null,
      hold_expires_at: null,
    });
    expect(await eventsOf(reference)).toEqual([
      { from_status: null, to_status: 'pending_confirmation', actor: expect.any(String) },
      { from_status: 'pending_confirmation', to_status: 'confirmed', actor: 'payment:stripe' },
    ]);
    // Nothing left to hand over: the confirmed booking's page posts only here.
    expect(await formAction()).toBe("form-action 'self'");
  });

  it('does not ask the customer Stripe sent back to pay or save a card again before its webhooks arrive', async () => {
    const { booked, deposit } = await maxsProtectedColour();
    const pagePath = new URL(booked.booking_page_url).pathname;
    const setup = await t.app.inject({
      method: 'POST',
      url: `${pagePath}/setup`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
      payload: '',
    });
    const card = [...fake.sessions.values()].find(
      (s) => s.mode === 'setup' && s.url === setup.headers.location,
    )!;
    // Saved and paid on Stripe's pages, which send the customer back at once; the webhooks come after.
    fake.saveCard(String(card.id));
    fake.pay(String(deposit.id));
    for (const session of [card, deposit]) {
      const back = new URL(String(session.success_url));
      expect(back.pathname).toBe(pagePath);
      const shown = await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
      expect(shown.statusCode).toBe(200);
      expect(shown.body).toContain(
        'If you have just paid or saved a card, the payment provider is still telling us: this can take a minute. Reload this page to see it.',
      );
    }
    // Opened afresh (not back from Stripe), the page says nothing of it.
    expect((await t.app.inject({ method: 'GET', url: pagePath })).body).not.toContain(
      'If you have just paid',
    );
  });

  it('opens one customer and setup session at Stripe however often "Save a card" is pressed before it is used', async () => {
    const { booked } = await maxsProtectedColour();
    const pagePath = new URL(booked.booking_page_url).pathname;
    const press = () =>
      t.app.inject({
        method: 'POST',
        url: `${pagePath}/setup`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
        payload: '',
      });
    const setupSessions = () => [...fake.sessions.values()].filter((s) => s.mode === 'setup');
    const customersMade = () =>
      new Set(fake.requests.filter((r) => r.path === '/v1/customers').map((r) => r.idempotencyKey)).size;
    const first = await press();
    expect(first.statusCode, first.body).toBe(303);
    // Pressed again (a double click, or back from Stripe's page without saving): the same page.
    const again = await press();
    expect(again.statusCode, again.body).toBe(303);
    expect(again.headers.location).toBe(first.headers.location);
    expect(setupSessions()).toHaveLength(1);
    expect(customersMade()).toBe(1);
    // Once Stripe has expired it, a press opens a new one.
    expect((await deliver(fake.expire(String(setupSessions()[0]!.id)))).statusCode).toBe(200);
    const after = await press();
    expect(after.statusCode, after.body).toBe(303);
    expect(after.headers.location).not.toBe(first.headers.location);
    expect(setupSessions()).toHaveLength(2);
  });

  it("hands over to Stripe Checkout's origin only, against Stripe's own API", () => {
    const provider = (apiBase: string) =>
      makeStripeProvider({ secretKey: 'sk_test_x', webhookSecret: 'whsec_x', apiBase: new URL(apiBase) });
    expect(provider('https://api.stripe.com').handOverOrigins).toEqual(['https://checkout.stripe.com']);
    // A stand-in serves its hosted pages beside its API.
    expect(provider('http://127.0.0.1:12111').handOverOrigins).toEqual([
      'https://checkout.stripe.com',
      'http://127.0.0.1:12111',
    ]);
  });
});

describe('a series of Booking Protection holds, its card saved through Stripe on one visit', () => {
  it('saves the card of every visit from Stripe’s webhook, and a later visit’s fee is charged to it', async () => {
    await start([demoCatalogue()]);
    const mcp = await connectInProcess(t, t.keys.readWrite);
    const booked = await mcp.call('book', {
      location: 'islington',
      services: 'cut',
      starts_at: 'Wednesday 25 November at 2 pm',
      client: { first_name: 'Max', last_name: 'Ode', phone: '07911 778899' },
      repeat: { every_weeks: 1, count: 2 },
    });
    await mcp.close();
    expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true, status: 'pending_confirmation' });
    const refs = (booked.series as { occurrences: { reference: string }[] }).occurrences.map(
      (o) => o.reference,
    );
    expect(refs).toHaveLength(2);
    const setup = await t.app.inject({
      method: 'POST',
      url: `${new URL(booked.booking_page_url).pathname}/setup`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
      payload: '',
    });
    expect(setup.statusCode, setup.body).toBe(303);
    const card = [...fake.sessions.values()].find(
      (s) => s.mode === 'setup' && s.url === setup.headers.location,
    )!;
    expect((await deliver(fake.saveCard(String(card.id)))).statusCode).toBe(200);
    for (const reference of refs) {
      expect(await bookingOf(reference), reference).toMatchObject({
        status: 'confirmed',
        booking_protection: { setup: { status: 'succeeded', payment_method_saved: true } },
      });
    }
    // The second visit missed: its no-show fee goes to the card saved on the first.
    const org = await t.database.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    t.clock.set('2026-12-02T16:00:00Z');
    await markNoShow(t.database.db, org.id, refs[1]!, t.clock.nowMs());
    const fee = await chargeFee(t.database.db, org.id, refs[1]!, t.clock.nowMs(), undefined, t.deps.payments);
    expect(fee.fee).toMatchObject({ status: 'charged' });
    expect(fake.charged()).toEqual([expect.objectContaining({ off_session: true, customer: card.customer })]);
  });
});

describe('the local test mode’s card setup', () => {
  it('saves the card without asking for one, says it is a test mode, and 404s an unknown setup', async () => {
    t = await startTestApp({ catalogues: [catalogue()] });
    const org = await t.database.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    const started = await startCardSetup(
      t.database.db,
      t.deps.payments,
      org.id,
      PROTECTED,
      'http://localhost:80',
      t.clock.nowMs(),
    );
    const path = new URL(started.url).pathname;
    const page = await t.app.inject({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Test mode:</strong> this checkout takes no money');
    const saved = await t.app.inject({
      method: 'POST',
      url: path,
      headers: { origin: 'http://localhost:80', 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('Card saved');
    const booking = await bookingOf(PROTECTED);
    expect(booking.status).toBe('confirmed');
    expect(booking.booking_protection.setup).toMatchObject({
      status: 'succeeded',
      payment_method_saved: true,
    });
    expect((await t.app.inject({ method: 'GET', url: path })).statusCode).toBe(409);
    expect(
      (await t.app.inject({ method: 'GET', url: '/card-setup/00000000-0000-4000-8000-000000000000' }))
        .statusCode,
    ).toBe(404);
  });
});

describe('review: a payment the booking no longer awaits goes back', () => {
  const checkoutRow = (id: string) =>
    t.database.db
      .selectFrom('checkout_sessions')
      .select(['status', 'payment_ref', 'refund_ref'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  it('refunds a payment that arrives after the hold lapsed', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    t.clock.advance({ minutes: 31 });
    const paid = fake.pay(String(session.id));
    expect((await deliver(paid)).statusCode).toBe(200);
    expect((await bookingOf(reference)).status).toBe('expired');
    expect([...fake.refunds.values()]).toEqual([
      expect.objectContaining({ amount: 2000, payment_intent: session.payment_intent }),
    ]);
    expect((await checkoutRow(String(session.client_reference_id))).refund_ref).toMatch(/^re_/);
  });

  it('tells the customer Stripe sent back after the hold lapsed that their payment is refunded, not that none was made', async () => {
    await start();
    const { paymentUrl, session } = await bookWithDeposit();
    t.clock.advance({ minutes: 31 });
    const paid = fake.pay(String(session.id));
    const done = `${new URL(paymentUrl).pathname}/done`;
    for (const delivered of [false, true]) {
      if (delivered) expect((await deliver(paid)).statusCode).toBe(200);
      const back = await t.app.inject({ method: 'GET', url: done });
      expect(back.statusCode).toBe(409);
      expect(back.body).not.toContain('has not been paid');
      expect(back.body).toContain('If you paid on the payment page, the payment is refunded to you');
    }
  });

  it('refunds a payment that arrives after the appointment started, its hold minutes not yet run out', async () => {
    // Soho takes bookings 5 minutes ahead: a colour at 09:15 booked at 09:00 would be held until 09:30.
    const soon = catalogue();
    (soon.locations[0] as Record<string, unknown>).policy = { min_notice_minutes: 5 };
    await start([soon]);
    const ids = await catalogueIds(t.database.db);
    const response = await postBooking(t, colourAtSoho(ids, { starts_at: '2026-11-23T09:15:00Z' }));
    expect(response.statusCode, response.body).toBe(201);
    const { reference, payment_url } = response.json().data;
    const session = stripeSessionOf(new URL(payment_url).pathname.split('/')[2]);
    expect((await bookingOf(reference)).hold_expires_at).toBe('2026-11-23T09:15:00Z');
    t.clock.advance({ minutes: 20 });
    expect((await deliver(fake.pay(String(session.id)))).statusCode).toBe(200);
    expect(await bookingOf(reference)).toMatchObject({ status: 'expired', deposit_status: 'pending' });
    expect([...fake.refunds.values()]).toEqual([
      expect.objectContaining({ amount: 2000, payment_intent: session.payment_intent }),
    ]);
    expect((await checkoutRow(String(session.client_reference_id))).refund_ref).toMatch(/^re_/);
  });

  it('refunds an online payment of a deposit staff already took at the desk', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    const org = await t.database.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    await payDepositByStaff(t.database.db, org.id, reference, t.clock.nowMs());
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
    // The customer still had Stripe's page open, and pays there too.
    expect((await deliver(fake.pay(String(session.id)))).statusCode).toBe(200);
    expect([...fake.refunds.values()]).toEqual([
      expect.objectContaining({ amount: 2000, payment_intent: session.payment_intent }),
    ]);
    expect((await checkoutRow(String(session.client_reference_id))).refund_ref).toMatch(/^re_/);
    // Cancelled on time later: the desk's deposit is returned at the desk, Stripe refunds nothing more.
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: {},
    });
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    expect([...fake.refunds.values()]).toHaveLength(1);
  });

  /** The refunds asked of Stripe so far. */
  const refundsAsked = () =>
    fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/refunds').length;

  /**
   * Stripe refuses for good the refund of the payment of `session` (a 400), then reports the session
   * again (the payment's other event, the same event under another id): answered 200, asked no more.
   */
  async function refusedThenReportedAgain(session: Record<string, unknown>) {
    fake.refuseRefunds = true;
    expect((await deliver(fake.pay(String(session.id)))).statusCode).toBe(200);
    const asked = refundsAsked();
    expect(asked).toBeGreaterThan(0);
    const checkoutId = String(session.client_reference_id);
    const refused = await t.database.db
      .selectFrom('checkout_sessions')
      .select(['refund_ref', 'refund_refused_at', 'refund_refusal'])
      .where('id', '=', checkoutId)
      .executeTakeFirstOrThrow();
    expect(refused).toEqual({
      refund_ref: null,
      refund_refused_at: t.clock.nowMs(),
      refund_refusal: expect.stringMatching(/cannot be refunded/),
    });
    t.clock.advance({ minutes: 5 });
    for (const type of ['checkout.session.async_payment_succeeded', 'checkout.session.completed']) {
      expect((await deliver(fake.event(type, session))).json()).toEqual({
        received: true,
        outcome: 'applied',
      });
    }
    expect(refundsAsked()).toBe(asked);
    expect(await t.database.db.selectFrom('payment_calls').selectAll().execute()).toEqual([]);
    // Its refusal stays as it was first recorded.
    expect(await checkoutRow(checkoutId)).toMatchObject({ refund_ref: null });
    expect(
      await t.database.db
        .selectFrom('checkout_sessions')
        .select(['refund_refused_at', 'refund_refusal'])
        .where('id', '=', checkoutId)
        .executeTakeFirstOrThrow(),
    ).toEqual({ refund_refused_at: refused.refund_refused_at, refund_refusal: refused.refund_refusal });
  }

  it('asks Stripe no more for the refund of a payment after the hold lapsed that it refused for good, as more events come', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    t.clock.advance({ minutes: 31 });
    await refusedThenReportedAgain(session);
    expect((await bookingOf(reference)).status).toBe('expired');
  });

  it('asks Stripe no more for the refund of a second payment of a deposit taken at the desk that it refused for good', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    const org = await t.database.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    await payDepositByStaff(t.database.db, org.id, reference, t.clock.nowMs());
    await refusedThenReportedAgain(session);
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
  });
});

describe('review: a refund Stripe refused for good is shown to staff, to return by hand', () => {
  /** Jo's colour at Soho, paid after its hold lapsed (09:31 in London), its refund refused by Stripe for good. */
  async function paidLateRefundRefused() {
    await start();
    const { reference, session } = await bookWithDeposit();
    t.clock.advance({ minutes: 31 });
    fake.refuseRefunds = true;
    expect((await deliver(fake.pay(String(session.id)))).statusCode).toBe(200);
    expect(await bookingOf(reference)).toMatchObject({ status: 'expired', deposit_status: 'pending' });
    return reference;
  }

  /** A page's words, without its markup. */
  const wordsOf = (html: string) =>
    html
      .replace(/<[^>]+>/g, ' ')
      .replace(/&#39;|&#x27;|&rsquo;/g, '’')
      .replace(/\s+/g, ' ');

  it('says so on the booking’s console page: when, Stripe’s reason, and that it goes back by hand from the dashboard', async () => {
    const reference = await paidLateRefundRefused();
    const password = 'correct horse battery';
    await createUser(
      t.database.db,
      { organisationSlug: 'acme-hair', email: 'desk@acme.test', role: 'staff', password },
      t.clock.nowMs(),
    );
    const desk = await signInToConsole(t, 'acme-hair', 'desk@acme.test', password);
    const page = await desk.get(`/console/bookings/${reference}`);
    expect(page.statusCode).toBe(200);
    expect(wordsOf(page.body)).toContain(
      'Refund refused. The payment provider refused on 23 Nov 2026, 09:31 to refund the deposit paid online: “This charge cannot be refunded right now.” Return it by hand from the payment provider’s dashboard.',
    );
  });

  it('says so in the operator’s lookup, `booking bookings <reference>`, in the same words', async () => {
    const reference = await paidLateRefundRefused();
    const shown = await runCliAsync(['bookings', reference.toLowerCase()], { DATABASE_URL: t.database.url });
    expect(shown.stderr).toBe('');
    expect(shown.status).toBe(0);
    expect(shown.stdout.split('\n')).toEqual(
      expect.arrayContaining([
        `${reference}: expired`,
        'Refund refused: The payment provider refused on 2026-11-23T09:31:00Z to refund the deposit paid online: “This charge cannot be refunded right now.” Return it by hand from the payment provider’s dashboard.',
      ]),
    );
  });
});

describe('review: amounts in Stripe’s units for currencies it counts differently', () => {
  /** The small catalogue in Icelandic krónur: whole krónur here (as the pages show them), hundredths at Stripe. */
  function kronaCatalogue() {
    const text = JSON.stringify(catalogue()).replaceAll('"GBP"', '"ISK"');
    return JSON.parse(text) as ReturnType<typeof catalogue>;
  }

  it('asks Stripe for the deposit the booking shows, and confirms on its payment', async () => {
    await start([kronaCatalogue()]);
    const ids = await catalogueIds(t.database.db);
    const response = await postBooking(t, colourAtSoho(ids));
    expect(response.statusCode).toBe(201);
    const data = response.json().data;
    expect(data.deposit).toEqual({ amount: 2000, currency: 'ISK' });
    const checkoutId = new URL(data.payment_url).pathname.split('/')[2]!;
    const session = stripeSessionOf(checkoutId);
    // ISK 2,000 is 200000 in Stripe's API (ISK stays two-decimal there).
    expect(session).toMatchObject({ amount_total: 200000, currency: 'isk' });
    expect((await deliver(fake.pay(String(session.id)))).json().outcome).toBe('applied');
    expect(await bookingOf(data.reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${data.reference}/cancel`,
      payload: {},
    });
    expect(cancelled.json().data).toMatchObject({ deposit_refunded: true });
    expect([...fake.refunds.values()]).toEqual([expect.objectContaining({ amount: 200000 })]);
  });
});

describe.runIf(onPostgres)('review: Stripe’s payment and a cancellation at once (PostgreSQL)', () => {
  it.each(['payment', 'cancellation'])(
    'leaves no paid deposit on a cancelled booking without its refund, nor a cancelled booking confirmed (%s first)',
    async (first) => {
      await start();
      const { reference, session } = await bookWithDeposit();
      const other = t.database.reopen();
      try {
        await other.db.connection().execute(async (conn) => {
          // Another writer holds the booking's row a moment, so both requests read it before either writes.
          await sql`begin`.execute(conn);
          await sql`select 1 from bookings where reference = ${reference} for update`.execute(conn);
          const pay = () => deliver(fake.pay(String(session.id)));
          const cancelIt = () =>
            t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: {} });
          const paid = first === 'payment' ? pay() : sleep(300).then(pay);
          const cancel = first === 'payment' ? sleep(300).then(cancelIt) : cancelIt();
          await sleep(600);
          await sql`rollback`.execute(conn);
          const [paidAnswer, cancelAnswer] = await Promise.all([paid, cancel]);
          expect(paidAnswer.statusCode).toBe(200);
          const booking = await bookingOf(reference);
          if (cancelAnswer.statusCode === 200) {
            expect(booking.status).toBe('cancelled');
            // The deposit Stripe took went back.
            expect([...fake.refunds.values()]).toHaveLength(1);
          } else {
            expect(booking).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
          }
        });
      } finally {
        await other.close();
      }
    },
  );
});

describe.runIf(onPostgres)('review: Stripe’s payment and the desk’s at once (PostgreSQL)', () => {
  it('refunds the online payment of a deposit staff took at the desk at the same moment', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    const org = await t.database.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    const other = t.database.reopen();
    try {
      await other.db.connection().execute(async (conn) => {
        await sql`begin`.execute(conn);
        await sql`select 1 from bookings where reference = ${reference} for update`.execute(conn);
        const desk = payDepositByStaff(t.database.db, org.id, reference, t.clock.nowMs()).then(
          () => 'ok',
          (error: Error) => error.message,
        );
        await untilLockWaiters(other.db, 1);
        const paid = deliver(fake.pay(String(session.id)));
        await untilLockWaiters(other.db, 2);
        await sql`rollback`.execute(conn);
        expect((await paid).statusCode).toBe(200);
        expect(await desk).toBe('ok');
      });
    } finally {
      await other.close();
    }
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
    // Paid twice, once at the desk and once at Stripe: Stripe's goes back.
    expect([...fake.refunds.values()]).toEqual([expect.objectContaining({ amount: 2000 })]);
  });
});

describe('review: a Booking Protection hold whose deposit was paid but whose card never came', () => {
  it('does not keep the deposit of the hold that lapsed', async () => {
    const reference = await paidProtectedHold();
    expect(await bookingOf(reference)).toMatchObject({
      status: 'pending_confirmation',
      deposit_status: 'paid',
    });
    // The card is never saved: the hold lapses.
    t.clock.advance({ hours: 3 });
    const { expireLapsedHolds, refundLapsedDeposits } = await import('../../src/app/hold-sweeper.ts');
    await expireLapsedHolds(t.database.db, t.clock.nowMs());
    // The sweep returns its deposit, once: a second sweep finds nothing left to refund.
    const payments = stripeProvider();
    // Not a week later (a refund refused for good, or a hold settled by hand, is not asked for ever).
    const weekLater = t.clock.nowMs() + 8 * 24 * 60 * 60 * 1000;
    expect(await refundLapsedDeposits(t.database.db, payments, weekLater)).toBe(0);
    expect(await refundLapsedDeposits(t.database.db, payments, t.clock.nowMs())).toBe(1);
    expect(await refundLapsedDeposits(t.database.db, payments, t.clock.nowMs())).toBe(0);
    const after = await bookingOf(reference);
    expect(after.status).toBe('expired');
    // Paid for a booking that never was: refunded, or at least not still "paid" with nothing owed back.
    expect({ deposit_status: after.deposit_status, refunds: fake.refunds.size }).toEqual({
      deposit_status: 'refunded',
      refunds: 1,
    });
  });
});

describe.runIf(onPostgres)('a card saved as the booking is cancelled (PostgreSQL)', () => {
  it('leaves the cancelled booking cancelled: the card is kept, the booking not confirmed', async () => {
    await start();
    const { session } = await startProtectedSetup();
    const other = t.database.reopen();
    try {
      await other.db.connection().execute(async (conn) => {
        // A cancellation that has written the booking and not yet committed: the card's confirmation
        // reads the hold as it was, then waits on the row.
        await sql`begin`.execute(conn);
        await sql`update bookings set status = 'cancelled', cancelled_at = ${t.clock.nowMs()} where reference = ${PROTECTED}`.execute(
          conn,
        );
        const saved = deliver(fake.saveCard(String(session.id)));
        await untilLockWaiters(other.db);
        await sql`commit`.execute(conn);
        expect((await saved).statusCode).toBe(200);
      });
    } finally {
      await other.close();
    }
    const booking = await bookingOf(PROTECTED);
    expect(booking.status).toBe('cancelled');
    expect(booking.booking_protection.setup).toMatchObject({ payment_method_saved: true });
    expect((await eventsOf(PROTECTED)).filter((e) => e.to_status === 'confirmed')).toEqual([]);
  });
});

/** Holds Stripe's answers until the returned function is called. */
function slowStripe(): () => void {
  let release!: () => void;
  fake.holdAnswers = new Promise<void>((resolve) => {
    release = resolve;
  });
  return () => {
    fake.holdAnswers = null;
    release();
  };
}
const untilStripeAsked = async (path: string) => {
  while (!fake.requests.some((r) => r.method === 'POST' && r.path === path)) await sleep(5);
};
/** The answer's status, or 'waiting' when it has not come within 5 s. */
const within5s = (answer: Promise<{ statusCode: number }>) =>
  Promise.race([answer.then((r) => r.statusCode), sleep(5_000).then(() => 'waiting')]);
/** A cut at Soho on Tuesday afternoon, booked meanwhile: its status, or 'waiting'. */
const cutMeanwhile = (ids: CatalogueIds) =>
  within5s(
    postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-24T15:00:00+00:00',
    }),
  );

describe('Stripe is called before the write transaction, never inside it', () => {
  it('books another slot at the location while a deposit waits for its checkout', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const release = slowStripe();
    const deposit = postBooking(t, colourAtSoho(ids), { idempotencyKey: 'slow-stripe-deposit' });
    await untilStripeAsked('/v1/checkout/sessions');
    const otherStatus = await cutMeanwhile(ids);
    release();
    expect(otherStatus).toBe(201);
    const booked = await deposit;
    expect(booked.statusCode).toBe(201);
    const data = booked.json().data;
    expect(data).toMatchObject({ status: 'pending_payment', deposit: { amount: 2000, currency: 'GBP' } });
    // Its payment link leads to the session Stripe opened, which names the booking.
    const checkoutId = new URL(data.payment_url).pathname.split('/')[2]!;
    const session = stripeSessionOf(checkoutId);
    expect(session.metadata).toMatchObject({ booking_reference: data.reference });
    const link = await t.app.inject({ method: 'GET', url: new URL(data.payment_url).pathname });
    expect(link.statusCode).toBe(303);
    expect(link.headers.location).toBe(session.url);
    // The replay answers the same booking; Stripe was asked once.
    const replay = await postBooking(t, colourAtSoho(ids), { idempotencyKey: 'slow-stripe-deposit' });
    expect(replay.json().data.reference).toBe(data.reference);
    expect(fake.requests.filter((r) => r.path === '/v1/checkout/sessions')).toHaveLength(1);
  });

  it('refuses a deposit booking whose slot was taken while Stripe answered, writing nothing of it', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const release = slowStripe();
    const deposit = postBooking(t, colourAtSoho(ids, { staff_id: ids.staff.ana }));
    await untilStripeAsked('/v1/checkout/sessions');
    const taker = postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: STARTS_AT,
    });
    const takerStatus = await within5s(taker);
    release();
    expect(takerStatus).toBe(201);
    const refused = await deposit;
    expect(refused.statusCode).toBe(409);
    const colour = await t.database.db
      .selectFrom('bookings')
      .select('id')
      .where('deposit_minor', 'is not', null)
      .execute();
    expect(colour).toHaveLength(0);
    expect(await t.database.db.selectFrom('checkout_sessions').select('id').execute()).toHaveLength(0);
  });

  it('answers 503 and writes nothing when Stripe cannot be reached for the checkout', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    fake.loseAnswersTo = '/v1/checkout/sessions';
    const refused = await postBooking(t, colourAtSoho(ids));
    expect(refused.statusCode).toBe(503);
    expect(refused.json().error.code).toBe('payments_unavailable');
    expect(await t.database.db.selectFrom('checkout_sessions').select('id').execute()).toHaveLength(0);
    const held = await t.database.db
      .selectFrom('bookings')
      .select('id')
      .where('reference', '!=', PROTECTED)
      .execute();
    expect(held).toHaveLength(0);
  });

  it('waits for Stripe to open checkouts and card setups at most the minute a request waits for it, across all it opens', async () => {
    const { PROVIDER_WAIT_MS } = await import('../../src/app/payment-calls.ts');
    /** Each opening's deadline, and how far ahead of it it was. */
    const asked: { deadline: number | undefined; ahead: number }[] = [];
    const note = (deadline: number | undefined) => {
      asked.push({ deadline, ahead: (deadline ?? Number.POSITIVE_INFINITY) - performance.now() });
    };
    const watched = (stripe: StripeProvider): StripeProvider => ({
      ...stripe,
      openCheckout: (session, base, deadline) => {
        note(deadline);
        return stripe.openCheckout(session, base, deadline);
      },
      openCardSetup: (setup, base, deadline) => {
        note(deadline);
        return stripe.openCardSetup(setup, base, deadline);
      },
    });
    await start(undefined, watched);
    const ids = await catalogueIds(t.database.db);
    const series = await postBooking(t, colourAtSoho(ids, { repeat: { every_weeks: 1, count: 3 } }));
    expect(series.statusCode).toBe(201);
    await startProtectedSetup();
    expect(asked).toHaveLength(4);
    for (const { ahead } of asked) expect(ahead).toBeLessThanOrEqual(PROVIDER_WAIT_MS);
    // The series' three checkouts, one request: one deadline.
    expect(new Set(asked.slice(0, 3).map((a) => a.deadline)).size).toBe(1);
  });

  it.each(['checkout', 'card setup'])(
    'gives up opening a %s at Stripe by the request’s deadline, and asks it nothing after',
    { timeout: 15_000 },
    async (what) => {
      await start();
      fake.delayAnswers = 10_000;
      const startedAt = performance.now();
      const deadline = startedAt + 4_000;
      const now = t.clock.nowMs();
      const stripe = stripeProvider();
      const opened =
        what === 'checkout'
          ? stripe.openCheckout(
              {
                id: '5b0a6f8e-3c1d-4e2f-9a7b-1c2d3e4f5a6b',
                bookingReference: 'AC-SLOW01',
                amountMinor: 2000,
                currency: 'GBP',
                expiresAt: now + 30 * 60_000,
                createdAt: now,
              },
              'http://localhost',
              deadline,
            )
          : stripe.openCardSetup(
              {
                id: '5b0a6f8e-3c1d-4e2f-9a7b-1c2d3e4f5a6c',
                bookingReference: 'AC-SLOW01',
                currency: 'GBP',
                expiresAt: now + 30 * 60_000,
                createdAt: now,
              },
              'http://localhost',
              deadline,
            );
      await expectGivenUpBy(opened, startedAt, deadline);
    },
  );

  it('opens one checkout per visit of a series with deposits, each once, naming its visit', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const response = await postBooking(t, colourAtSoho(ids, { repeat: { every_weeks: 1, count: 3 } }));
    expect(response.statusCode).toBe(201);
    const visits = response.json().data.series.occurrences as { reference: string; payment_url: string }[];
    expect(visits).toHaveLength(3);
    expect(fake.requests.filter((r) => r.path === '/v1/checkout/sessions')).toHaveLength(3);
    for (const visit of visits) {
      await expectStripeCheckout(new URL(visit.payment_url).pathname.split('/')[2]!, visit.reference);
    }
  });

  it('offers a waitlist entry a time with a deposit, its checkout opened at Stripe', async () => {
    await start();
    expect(await offerFreedTimes(await colourFreedForDee())).toBe(1);
    const hold = await onlyCheckout();
    await expectStripeCheckout(hold.id, hold.reference);
  });

  it('keeps a waitlist offer’s Stripe checkout payable for the deposit’s hold after a late claim', async () => {
    await start();
    expect(await offerFreedTimes(await colourFreedForDee())).toBe(1);
    const hold = await onlyCheckout();
    const session = stripeSessionOf(hold.id);
    // Offered at 09:00 for 15 minutes; a claim then holds it 30 more for the deposit: 09:45 at most.
    expect(session.expires_at).toBe(Date.parse('2026-11-23T09:45:00Z') / 1000);
    const page = await t.database.db
      .selectFrom('booking_pages as p')
      .innerJoin('bookings as b', 'b.id', 'p.booking_id')
      .select('p.token')
      .where('b.reference', '=', hold.reference)
      .executeTakeFirstOrThrow();
    t.clock.advance({ minutes: 14 });
    const claimed = await t.app.inject({
      method: 'POST',
      url: `/p/manage/${page.token}/claim`,
      headers: { origin: 'http://localhost:80', 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(claimed.statusCode, claimed.body).toBe(303);
    expect((await bookingOf(hold.reference)).hold_expires_at).toBe('2026-11-23T09:44:00Z');
    t.clock.advance({ minutes: 25 });
    expect((await deliver(fake.pay(String(session.id)))).json().outcome).toBe('applied');
    expect(await bookingOf(hold.reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
    expect([...fake.refunds.values()]).toEqual([]);
  });

  it('offers a waitlist entry its freed time at a later pass when Stripe could not be reached for the checkout', async () => {
    await start();
    const deps = await colourFreedForDee();
    // Stripe is out: nothing is offered, nothing written, and the pass says it failed.
    fake.loseAnswersTo = '/v1/checkout/sessions';
    await expect(offerFreedTimes(deps)).rejects.toMatchObject({ code: 'payments_unavailable' });
    expect(await t.database.db.selectFrom('waitlist_offers').select('booking_id').execute()).toHaveLength(0);
    expect(await t.database.db.selectFrom('checkout_sessions').select('id').execute()).toHaveLength(0);
    // Stripe is back: a later pass offers the time, as after any other failed pass.
    fake.loseAnswersTo = null;
    t.clock.advance({ seconds: 10 });
    expect(await offerFreedTimes(deps)).toBe(1);
    const hold = await onlyCheckout();
    await expectStripeCheckout(hold.id, hold.reference);
  });

  it('books a deposit from the console with its checkout opened at Stripe', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const created = await bookForCaller(
      t.database.db,
      { id: 'desk', organisationId: ids.organisation },
      {
        locationSlug: 'soho',
        serviceIds: [ids.services.colour!],
        staffId: ids.staff.ana!,
        startsAt: Date.parse(STARTS_AT),
        client: { firstName: 'Wal', lastName: 'Kin', email: 'wal@example.com' },
      },
      t.clock.nowMs(),
      { payments: t.deps.payments, publicBaseUrl: 'http://localhost' },
    );
    expect(created.booking.status).toBe('pending_payment');
    await expectStripeCheckout((await onlyCheckout()).id, created.booking.reference);
  });

  it('books at the location while a card setup waits for Stripe', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const release = slowStripe();
    const setup = startProtectedSetup();
    await untilStripeAsked('/v1/customers');
    const otherStatus = await cutMeanwhile(ids);
    release();
    expect(otherStatus).toBe(201);
    const { started, session } = await setup;
    expect(session).toMatchObject({ mode: 'setup', url: started.url });
  });
});

describe('refunds and fee charges ask Stripe between transactions, never inside one', () => {
  /**
   * Transactions open on the database while Stripe answers: on PostgreSQL, the backends idle in one
   * (each holding its locks and a connection); SQLite's one writer is seen by booking meanwhile.
   */
  const openTransactions = async () => {
    if (!onPostgres) return 0;
    const { rows } = await sql<{ open: number }>`
      select count(*)::int as open from pg_stat_activity
      where datname = current_database() and state like 'idle in transaction%'`.execute(t.database.db);
    return rows[0]!.open;
  };
  const paymentCalls = () =>
    t.database.db
      .selectFrom('payment_calls' as never)
      .selectAll()
      .execute() as Promise<Record<string, unknown>[]>;
  /** Jo's colour at Soho, its £20 deposit paid through Stripe. */
  async function paidColour() {
    const booked = await bookWithDeposit();
    expect((await deliver(fake.pay(String(booked.session.id)))).statusCode).toBe(200);
    return booked;
  }
  const cancel = (reference: string, payload: Record<string, unknown> = {}) =>
    t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload });
  /** Cancels `reference` while Stripe's answers to refunds are lost: 503, its refund made and in doubt. */
  async function cancelInDoubt(reference: string, payload: Record<string, unknown> = {}) {
    fake.loseAnswersTo = '/v1/refunds';
    expect((await cancel(reference, payload)).statusCode).toBe(503);
    fake.loseAnswersTo = null;
  }
  /**
   * Kings Cross's protected booking, its card saved through Stripe, marked a no-show on Thursday at
   * 11:00: its organisation, and `charge`, which charges its no-show fee now through `payments` (this
   * test's Stripe unless said).
   */
  async function noShowWithSavedCard() {
    await start();
    const { org, session } = await startProtectedSetup();
    expect((await deliver(fake.saveCard(String(session.id)))).statusCode).toBe(200);
    t.clock.set('2026-11-26T11:00:00Z');
    await markNoShow(t.database.db, org.id, PROTECTED, t.clock.nowMs());
    const charge = (payments: typeof t.deps.payments = t.deps.payments) =>
      chargeFee(t.database.db, org.id, PROTECTED, t.clock.nowMs(), undefined, payments);
    return { org, charge };
  }
  /** noShowWithSavedCard, its fee charged while Stripe's answers are lost: the charge made, in doubt. */
  async function noShowChargeInDoubt() {
    const noShow = await noShowWithSavedCard();
    fake.loseAnswersTo = '/v1/payment_intents';
    await expect(noShow.charge()).rejects.toMatchObject({ code: 'payments_unavailable' });
    fake.loseAnswersTo = null;
    return noShow;
  }
  /** The sweeper's recovery of what was asked of Stripe and never written, as it runs minutes later. */
  const settleLater = async () => {
    const { settlePaymentCalls } = await import('../../src/app/settle-payment-calls.ts');
    return settlePaymentCalls(t.database.db, stripeProvider(), t.clock.nowMs() + 5 * 60_000);
  };

  it('books at the location while a cancellation’s refund waits for Stripe', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const { reference, session } = await paidColour();
    const release = slowStripe();
    const cancelled = cancel(reference, { reason: 'ill' });
    await untilStripeAsked('/v1/refunds');
    const open = await openTransactions();
    const otherStatus = await cutMeanwhile(ids);
    release();
    expect({ open, otherStatus }).toEqual({ open: 0, otherStatus: 201 });
    const answer = await cancelled;
    expect(answer.statusCode).toBe(200);
    expect(answer.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect([...fake.refunds.values()]).toEqual([
      expect.objectContaining({ amount: 2000, payment_intent: session.payment_intent }),
    ]);
    expect(fake.requests.find((r) => r.path === '/v1/refunds')?.idempotencyKey).toBe(
      `refund:${session.client_reference_id}`,
    );
    expect(await paymentCalls()).toEqual([]);
  });

  it('cancels a series’ following visits, refunding each paid deposit, while booking goes on', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const response = await postBooking(t, colourAtSoho(ids, { repeat: { every_weeks: 1, count: 3 } }));
    expect(response.statusCode).toBe(201);
    const visits = response.json().data.series.occurrences as { reference: string; payment_url: string }[];
    for (const visit of visits) {
      const session = stripeSessionOf(new URL(visit.payment_url).pathname.split('/')[2]);
      expect((await deliver(fake.pay(String(session.id)))).statusCode).toBe(200);
    }
    const release = slowStripe();
    const cancelled = cancel(visits[0]!.reference, { scope: 'following' });
    while (fake.requests.filter((r) => r.path === '/v1/refunds').length < 3) await sleep(5);
    const open = await openTransactions();
    const otherStatus = await cutMeanwhile(ids);
    release();
    expect({ open, otherStatus }).toEqual({ open: 0, otherStatus: 201 });
    const answer = await cancelled;
    expect(answer.statusCode, answer.body).toBe(200);
    const data = answer.json().data;
    expect([data, ...data.following].map((c: { deposit_refunded: boolean }) => c.deposit_refunded)).toEqual([
      true,
      true,
      true,
    ]);
    for (const visit of visits) {
      expect(await bookingOf(visit.reference)).toMatchObject({
        status: 'cancelled',
        deposit_status: 'refunded',
      });
    }
    expect(fake.refunds.size).toBe(3);
    expect(await paymentCalls()).toEqual([]);
  });

  it('books at the location while a payment after the hold lapsed is refunded', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const { reference, session } = await bookWithDeposit();
    t.clock.advance({ minutes: 31 });
    const release = slowStripe();
    const delivered = deliver(fake.pay(String(session.id)));
    await untilStripeAsked('/v1/refunds');
    const open = await openTransactions();
    const otherStatus = await cutMeanwhile(ids);
    release();
    expect({ open, otherStatus }).toEqual({ open: 0, otherStatus: 201 });
    expect((await delivered).json()).toEqual({ received: true, outcome: 'applied' });
    expect((await bookingOf(reference)).status).toBe('expired');
    const row = await t.database.db
      .selectFrom('checkout_sessions')
      .select(['payment_ref', 'refund_ref'])
      .where('id', '=', String(session.client_reference_id))
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ payment_ref: session.payment_intent, refund_ref: expect.stringMatching(/^re_/) });
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('books at the location while a no-show fee is charged to the saved card', async () => {
    const { charge } = await noShowWithSavedCard();
    const ids = await catalogueIds(t.database.db);
    const release = slowStripe();
    const charged = charge();
    await untilStripeAsked('/v1/payment_intents');
    const open = await openTransactions();
    // A cut at Soho on Monday, booked meanwhile.
    const otherStatus = await within5s(
      postBooking(t, {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        client_id: ids.jo,
        starts_at: '2026-11-30T10:00:00+00:00',
      }),
    );
    release();
    expect({ open, otherStatus }).toEqual({ open: 0, otherStatus: 201 });
    const { fee } = await charged;
    expect(fee).toMatchObject({ status: 'charged', chargeAmountMinor: 4500 });
    expect(fake.charged()).toHaveLength(1);
    expect(fake.requests.find((r) => r.path === '/v1/payment_intents')?.idempotencyKey).toMatch(
      /^charge:.+:no_show$/,
    );
    expect(await paymentCalls()).toEqual([]);
  });

  it('completes a cancellation whose refund Stripe made but whose answer was lost: refunded once', async () => {
    await start();
    const { reference } = await paidColour();
    fake.loseAnswersTo = '/v1/refunds';
    const lost = await cancel(reference, { reason: 'ill' });
    expect(lost.statusCode).toBe(503);
    expect(lost.json().error.code).toBe('payments_unavailable');
    expect(fake.refunds.size).toBe(1);
    // Not cancelled yet, and not to be changed otherwise while its refund is in doubt.
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
    expect(await paymentCalls()).toHaveLength(1);
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: '2026-11-24T12:00:00+00:00' },
    });
    expect(moved.statusCode).toBe(409);
    expect(moved.json().error.message).toMatch(/cancellation/);
    // Nothing to settle yet: the request may still be waiting for Stripe.
    const { settlePaymentCalls } = await import('../../src/app/settle-payment-calls.ts');
    expect(await settlePaymentCalls(t.database.db, stripeProvider(), t.clock.nowMs())).toBe(0);
    fake.loseAnswersTo = null;
    expect(await settleLater()).toBe(1);
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    const row = await t.database.db
      .selectFrom('bookings')
      .select(['deposit_refunded', 'cancel_reason'])
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ deposit_refunded: 1, cancel_reason: 'ill' });
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
    expect(await settleLater()).toBe(0);
  });

  /**
   * A call in doubt asked again (`again`) 110 s after it was first asked, Stripe slow to answer, when
   * the sweeper comes by, two minutes after the first ask: the request may wait a minute more, so the
   * call is still its own. What the sweeper completed, and the request's answer.
   */
  async function askAgainAsTheSweeperComes<T>(
    again: () => Promise<T>,
  ): Promise<{ swept: number; answer: T }> {
    const askedAt = t.clock.nowMs();
    t.clock.advance({ seconds: 110 });
    fake.delayAnswers = 1_500;
    const asked = fake.requests.length;
    const answered = again();
    while (fake.requests.length === asked) await sleep(5);
    const { settlePaymentCalls, SETTLE_AFTER_MS } = await import('../../src/app/settle-payment-calls.ts');
    const swept = await settlePaymentCalls(
      t.database.db,
      stripeProvider(),
      askedAt + SETTLE_AFTER_MS + 5_000,
    );
    const answer = await answered;
    fake.delayAnswers = 0;
    return { swept, answer };
  }

  it('leaves a call in doubt to the request that asked again while it waits for Stripe: the sweeper does not take it meanwhile', async () => {
    await start();
    const { reference } = await paidColour();
    await cancelInDoubt(reference, { reason: 'ill' });
    const { swept, answer } = await askAgainAsTheSweeperComes(() => cancel(reference, { reason: 'ill' }));
    expect(swept).toBe(0);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('leaves a fee charge asked again to its request while it waits for Stripe: the sweeper does not take it meanwhile', async () => {
    const { charge } = await noShowChargeInDoubt();
    const { swept, answer } = await askAgainAsTheSweeperComes(charge);
    const { fee } = answer;
    expect(swept).toBe(0);
    expect(fee).toMatchObject({ status: 'charged', chargeAmountMinor: 4500 });
    expect(fake.charged()).toHaveLength(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('gives up on a Stripe too slow to answer by the request’s deadline, and asks it nothing after', {
    timeout: 15_000,
  }, async () => {
    await start();
    const { session } = await paidColour();
    fake.delayAnswers = 10_000;
    const startedAt = performance.now();
    const deadline = startedAt + 4_000;
    const refund = stripeProvider().refund({
      key: String(session.client_reference_id),
      paymentRef: String(session.payment_intent),
      amountMinor: 2000,
      currency: 'GBP',
      askedBefore: true,
      deadline,
    });
    await expectGivenUpBy(refund, startedAt, deadline);
  });

  it('waits for Stripe, across every ask of a cancellation and of the sweeper completing it, well under the time after which the sweeper takes it over', async () => {
    const { SETTLE_AFTER_MS } = await import('../../src/app/settle-payment-calls.ts');
    /** How far ahead of each refund's ask its deadline was. */
    const ahead: (number | undefined)[] = [];
    const watched = (stripe: StripeProvider): StripeProvider => ({
      ...stripe,
      refund: (request) => {
        ahead.push(request.deadline === undefined ? undefined : request.deadline - performance.now());
        return stripe.refund(request);
      },
    });
    await start(undefined, watched);
    const { reference } = await paidColour();
    await cancelInDoubt(reference);
    const { settlePaymentCalls } = await import('../../src/app/settle-payment-calls.ts');
    expect(
      await settlePaymentCalls(t.database.db, watched(stripeProvider()), t.clock.nowMs() + SETTLE_AFTER_MS),
    ).toBe(1);
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect(ahead).toHaveLength(2);
    for (const left of ahead) expect(left).toBeLessThanOrEqual(SETTLE_AFTER_MS / 2);
  });

  it('completes a cancellation when the process died between Stripe’s refund and the write', async () => {
    await start();
    const { reference } = await paidColour();
    const org = await t.database.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    const stripe = stripeProvider();
    const { cancelBooking } = await import('../../src/app/booking-changes.ts');
    // Stripe refunds; the process is gone before it hears so (nothing after the call runs).
    const dying = {
      ...stripe,
      refund: async (request: Parameters<typeof stripe.refund>[0]) => {
        await stripe.refund(request);
        throw new Error('the process died');
      },
    };
    await expect(
      cancelBooking(
        t.database.db,
        { organisationId: org.id, actor: 'staff', payments: dying },
        reference,
        undefined,
        t.clock.nowMs(),
      ),
    ).rejects.toThrow('the process died');
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toHaveLength(1);
    expect(await settleLater()).toBe(1);
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('refunds a payment after the hold lapsed once Stripe answers again, when it did not at first', async () => {
    await start();
    const { session } = await bookWithDeposit();
    t.clock.advance({ minutes: 31 });
    fake.loseAnswersTo = '/v1/refunds';
    expect((await deliver(fake.pay(String(session.id)))).json()).toEqual({
      received: true,
      outcome: 'applied',
    });
    const refundRef = async () =>
      (
        await t.database.db
          .selectFrom('checkout_sessions')
          .select('refund_ref')
          .where('id', '=', String(session.client_reference_id))
          .executeTakeFirstOrThrow()
      ).refund_ref;
    expect(await refundRef()).toBeNull();
    expect(await paymentCalls()).toHaveLength(1);
    fake.loseAnswersTo = null;
    expect(await settleLater()).toBe(1);
    expect(await refundRef()).toMatch(/^re_/);
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('charges a fee Stripe could not be reached for once asked again, and refuses its waiver meanwhile', async () => {
    const { org, charge } = await noShowChargeInDoubt();
    expect(fake.charged()).toHaveLength(1);
    expect((await bookingOf(PROTECTED)).no_show_fee).toMatchObject({ status: null });
    await expect(waiveFee(t.database.db, org.id, PROTECTED, t.clock.nowMs())).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/being charged/),
    });
    const { fee } = await charge();
    expect(fee).toMatchObject({ status: 'charged', chargeAmountMinor: 4500 });
    expect(fake.charged()).toHaveLength(1);
    expect(await paymentCalls()).toEqual([]);
  });

  /**
   * A paid booking cancelled on time (25 hours ahead, Soho's window is 24) whose refund Stripe made
   * and whose answer was lost; meanwhile the salon widens its window and forbids cancelling inside it.
   */
  async function refundInDoubtThenLateForbidden(): Promise<string> {
    await start();
    const { reference } = await paidColour();
    await cancelInDoubt(reference, { reason: 'ill' });
    await t.database.db
      .updateTable('locations')
      .set({ cancellation_window_hours: 48, late_cancellation: 'forbid' })
      .where('slug', '=', 'soho')
      .execute();
    return reference;
  }

  it('completes a cancellation whose refund Stripe made though the salon forbade late cancellations meanwhile', async () => {
    const reference = await refundInDoubtThenLateForbidden();
    const again = await cancel(reference, { reason: 'ill' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('lets the sweeper complete a cancellation whose refund Stripe made though late cancellations were forbidden meanwhile', async () => {
    const reference = await refundInDoubtThenLateForbidden();
    await settleLater();
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('completes a cancellation asked on time as it was asked when it is asked again once late', async () => {
    await start();
    const { reference } = await paidColour();
    // On time (25 hours ahead): Stripe refunds, its answer is lost.
    await cancelInDoubt(reference, { reason: 'ill' });
    // Asked again two hours on, inside the 24-hour window.
    t.clock.advance({ hours: 2 });
    const again = await cancel(reference, { reason: 'ill' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toMatchObject({
      status: 'cancelled',
      deposit_refunded: true,
      change: { late: false, deposit_refunded: true, fee: null },
    });
    expect(await settleLater()).toBe(0);
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    const row = await t.database.db
      .selectFrom('bookings')
      .select('deposit_refunded')
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    expect(row.deposit_refunded).toBe(1);
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('charges a fee once when it is asked again after Stripe forgot the first charge’s key', async () => {
    const { charge } = await noShowChargeInDoubt();
    expect(fake.charged()).toHaveLength(1);
    // Charged again more than a day on: Stripe has pruned the key.
    t.clock.advance({ hours: 25 });
    fake.forgetIdempotencyKeys();
    const { fee } = await charge();
    expect(fee).toMatchObject({ status: 'charged', chargeAmountMinor: 4500 });
    expect(fake.charged()).toHaveLength(1);
    const stored = await t.database.db
      .selectFrom('booking_fees')
      .select('payment_ref')
      .where('kind', '=', 'no_show')
      .executeTakeFirstOrThrow();
    expect(stored.payment_ref).toBe(fake.charged()[0]!.id);
    expect(await paymentCalls()).toEqual([]);
  });

  it('writes a refund Stripe made as made when its cancellation is completed after Stripe forgot its key', async () => {
    await start();
    const { reference } = await paidColour();
    await cancelInDoubt(reference);
    fake.forgetIdempotencyKeys();
    const { settlePaymentCalls } = await import('../../src/app/settle-payment-calls.ts');
    const dayLater = t.clock.nowMs() + 25 * 60 * 60_000;
    expect(await settlePaymentCalls(t.database.db, stripeProvider(), dayLater)).toBe(1);
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
    const row = await t.database.db
      .selectFrom('bookings as b')
      .innerJoin('checkout_sessions as s', 's.booking_id', 'b.id')
      .select(['b.deposit_refunded', 's.refund_ref'])
      .where('b.reference', '=', reference)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ deposit_refunded: 1, refund_ref: [...fake.refunds.keys()][0] });
    expect(await paymentCalls()).toEqual([]);
  });

  /** A weekly series of three colours at Soho, each visit's £20 deposit paid through Stripe. */
  async function paidColourSeries() {
    const ids = await catalogueIds(t.database.db);
    const response = await postBooking(t, colourAtSoho(ids, { repeat: { every_weeks: 1, count: 3 } }));
    expect(response.statusCode).toBe(201);
    const visits = response.json().data.series.occurrences as { reference: string; payment_url: string }[];
    for (const visit of visits) {
      const session = stripeSessionOf(new URL(visit.payment_url).pathname.split('/')[2]);
      expect((await deliver(fake.pay(String(session.id)))).statusCode).toBe(200);
    }
    return visits.map((visit) => visit.reference);
  }

  it('cancels every visit whose refund was made when the first of a following cancellation in doubt was cancelled alone', async () => {
    await start();
    const visits = await paidColourSeries();
    await cancelInDoubt(visits[0]!, { scope: 'following', reason: 'moving away' });
    expect(fake.refunds.size).toBe(3);
    // The first visit alone, asked meanwhile: it joins its own refund, the later two stay in doubt.
    const alone = await cancel(visits[0]!);
    expect(alone.statusCode, alone.body).toBe(200);
    await settleLater();
    for (const reference of visits) {
      expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    }
    const later = await t.database.db
      .selectFrom('bookings')
      .select(['deposit_refunded', 'cancel_reason'])
      .where('reference', 'in', visits.slice(1))
      .execute();
    expect(later).toEqual([
      { deposit_refunded: 1, cancel_reason: 'moving away' },
      { deposit_refunded: 1, cancel_reason: 'moving away' },
    ]);
    expect(fake.refunds.size).toBe(3);
    expect(await paymentCalls()).toEqual([]);
  });

  it('cancels at once when Stripe answered the refund 500 without making it: one refund, under a key of its own', async () => {
    await start();
    const { reference, session } = await paidColour();
    fake.serverErrors = { path: '/v1/refunds', count: 1, made: false };
    const answer = await cancel(reference, { reason: 'ill' });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
    const keys = fake.requests.filter((r) => r.path === '/v1/refunds' && r.method === 'POST');
    expect(new Set(keys.map((r) => r.idempotencyKey)).size).toBe(2);
    expect(keys[0]!.idempotencyKey).toBe(`refund:${session.client_reference_id}`);
    expect(await paymentCalls()).toEqual([]);
  });

  it('keeps a refund under its one key after a 500 that a proxy, not Stripe, answered: in doubt, completed when asked again', async () => {
    await start();
    const { reference, session } = await paidColour();
    // Stripe's own error body, without the Request-Id header only Stripe sends: the refund may still
    // be running at Stripe, so it is not asked under another key. (The client tries each request three
    // times: the proxy fails them all.)
    fake.serverErrors = { path: '/v1/refunds', count: 3, made: false, byProxy: true };
    const answer = await cancel(reference, { reason: 'ill' });
    expect(answer.statusCode, answer.body).toBe(503);
    expect(answer.json().error.code).toBe('payments_unavailable');
    expect(await paymentCalls()).toHaveLength(1);
    const again = await cancel(reference, { reason: 'ill' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    expect(fake.refunds.size).toBe(1);
    const keys = fake.requests.filter((r) => r.path === '/v1/refunds' && r.method === 'POST');
    expect(new Set(keys.map((r) => r.idempotencyKey))).toEqual(
      new Set([`refund:${session.client_reference_id}`]),
    );
  });

  it('writes a refund Stripe answered 500 and carried out just before it was asked under the next key as refunded', async () => {
    await start();
    const { reference, session } = await paidColour();
    fake.serverErrors = { path: '/v1/refunds', count: 1, made: 'later' };
    // Stripe rolls the 500'd refund forward after the server looked for it, before the next key reaches it.
    fake.onRequest = ({ method, idempotencyKey }) => {
      if (method === 'POST' && idempotencyKey === `refund:${session.client_reference_id}:after-500:1`) {
        fake.reconcile();
      }
    };
    const answer = await cancel(reference, { reason: 'ill' });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
    const row = await t.database.db
      .selectFrom('checkout_sessions')
      .select('refund_ref')
      .where('refund_ref', 'is not', null)
      .executeTakeFirstOrThrow();
    expect(row.refund_ref).toBe([...fake.refunds.keys()][0]);
    expect(await paymentCalls()).toEqual([]);
  });

  it('writes the refund Stripe made before answering 500 and makes no other', async () => {
    await start();
    const { reference } = await paidColour();
    fake.serverErrors = { path: '/v1/refunds', count: 1, made: true };
    const answer = await cancel(reference);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    expect(fake.refunds.size).toBe(1);
    const row = await t.database.db
      .selectFrom('checkout_sessions')
      .select('refund_ref')
      .where('refund_ref', 'is not', null)
      .executeTakeFirstOrThrow();
    expect(row.refund_ref).toBe([...fake.refunds.keys()][0]);
    expect(await paymentCalls()).toEqual([]);
  });

  it('charges a fee Stripe answered 500 once: the charge it made is written, none made anew, nothing left blocked', async () => {
    const { charge } = await noShowWithSavedCard();
    fake.serverErrors = { path: '/v1/payment_intents', count: 1, made: true };
    const { fee } = await charge();
    expect(fee).toMatchObject({ status: 'charged', chargeAmountMinor: 4500 });
    expect(fake.charged()).toHaveLength(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('confirms a fee charge Stripe made but left unconfirmed behind a 500: charged once, not written as failed', async () => {
    const { charge } = await noShowWithSavedCard();
    fake.serverErrors = { path: '/v1/payment_intents', count: 1, made: true };
    fake.leaveIntentsIn = 'requires_confirmation';
    const { fee } = await charge();
    expect(fee).toMatchObject({ status: 'charged', chargeAmountMinor: 4500 });
    expect(fake.paymentIntents.size).toBe(1);
    expect(fake.charged()).toHaveLength(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('writes a fee charge Stripe left waiting for the customer’s authentication behind a 500 as failed only once Stripe cancelled it', async () => {
    const { charge } = await noShowWithSavedCard();
    fake.serverErrors = { path: '/v1/payment_intents', count: 1, made: true };
    fake.leaveIntentsIn = 'requires_action';
    const { fee } = await charge();
    // Off-session, nobody can authenticate it: the customer must act, and the salon collects the fee
    // another way. The PaymentIntent can no longer take the money behind the failure written.
    expect(fee).toMatchObject({ status: 'failed', failureReason: expect.stringMatching(/authenticat/) });
    expect([...fake.paymentIntents.values()].map((pi) => pi.status)).toEqual(['canceled']);
    expect(fake.charged()).toHaveLength(0);
    expect(await paymentCalls()).toEqual([]);
  });

  it('never charges a fee anew after Stripe answered it 500: Stripe may still carry that request out', async () => {
    const { charge } = await noShowWithSavedCard();
    // Nothing to be seen at Stripe right after the 500; its engineers roll the charge forward later.
    fake.serverErrors = { path: '/v1/payment_intents', count: 1, made: 'later' };
    await expect(charge()).rejects.toMatchObject({ code: 'payments_unavailable' });
    await expect(charge()).rejects.toMatchObject({ code: 'payments_unavailable' });
    expect(await settleLater()).toBe(0);
    expect((await bookingOf(PROTECTED)).no_show_fee).toMatchObject({ status: null });
    const keys = fake.requests.filter((r) => r.path === '/v1/payment_intents' && r.method === 'POST');
    expect(new Set(keys.map((r) => r.idempotencyKey)).size).toBe(1);
    fake.reconcile();
    expect(fake.charged()).toHaveLength(1);
    // A day on, Stripe has forgotten the key: the charge it made is found and written, none made anew.
    fake.forgetIdempotencyKeys();
    const { settlePaymentCalls } = await import('../../src/app/settle-payment-calls.ts');
    const dayLater = t.clock.nowMs() + 25 * 60 * 60_000;
    expect(await settlePaymentCalls(t.database.db, stripeProvider(), dayLater)).toBe(1);
    expect((await bookingOf(PROTECTED)).no_show_fee).toMatchObject({ status: 'charged' });
    expect(fake.charged()).toHaveLength(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('asks Stripe again for a fee charge it answered 500 less and less often, the first time two minutes on', async () => {
    const { charge } = await noShowWithSavedCard();
    fake.serverErrors = { path: '/v1/payment_intents', count: 1, made: false };
    const askedAt = t.clock.nowMs();
    await expect(charge()).rejects.toMatchObject({ code: 'payments_unavailable' });
    // Stripe answers the stored 500 to every repeat under the key for a day: the sweeper, running every
    // two minutes for three hours, asks again after pauses doubling from two minutes up to an hour.
    const { settlePaymentCalls } = await import('../../src/app/settle-payment-calls.ts');
    const charges = () =>
      fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents').length;
    const askedAgainAt: number[] = [];
    for (let minutes = 2; minutes <= 180; minutes += 2) {
      const before = charges();
      await settlePaymentCalls(t.database.db, stripeProvider(), askedAt + minutes * 60_000);
      if (charges() > before) askedAgainAt.push(minutes);
    }
    expect(askedAgainAt).toEqual([2, 4, 8, 16, 32, 64, 124, 184].filter((m) => m <= 180));
    expect((await bookingOf(PROTECTED)).no_show_fee).toMatchObject({ status: null });
    expect(fake.charged()).toHaveLength(0);
  });

  it('charges a fee Stripe answered 500 and never made once Stripe has forgotten the key, once', async () => {
    const { charge } = await noShowWithSavedCard();
    fake.serverErrors = { path: '/v1/payment_intents', count: 1, made: false };
    await expect(charge()).rejects.toMatchObject({ code: 'payments_unavailable' });
    expect(fake.charged()).toHaveLength(0);
    t.clock.advance({ hours: 25 });
    fake.forgetIdempotencyKeys();
    const { fee } = await charge();
    expect(fee).toMatchObject({ status: 'charged', chargeAmountMinor: 4500 });
    expect(fake.charged()).toHaveLength(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('leaves a refund asked of Stripe in doubt while the server runs in the local test mode or with none, and says so', async () => {
    await start();
    const { reference } = await paidColour();
    const org = await t.database.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    await cancelInDoubt(reference, { reason: 'ill' });
    const { settlePaymentCalls, callsWaitingForTheirProvider } = await import(
      '../../src/app/settle-payment-calls.ts'
    );
    const { localCheckout } = await import('../../src/app/payments.ts');
    const { cancelBooking } = await import('../../src/app/booking-changes.ts');
    const later = t.clock.nowMs() + 5 * 60_000;
    // The test mode moves no money: it neither completes Stripe's call nor lets it be asked again.
    expect(await settlePaymentCalls(t.database.db, localCheckout, later)).toBe(0);
    await expect(
      cancelBooking(
        t.database.db,
        { organisationId: org.id, actor: 'staff', payments: localCheckout },
        reference,
        undefined,
        t.clock.nowMs(),
      ),
    ).rejects.toMatchObject({ code: 'payments_unavailable', message: expect.stringMatching(/stripe/) });
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
    expect(await paymentCalls()).toHaveLength(1);
    expect(await callsWaitingForTheirProvider(t.database.db, localCheckout)).toEqual([
      { provider: 'stripe', calls: 1 },
    ]);
    expect(await callsWaitingForTheirProvider(t.database.db, null)).toEqual([
      { provider: 'stripe', calls: 1 },
    ]);
    expect(await callsWaitingForTheirProvider(t.database.db, stripeProvider())).toEqual([]);
    // Stripe again: completed as it was asked.
    expect(await settleLater()).toBe(1);
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
  });

  it('leaves a fee charge asked of Stripe unprocessed while the server runs without it', async () => {
    const { charge } = await noShowChargeInDoubt();
    const { localCheckout } = await import('../../src/app/payments.ts');
    for (const payments of [null, localCheckout]) {
      await expect(charge(payments)).rejects.toMatchObject({ code: 'payments_unavailable' });
    }
    expect((await bookingOf(PROTECTED)).no_show_fee).toMatchObject({ status: null });
    expect(await paymentCalls()).toHaveLength(1);
    const { fee } = await charge(t.deps.payments);
    expect(fee).toMatchObject({ status: 'charged', chargeAmountMinor: 4500 });
    expect(fake.charged()).toHaveLength(1);
  });

  it('completes a following cancellation in doubt when it is asked again after the first was cancelled alone', async () => {
    await start();
    const visits = await paidColourSeries();
    await cancelInDoubt(visits[0]!, { scope: 'following', reason: 'moving away' });
    const alone = await cancel(visits[0]!);
    expect(alone.statusCode, alone.body).toBe(200);
    // The same request again, as the 503 said to: it completes the later two, their refunds made once.
    const again = await cancel(visits[0]!, { scope: 'following', reason: 'moving away' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toMatchObject({
      reference: visits[0],
      status: 'cancelled',
      deposit_refunded: true,
    });
    expect(again.json().data.following).toMatchObject([
      { reference: visits[1], deposit_refunded: true },
      { reference: visits[2], deposit_refunded: true },
    ]);
    for (const reference of visits) {
      expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    }
    expect(fake.refunds.size).toBe(3);
    expect(await paymentCalls()).toEqual([]);
  });

  it('completes a cancellation in doubt while another refund of the sweep keeps failing', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const { reference } = await paidColour();
    await cancelInDoubt(reference);
    // Another colour, paid, on a hold that lapsed: its refund is the sweep's, and Stripe keeps failing
    // it (a 500 Stripe answers again under the same key for a day).
    const other = await postBooking(t, colourAtSoho(ids, { starts_at: '2026-11-24T13:00:00+00:00' }));
    const otherCheckout = new URL(other.json().data.payment_url).pathname.split('/')[2]!;
    expect((await deliver(fake.pay(String(stripeSessionOf(otherCheckout).id)))).statusCode).toBe(200);
    await t.database.db
      .updateTable('bookings')
      .set({ status: 'expired', hold_expires_at: t.clock.nowMs() - 60_000 })
      .where('reference', '=', other.json().data.reference)
      .execute();
    const stripe = stripeProvider();
    const payments = {
      ...stripe,
      refund: (request: Parameters<typeof stripe.refund>[0]) =>
        request.key === otherCheckout
          ? Promise.reject(new AppError('payments_unavailable', 'Stripe answered 500.'))
          : stripe.refund(request),
    };
    const { startHoldSweeper } = await import('../../src/app/hold-sweeper.ts');
    const failures: unknown[] = [];
    const later = { nowMs: () => t.clock.nowMs() + 5 * 60_000 };
    const stop = startHoldSweeper(t.database.db, later, (error) => failures.push(error), 20, payments);
    const deadline = Date.now() + 5_000;
    const cancelling = async () => (await paymentCalls()).filter((c) => c.purpose === 'cancellation');
    while ((await cancelling()).length > 0 && Date.now() < deadline) await sleep(50);
    await stop();
    expect(await cancelling()).toEqual([]);
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
    // The lapsed hold's refund is in doubt, its call left for the sweeper to try again (not a failure).
    expect(await paymentCalls()).toEqual([
      expect.objectContaining({ key: otherCheckout, purpose: 'unwanted_payment' }),
    ]);
    expect(failures).toEqual([]);
  });
});

describe('a sweep’s claim on the calls it completes', () => {
  it('lasts as long as the sweep works each call: another process’s sweeper takes none of its batch meanwhile', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    // Two colours paid through Stripe, each cancelled: Stripe refunds each, its answer lost.
    const references: string[] = [];
    for (const startsAt of [STARTS_AT, '2026-11-24T14:00:00+00:00']) {
      const booked = await postBooking(t, colourAtSoho(ids, { starts_at: startsAt }));
      expect(booked.statusCode, booked.body).toBe(201);
      const checkout = new URL(booked.json().data.payment_url).pathname.split('/')[2];
      expect((await deliver(fake.pay(String(stripeSessionOf(checkout).id)))).statusCode).toBe(200);
      references.push(booked.json().data.reference);
    }
    fake.loseAnswersTo = '/v1/refunds';
    for (const reference of references) {
      const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel` });
      expect(cancelled.statusCode).toBe(503);
      t.clock.advance({ seconds: 1 });
    }
    fake.loseAnswersTo = null;
    // This process's sweeper comes by five minutes on and works the two calls one after the other,
    // Stripe taking a minute to answer each (under its deadline).
    t.clock.advance({ minutes: 5 });
    const stripe = stripeProvider();
    const asked: string[] = [];
    const answers: (() => void)[] = [];
    const slow: StripeProvider = {
      ...stripe,
      refund: async (request) => {
        asked.push(request.key);
        await new Promise<void>((resolve) => answers.push(resolve));
        return stripe.refund(request);
      },
    };
    const untilAsked = async (count: number) => {
      while (asked.length < count) await sleep(5);
    };
    const { startHoldSweeper } = await import('../../src/app/hold-sweeper.ts');
    const failures: unknown[] = [];
    const stop = startHoldSweeper(t.database.db, t.clock, (error) => failures.push(error), 20, slow);
    await untilAsked(1);
    t.clock.advance({ minutes: 1 });
    answers.shift()!();
    await untilAsked(2);
    // Another process's sweeper, 70 s into the work on the second call, over two minutes after the
    // first sweep began: the second call is still the first sweeper's.
    t.clock.advance({ seconds: 70 });
    const { settlePaymentCalls } = await import('../../src/app/settle-payment-calls.ts');
    const other = await settlePaymentCalls(t.database.db, stripeProvider(), t.clock.nowMs());
    answers.shift()!();
    while ((await t.database.db.selectFrom('payment_calls').select('key').execute()).length > 0) {
      await sleep(20);
    }
    await stop();
    expect({ other, failures }).toEqual({ other: 0, failures: [] });
    expect(new Set(asked).size).toBe(2);
    for (const reference of references) {
      expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    }
    expect(fake.refunds.size).toBe(2);
  });
});

describe.runIf(onPostgres)('a move just as a cancellation asks for its refund (PostgreSQL)', () => {
  it('refunds the deposit only of a booking that ends up cancelled: the move waits, then is refused', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    expect((await deliver(fake.pay(String(session.id)))).statusCode).toBe(200);
    // Cancelling late is refused at Soho, moving late is not.
    await t.database.db
      .updateTable('locations')
      .set({ late_cancellation: 'forbid', late_reschedule: 'allow' })
      .where('slug', '=', 'soho')
      .execute();
    const other = t.database.reopen();
    try {
      await other.db.connection().execute(async (conn) => {
        // Another writer holds payment_calls against writes (reads go on): the cancellation has decided
        // its refund and waits to write its call.
        await sql`begin`.execute(conn);
        await sql`lock table payment_calls in exclusive mode`.execute(conn);
        const cancelled = t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: {} });
        await untilLockWaiters(t.database.db, 1);
        // Moved meanwhile into the cancellation window (Monday 14:00), where cancelling is refused.
        const moved = t.request({
          method: 'PATCH',
          url: `/v1/bookings/${reference}`,
          payload: { starts_at: '2026-11-23T14:00:00+00:00' },
        });
        await Promise.race([moved, untilLockWaiters(t.database.db, 2)]);
        await sql`rollback`.execute(conn);
        const [cancelAnswer, moveAnswer] = await Promise.all([cancelled, moved]);
        expect({ cancel: cancelAnswer.statusCode, move: moveAnswer.statusCode }).toEqual({
          cancel: 200,
          move: 409,
        });
      });
    } finally {
      await other.close();
    }
    expect(await bookingOf(reference)).toMatchObject({
      status: 'cancelled',
      deposit_status: 'refunded',
      starts_at: STARTS_AT,
    });
    expect(fake.refunds.size).toBe(1);
  });
});

describe('review: one checkout per booking, the one a cancellation refunds', () => {
  it('opens no second checkout when a paid booking moves, and refuses one written for it', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    expect((await deliver(fake.pay(String(session.id)))).statusCode).toBe(200);
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: '2026-11-24T12:00:00+00:00' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const checkouts = await t.database.db.selectFrom('checkout_sessions').selectAll().execute();
    expect(checkouts).toHaveLength(1);
    // A second checkout of the booking (a deposit paid again, which a cancellation would not refund:
    // it refunds the booking's one checkout) cannot be written.
    const second = t.database.db
      .insertInto('checkout_sessions')
      .values({
        ...checkouts[0]!,
        id: '0b6c1f0e-8a51-4e3b-9d7a-2f4c6e8a0b1d',
        provider_ref: null,
        payment_ref: 'pi_second',
        refund_ref: null,
      })
      .execute();
    await expect(second).rejects.toThrow(/unique/i);
    const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel` });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', deposit_refunded: true });
    expect([...fake.refunds.values()]).toEqual([
      expect.objectContaining({ amount: 2000, payment_intent: session.payment_intent }),
    ]);
  });
});

describe('review: a deposit paid through Stripe is refunded whoever cancels the booking on time', () => {
  it('refunds it when the customer cancels on the booking’s page', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    expect((await deliver(fake.pay(String(session.id)))).statusCode).toBe(200);
    const page = new URL((await bookingOf(reference)).booking_page_url).pathname;
    const posted = await t.app.inject({
      method: 'POST',
      url: `${page}/cancel`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
      payload: '',
    });
    expect(posted.statusCode, posted.body).toBe(303);
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect([...fake.refunds.values()]).toEqual([
      expect.objectContaining({ amount: 2000, payment_intent: session.payment_intent }),
    ]);
  });

  it('refunds it when staff cancel it in the console', async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    expect((await deliver(fake.pay(String(session.id)))).statusCode).toBe(200);
    const password = 'correct horse battery';
    await createUser(
      t.database.db,
      { organisationSlug: 'acme-hair', email: 'desk@acme.test', role: 'staff', password },
      t.clock.nowMs(),
    );
    const desk = await signInToConsole(t, 'acme-hair', 'desk@acme.test', password);
    const posted = await desk.post(`/console/bookings/${reference}/cancel`, { reason: 'called in' });
    expect(posted.statusCode, posted.body).toBe(303);
    expect(await bookingOf(reference)).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    expect([...fake.refunds.values()]).toEqual([
      expect.objectContaining({ amount: 2000, payment_intent: session.payment_intent }),
    ]);
  });
});

describe('review: a Stripe webhook waits for Stripe seconds only, answering before Stripe gives up on it', () => {
  /**
   * Stripe counts a delivery not answered within seconds (about 20) as timed out and delivers it again;
   * the endpoint must answer first: within 15 s here, or 'waiting'.
   */
  const within15s = (answer: Promise<{ statusCode: number }>) =>
    Promise.race([answer.then((r) => r.statusCode), sleep(15_000).then(() => 'waiting')]);
  const paymentEvents = () => t.database.db.selectFrom('payment_events').select('event_id').execute();
  /** Stripe answers the first read of a session at once, then struggles: every answer 30 s late. */
  const slowAfterSessionRead = (stripe: StripeProvider): StripeProvider => {
    let read = false;
    return {
      ...stripe,
      retrieveCheckoutSession: async (...args: Parameters<StripeProvider['retrieveCheckoutSession']>) => {
        const session = await stripe.retrieveCheckoutSession(...args);
        if (!read) fake.delayAnswers = 30_000;
        read = true;
        return session;
      },
    };
  };

  it('answers 503, writing nothing, when Stripe is too slow to read the session back; the next delivery applies it', {
    timeout: 90_000,
  }, async () => {
    await start();
    const { reference, session } = await bookWithDeposit();
    const paid = fake.pay(String(session.id));
    fake.delayAnswers = 30_000;
    expect(await within15s(deliver(paid))).toBe(503);
    expect(await paymentEvents()).toEqual([]);
    expect(await bookingOf(reference)).toMatchObject({ status: 'pending_payment' });
    fake.delayAnswers = 0;
    const again = await deliver(paid);
    expect(again.json()).toEqual({ received: true, outcome: 'applied' });
    expect(await bookingOf(reference)).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
  });

  it('answers 503, saving no card, when Stripe is too slow to read the setup’s intent back; the next delivery saves it', {
    timeout: 90_000,
  }, async () => {
    await start(undefined, slowAfterSessionRead);
    const { session } = await startProtectedSetup();
    const saved = fake.saveCard(String(session.id));
    expect(await within15s(deliver(saved))).toBe(503);
    expect(await paymentEvents()).toEqual([]);
    expect((await bookingOf(PROTECTED)).booking_protection.setup).toMatchObject({
      payment_method_saved: false,
    });
    fake.delayAnswers = 0;
    expect((await deliver(saved)).json()).toEqual({ received: true, outcome: 'applied' });
    expect((await bookingOf(PROTECTED)).booking_protection.setup).toMatchObject({
      payment_method_saved: true,
    });
  });

  it('applies a payment after the hold lapsed in time, its refund left to the sweeper when Stripe is slow to make it', {
    timeout: 90_000,
  }, async () => {
    await start(undefined, slowAfterSessionRead);
    const { reference, session } = await bookWithDeposit();
    t.clock.advance({ minutes: 31 });
    const answer = deliver(fake.pay(String(session.id)));
    expect(await within15s(answer)).toBe(200);
    fake.delayAnswers = 0;
    expect((await answer).json()).toEqual({ received: true, outcome: 'applied' });
    expect((await bookingOf(reference)).status).toBe('expired');
    expect(await t.database.db.selectFrom('payment_calls').select('purpose').execute()).toEqual([
      { purpose: 'unwanted_payment' },
    ]);
    const { settlePaymentCalls, SETTLE_AFTER_MS } = await import('../../src/app/settle-payment-calls.ts');
    const stripe = stripeProvider();
    expect(await settlePaymentCalls(t.database.db, stripe, t.clock.nowMs() + SETTLE_AFTER_MS)).toBe(1);
    expect(fake.refunds.size).toBe(1);
    const checkout = await t.database.db
      .selectFrom('checkout_sessions')
      .select('refund_ref')
      .where('id', '=', String(session.client_reference_id))
      .executeTakeFirstOrThrow();
    expect(checkout.refund_ref).toMatch(/^re_/);
  });
});

describe('review: a lapsed hold’s deposit is refunded under a claim and a deadline, as other refunds are', () => {
  const refundsAsked = () => fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/refunds');
  const paymentCalls = () => t.database.db.selectFrom('payment_calls').selectAll().execute();

  /** Max's protected colour at Islington: its deposit paid through Stripe, its card never saved, lapsed. */
  async function lapsedWithDeposit() {
    const reference = await paidProtectedHold();
    t.clock.advance({ hours: 3 });
    const { expireLapsedHolds, refundLapsedDeposits } = await import('../../src/app/hold-sweeper.ts');
    await expireLapsedHolds(t.database.db, t.clock.nowMs());
    expect(await bookingOf(reference)).toMatchObject({ status: 'expired', deposit_status: 'paid' });
    return { reference, refundLapsedDeposits };
  }

  it('asks Stripe within the minute a request waits for it at most', async () => {
    const { PROVIDER_WAIT_MS } = await import('../../src/app/payment-calls.ts');
    const { reference, refundLapsedDeposits } = await lapsedWithDeposit();
    const stripe = stripeProvider();
    const ahead: (number | undefined)[] = [];
    const watched: StripeProvider = {
      ...stripe,
      refund: (request) => {
        ahead.push(request.deadline === undefined ? undefined : request.deadline - performance.now());
        return stripe.refund(request);
      },
    };
    expect(await refundLapsedDeposits(t.database.db, watched, t.clock.nowMs())).toBe(1);
    expect(ahead).toHaveLength(1);
    expect(ahead[0]).toBeLessThanOrEqual(PROVIDER_WAIT_MS);
    expect(await bookingOf(reference)).toMatchObject({ deposit_status: 'refunded' });
  });

  it('leaves a refund whose answer was lost in doubt, asked no more by the next sweeps, and completes it once', async () => {
    const { reference, refundLapsedDeposits } = await lapsedWithDeposit();
    fake.loseAnswersTo = '/v1/refunds';
    expect(await refundLapsedDeposits(t.database.db, stripeProvider(), t.clock.nowMs())).toBe(0);
    // The client's tries of that one ask, under its one key.
    const asked = refundsAsked();
    expect(new Set(asked.map((r) => r.idempotencyKey)).size).toBe(1);
    expect(await paymentCalls()).toEqual([
      expect.objectContaining({ kind: 'refund', purpose: 'unwanted_payment' }),
    ]);
    // The next sweep, 30 s on: the call in doubt is the sweeper's to complete, two minutes on.
    t.clock.advance({ seconds: 30 });
    expect(await refundLapsedDeposits(t.database.db, stripeProvider(), t.clock.nowMs())).toBe(0);
    expect(refundsAsked()).toHaveLength(asked.length);
    fake.loseAnswersTo = null;
    const { settlePaymentCalls, SETTLE_AFTER_MS } = await import('../../src/app/settle-payment-calls.ts');
    expect(await settlePaymentCalls(t.database.db, stripeProvider(), t.clock.nowMs() + SETTLE_AFTER_MS)).toBe(
      1,
    );
    expect(await bookingOf(reference)).toMatchObject({ status: 'expired', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
    const settled = refundsAsked().length;
    expect(await refundLapsedDeposits(t.database.db, stripeProvider(), t.clock.nowMs())).toBe(0);
    expect(refundsAsked()).toHaveLength(settled);
  });

  /** The checkout of the booking `reference`, as stored. */
  const checkoutOf = async (reference: string) =>
    t.database.db
      .selectFrom('checkout_sessions as s')
      .innerJoin('bookings as b', (join) =>
        join.onRef('b.organisation_id', '=', 's.organisation_id').onRef('b.id', '=', 's.booking_id'),
      )
      .selectAll('s')
      .where('b.reference', '=', reference)
      .executeTakeFirstOrThrow();

  it('settles a refund Stripe refuses for good at once: recorded as refused, asked no more by the next sweeps', async () => {
    const { reference, refundLapsedDeposits } = await lapsedWithDeposit();
    // Refunded by hand in Stripe's dashboard meanwhile: Stripe answers 400 charge_already_refunded.
    const paid = await checkoutOf(reference);
    fake.refunds.set('re_by_hand', {
      id: 're_by_hand',
      object: 'refund',
      amount: paid.amount_minor,
      currency: 'gbp',
      payment_intent: paid.payment_ref,
      status: 'succeeded',
      metadata: {},
    });
    expect(await refundLapsedDeposits(t.database.db, stripeProvider(), t.clock.nowMs())).toBe(0);
    const asked = refundsAsked().length;
    expect(asked).toBeGreaterThan(0);
    expect(await paymentCalls()).toEqual([]);
    const refusedAt = t.clock.nowMs();
    // The next sweeps (30 s on, a day on, within the week) do not ask Stripe again.
    for (const later of [{ seconds: 30 }, { hours: 24 }]) {
      t.clock.advance(later);
      expect(await refundLapsedDeposits(t.database.db, stripeProvider(), t.clock.nowMs())).toBe(0);
    }
    expect(refundsAsked()).toHaveLength(asked);
    expect(await paymentCalls()).toEqual([]);
    // Recorded on its checkout, refused, with Stripe's reason, for a person to look into.
    const refused = await checkoutOf(reference);
    expect(refused).toMatchObject({ refund_ref: null, refund_refused_at: refusedAt });
    expect(refused.refund_refusal).toMatch(/already been refunded/);
    // The money stays where Stripe says it is: our deposit is not written refunded by a refusal.
    expect(await bookingOf(reference)).toMatchObject({ status: 'expired', deposit_status: 'paid' });
  });

  it('keeps asking a refund that failed (a 502 from a gateway before Stripe), as a call in doubt, until it is answered', async () => {
    const { reference, refundLapsedDeposits } = await lapsedWithDeposit();
    fake.serverErrors = { path: '/v1/refunds', count: 1_000, made: false, byProxy: true };
    expect(await refundLapsedDeposits(t.database.db, stripeProvider(), t.clock.nowMs())).toBe(0);
    expect(await paymentCalls()).toEqual([
      expect.objectContaining({ kind: 'refund', purpose: 'unwanted_payment' }),
    ]);
    expect(await checkoutOf(reference)).toMatchObject({ refund_ref: null, refund_refused_at: null });
    fake.serverErrors = null;
    const { settlePaymentCalls, SETTLE_AFTER_MS } = await import('../../src/app/settle-payment-calls.ts');
    expect(await settlePaymentCalls(t.database.db, stripeProvider(), t.clock.nowMs() + SETTLE_AFTER_MS)).toBe(
      1,
    );
    expect(await bookingOf(reference)).toMatchObject({ status: 'expired', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
  });

  it('writes when a lapsed hold’s deposit was refunded by the cancellation asked before it lapsed', async () => {
    const reference = await paidProtectedHold();
    // Cancelled while held: Stripe refunds, its answer is lost; the hold lapses before the sweeper
    // completes the cancellation, which it then cannot do: the refund is written on its own.
    fake.loseAnswersTo = '/v1/refunds';
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: {},
    });
    expect(cancelled.statusCode, cancelled.body).toBe(503);
    fake.loseAnswersTo = null;
    t.clock.advance({ hours: 3 });
    const { expireLapsedHolds } = await import('../../src/app/hold-sweeper.ts');
    await expireLapsedHolds(t.database.db, t.clock.nowMs());
    expect(await bookingOf(reference)).toMatchObject({ status: 'expired', deposit_status: 'paid' });
    const { settlePaymentCalls, SETTLE_AFTER_MS } = await import('../../src/app/settle-payment-calls.ts');
    const settledAt = t.clock.nowMs() + SETTLE_AFTER_MS;
    expect(await settlePaymentCalls(t.database.db, stripeProvider(), settledAt)).toBe(1);
    expect(await bookingOf(reference)).toMatchObject({
      status: 'expired',
      deposit_status: 'refunded',
      updated_at: new Date(settledAt).toISOString().replace('.000Z', 'Z'),
    });
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
  });

  it('asks Stripe once when two sweepers (two processes) come by at once while Stripe is slow', async () => {
    const { reference, refundLapsedDeposits } = await lapsedWithDeposit();
    const release = slowStripe();
    const now = t.clock.nowMs();
    const sweeps = Promise.all([
      refundLapsedDeposits(t.database.db, stripeProvider(), now),
      refundLapsedDeposits(t.database.db, stripeProvider(), now),
    ]);
    await untilStripeAsked('/v1/refunds');
    await sleep(300);
    release();
    const [first, second] = await sweeps;
    expect(first + second).toBe(1);
    expect(refundsAsked()).toHaveLength(1);
    expect(await bookingOf(reference)).toMatchObject({ status: 'expired', deposit_status: 'refunded' });
    expect(fake.refunds.size).toBe(1);
    expect(await paymentCalls()).toEqual([]);
  });
});
