import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expireLapsedHolds } from '../../src/app/hold-sweeper.ts';
import type { DatabaseHandle } from '../../src/data/database.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import {
  bookOnPage,
  deliveredCode,
  pagePathOf,
  pagePost,
  referenceOnPage,
} from '../helpers/public-booking.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The hold sweeper of one instance while another instance's request changes one of the holds it is
 * expiring, on PostgreSQL. Every booking written bumps its organisation's bookings_version (a trigger),
 * whose row then stays locked to the end of the transaction: a sweep writing several holds one by one
 * held it while it waited for the next hold, which the request had locked first and whose own write
 * then waited for that row, a deadlock PostgreSQL ended by failing one of them (the request's 500).
 * To catch the sweep between its two holds, a third connection holds the first hold's checkout (a
 * customer on its payment page, another instance's transaction) until both are waiting.
 */
let t: TestApp;
let ids: CatalogueIds;
let otherInstance: DatabaseHandle;
let third: pg.Client;
/** The app, a second instance's database handle, and the third connection. */
async function start(options?: Parameters<typeof startTestApp>[0]): Promise<void> {
  t = await startTestApp(options);
  ids = await catalogueIds(t.database.db);
  otherInstance = t.database.reopen();
  // Its pool connected before the test holds anything.
  await otherInstance.db.selectFrom('bookings').select('id').limit(1).execute();
  third = new pg.Client({ connectionString: t.database.url });
  await third.connect();
}
async function stop(): Promise<void> {
  await third.end().catch(() => undefined);
  await otherInstance.close();
  await t.close();
}
beforeEach(() => start());
afterEach(() => stop());

/** Two Colour holds with Ana on Tuesday (a deposit due: pending_payment for 30 minutes), in lock order. */
async function twoHolds(): Promise<{ reference: string; id: string; startsAt: string }[]> {
  const holds = [];
  for (const startsAt of ['2026-11-24T10:00:00+00:00', '2026-11-24T14:00:00+00:00']) {
    const created = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.colour],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: startsAt,
    });
    expect(created.statusCode, created.body).toBe(201);
    const { reference, status } = created.json().data;
    expect(status).toBe('pending_payment');
    const { id } = await t.database.db
      .selectFrom('bookings')
      .select('id')
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    holds.push({ reference, id, startsAt });
  }
  // The sweep writes them in the order of their ids (expireHolds' lock order).
  return holds.sort((x, y) => (x.id < y.id ? -1 : 1));
}

/** Until `count` of the database's connections wait for a lock. */
async function waitingForLocks(count: number): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    const { rows } = await third.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (rows[0]!.n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${count} connections never waited for a lock`);
}

/** The sweep of the other instance, started while the third connection holds the first hold's checkout. */
async function sweepCaughtBetween(firstId: string, now: number) {
  await third.query('BEGIN');
  await third.query('SELECT id FROM checkout_sessions WHERE booking_id = $1 FOR UPDATE', [firstId]);
  const sweep = expireLapsedHolds(otherInstance.db, now).then(
    (expired) => ({ expired }),
    (error: unknown) => ({ error: String(error) }),
  );
  await waitingForLocks(1);
  // Wrapped: returned bare, the caller's await would wait for the sweep itself.
  return { sweep };
}

/**
 * The hold's last second here, the other instance's clock two seconds ahead (past its end): a third
 * connection holds the hold's row, the sweep waits for it first, then `request`; then both go on.
 */
async function raceTheSweep<T>(
  holdId: string,
  request: () => Promise<T>,
): Promise<{ swept: number; answer: T }> {
  await third.query('BEGIN');
  await third.query('SELECT id FROM bookings WHERE id = $1 FOR UPDATE', [holdId]);
  const sweep = expireLapsedHolds(otherInstance.db, t.clock.nowMs() + 2_000);
  await waitingForLocks(1);
  const answer = request();
  await waitingForLocks(2);
  await third.query('COMMIT');
  const [swept, answered] = await Promise.all([sweep, answer]);
  return { swept, answer: answered };
}

/** The booking's status, and the statuses its events moved it to. */
async function storedHold(id: string): Promise<{ status: string; events: (string | null)[] }> {
  const db = t.database.db;
  const events = await db
    .selectFrom('booking_events')
    .select('to_status')
    .where('booking_id', '=', id)
    .orderBy('seq')
    .execute();
  const stored = await db
    .selectFrom('bookings')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return { status: stored.status, events: events.map((e) => e.to_status) };
}

describe.skipIf(!onPostgres)('the hold sweeper beside another instance', () => {
  it('lets a booking over a lapsed hold through while the sweep is expiring that hold and another', async () => {
    const [first, second] = await twoHolds();
    t.clock.advance({ minutes: 31 });
    const { sweep } = await sweepCaughtBetween(first!.id, t.clock.nowMs());
    // A Cut at the second hold's time: the booking expires that lapsed hold itself (lazy expiry).
    const booking = postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: second!.startsAt,
    });
    await waitingForLocks(2);
    await third.query('COMMIT');
    const [swept, booked] = await Promise.all([sweep, booking]);
    expect(booked.statusCode, booked.body).toBe(201);
    expect(swept).toEqual({ expired: 2 });
    // Each hold expired once: one event each.
    const expiries = await t.database.db
      .selectFrom('booking_events')
      .select('booking_id')
      .where('to_status', '=', 'expired')
      .execute();
    expect(expiries.map((e) => e.booking_id).sort()).toEqual([first!.id, second!.id].sort());
  });

  it('refuses a cancellation of a hold the sweep expired meanwhile, rather than writing it cancelled over expired', async () => {
    const [first] = await twoHolds();
    // The hold's last second here; the other instance's clock runs two seconds ahead, past its end.
    t.clock.advance({ minutes: 30, seconds: -1 });
    const hold = await third.query<{ id: string }>('SELECT id FROM bookings WHERE id = $1', [first!.id]);
    expect(hold.rows).toHaveLength(1);
    // A third connection holds the hold's row: the sweep waits for it first, then the cancellation.
    await third.query('BEGIN');
    await third.query('SELECT id FROM bookings WHERE id = $1 FOR UPDATE', [first!.id]);
    const sweep = expireLapsedHolds(otherInstance.db, t.clock.nowMs() + 2_000);
    await waitingForLocks(1);
    const cancel = t.request({ method: 'POST', url: `/v1/bookings/${first!.reference}/cancel`, payload: {} });
    await waitingForLocks(2);
    await third.query('COMMIT');
    const [swept, cancelled] = await Promise.all([sweep, cancel]);
    expect(swept).toBe(2);
    expect(cancelled.statusCode, cancelled.body).toBe(409);
    expect(cancelled.json().error).toMatchObject({ code: 'conflict' });
    expect(cancelled.json().error.message).toContain('expired');
    const events = await t.database.db
      .selectFrom('booking_events')
      .select('to_status')
      .where('booking_id', '=', first!.id)
      .orderBy('seq')
      .execute();
    expect(events.map((e) => e.to_status)).toEqual(['pending_payment', 'expired']);
    const stored = await t.database.db
      .selectFrom('bookings')
      .select('status')
      .where('id', '=', first!.id)
      .executeTakeFirstOrThrow();
    expect(stored.status).toBe('expired');
  });
  it('refuses the deposit of a hold the sweep expired meanwhile, rather than confirming it over expired', async () => {
    const [first] = await twoHolds();
    t.clock.advance({ minutes: 30, seconds: -1 });
    const session = await t.database.db
      .selectFrom('checkout_sessions')
      .select('id')
      .where('booking_id', '=', first!.id)
      .executeTakeFirstOrThrow();
    const { swept, answer: paid } = await raceTheSweep(first!.id, () =>
      t.app.inject({
        method: 'POST',
        url: `/checkout/${session.id}/pay`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
        payload: '',
      }),
    );
    expect(swept).toBe(2);
    expect(paid.statusCode, paid.body).toBe(409);
    expect(paid.body).toContain('expired');
    expect(await storedHold(first!.id)).toEqual({
      status: 'expired',
      events: ['pending_payment', 'expired'],
    });
    const stored = await t.database.db
      .selectFrom('bookings')
      .select(['deposit_status', 'hold_expires_at'])
      .where('id', '=', first!.id)
      .executeTakeFirstOrThrow();
    expect(stored.deposit_status).not.toBe('paid');
    expect(stored.hold_expires_at).not.toBeNull();
  });
  it('refuses the code of a public-page hold the sweep expired meanwhile, rather than proving it over expired', async () => {
    await stop();
    await start({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
    const path = pagePathOf(
      await bookOnPage(t, 'northside-hair', {
        location: 'camden',
        service: 'cut',
        startsAt: '2026-11-25T14:00:00Z',
        phone: '07912 345678',
      }),
    );
    const reference = await referenceOnPage(t, path);
    const { id } = await t.database.db
      .selectFrom('bookings')
      .select('id')
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    // The hold lasts 15 minutes, a code 10: a new code, then the hold's last second.
    t.clock.advance({ minutes: 6 });
    const resent = await pagePost(t, `${path}/resend`);
    expect(resent.statusCode, resent.body).toBe(303);
    const { code } = await deliveredCode(t, reference);
    t.clock.advance({ minutes: 9, seconds: -1 });
    const { swept, answer: typed } = await raceTheSweep(id, () => pagePost(t, `${path}/verify`, { code }));
    expect(swept).toBe(1);
    expect(typed.statusCode, typed.body).toBe(409);
    expect(typed.body).toContain('not confirmed in time');
    expect(await storedHold(id)).toEqual({ status: 'expired', events: ['pending_confirmation', 'expired'] });
    const proof = await t.database.db
      .selectFrom('contact_proofs')
      .select('proven_at')
      .executeTakeFirstOrThrow();
    expect(proof.proven_at).toBeNull();
  });
  it('refuses a move of a hold the sweep expired meanwhile, rather than moving an expired booking', async () => {
    const [first] = await twoHolds();
    t.clock.advance({ minutes: 30, seconds: -1 });
    const { swept, answer: moved } = await raceTheSweep(first!.id, () =>
      t.request({
        method: 'PATCH',
        url: `/v1/bookings/${first!.reference}`,
        payload: { starts_at: '2026-11-24T12:00:00+00:00' },
      }),
    );
    expect(swept).toBe(2);
    expect(moved.statusCode, moved.body).toBe(409);
    expect(moved.json().error.message).toContain('expired');
    expect(await storedHold(first!.id)).toEqual({
      status: 'expired',
      events: ['pending_payment', 'expired'],
    });
    const stored = await t.database.db
      .selectFrom('bookings')
      .select('starts_at')
      .where('id', '=', first!.id)
      .executeTakeFirstOrThrow();
    expect(stored.starts_at).toBe(Date.parse(first!.startsAt));
  });
  it('refuses the deposit step of a pending_confirmation hold the sweep expired meanwhile, rather than keeping it paid', async () => {
    await stop();
    await start({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
    const path = pagePathOf(
      await bookOnPage(t, 'northside-hair', {
        location: 'camden',
        service: 'colour',
        startsAt: '2026-11-25T14:00:00Z',
        phone: '07912 345678',
      }),
    );
    const reference = await referenceOnPage(t, path);
    const { code } = await deliveredCode(t, reference);
    expect((await pagePost(t, `${path}/verify`, { code })).statusCode).toBe(303);
    const pay = await pagePost(t, `${path}/pay`);
    expect(pay.statusCode, pay.body).toBe(303);
    const checkout = new URL(String(pay.headers.location)).pathname;
    const held = await t.database.db
      .selectFrom('bookings')
      .select(['id', 'status', 'hold_expires_at'])
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    expect(held.status).toBe('pending_confirmation');
    t.clock.advance({ milliseconds: held.hold_expires_at! - t.clock.nowMs() - 1_000 });
    const { swept, answer: paid } = await raceTheSweep(held.id, () => pagePost(t, `${checkout}/pay`));
    expect(swept).toBe(1);
    expect(paid.statusCode, paid.body).toBe(409);
    expect(paid.body).toContain('expired');
    expect(await storedHold(held.id)).toEqual({
      status: 'expired',
      events: ['pending_confirmation', 'expired'],
    });
    const stored = await t.database.db
      .selectFrom('bookings')
      .select('deposit_status')
      .where('id', '=', held.id)
      .executeTakeFirstOrThrow();
    expect(stored.deposit_status).not.toBe('paid');
  });
  it('refuses the code of a public-page hold with a deposit still to pay the sweep expired meanwhile', async () => {
    await stop();
    await start({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
    const path = pagePathOf(
      await bookOnPage(t, 'northside-hair', {
        location: 'camden',
        service: 'colour',
        startsAt: '2026-11-25T14:00:00Z',
        phone: '07912 345678',
      }),
    );
    const reference = await referenceOnPage(t, path);
    const held = await t.database.db
      .selectFrom('bookings')
      .select(['id', 'hold_expires_at'])
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    t.clock.advance({ milliseconds: held.hold_expires_at! - t.clock.nowMs() - 9 * 60_000 });
    const resent = await pagePost(t, `${path}/resend`);
    expect(resent.statusCode, resent.body).toBe(303);
    const { code } = await deliveredCode(t, reference);
    t.clock.advance({ milliseconds: 9 * 60_000 - 1_000 });
    const { swept, answer: typed } = await raceTheSweep(held.id, () =>
      pagePost(t, `${path}/verify`, { code }),
    );
    expect(swept).toBe(1);
    expect(typed.statusCode, typed.body).toBe(409);
    expect(typed.body).toContain('not confirmed in time');
    expect(await storedHold(held.id)).toEqual({
      status: 'expired',
      events: ['pending_confirmation', 'expired'],
    });
    const stored = await t.database.db
      .selectFrom('bookings')
      .select('pending_requirements')
      .where('id', '=', held.id)
      .executeTakeFirstOrThrow();
    expect(stored.pending_requirements).toBeNull();
  });
});
