import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { insertProtectedIslingtonCut } from '../helpers/protected-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The console, round 2 (issue 45), through HTTP (inject): a booking's lines at the prices it was
 * booked at (a location's own), Complete and No-show only once it has started, and waiving a fee:
 * asked first, with a reason the event log keeps, and kept to owners and admins where the
 * organisation says so (policies.fee_waivers). The demo catalogue: a cut at Islington is £62 there
 * (£55 elsewhere), Booking Protection 50% late; Monday 23 November 2026, 09:00 in London.
 */
const NOW = '2026-11-23T09:00:00Z';
const PASSWORD = 'correct horse battery';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function start(policies?: Record<string, unknown>) {
  const catalogue = demoCatalogue() as { policies?: unknown };
  if (policies) catalogue.policies = policies;
  t = await startTestApp({ catalogues: [catalogue], now: NOW });
  for (const [email, role] of [
    ['owner@northside.test', 'owner'],
    ['desk@northside.test', 'staff'],
  ] as const) {
    await createUser(
      t.database.db,
      { organisationSlug: 'northside-hair', email, role, password: PASSWORD },
      t.clock.nowMs(),
    );
  }
}

const signIn = (email: string) => signInToConsole(t, 'northside-hair', email, PASSWORD);

/** A protected cut at Islington with Ben at £62 (the location's price), starting at `startsAt`. */
const islingtonCut = (startsAt: string) => insertProtectedIslingtonCut(t.database.db, Date.parse(startsAt));

describe('a booking in the console', () => {
  it('lists its services at the prices it was booked at, adding up to the total', async () => {
    await start();
    const reference = await islingtonCut('2026-11-30T10:00:00Z');
    const page = (await (await signIn('desk@northside.test')).get(`/console/bookings/${reference}`)).body;
    expect(page).toContain('<li>Cut &amp; blow-dry – £62.00</li></ul>Total £62.00');
    expect(page).not.toContain('£55.00');
  });

  it('offers Complete and No-show only once the appointment has started', async () => {
    await start();
    const reference = await islingtonCut('2026-11-23T10:00:00Z');
    const desk = await signIn('desk@northside.test');
    const before = (await desk.get(`/console/bookings/${reference}`)).body;
    expect(before).not.toContain('>Complete<');
    expect(before).not.toContain('>Mark no-show<');
    t.clock.set('2026-11-23T10:20:00Z');
    // (Half an hour idle ends a console session: signed in again.)
    const later = await signIn('desk@northside.test');
    const after = (await later.get(`/console/bookings/${reference}`)).body;
    expect(after).toContain('>Complete<');
    expect(after).toContain('>Mark no-show<');
  });
});

describe('waiving a fee', () => {
  /** A late cancellation made by the desk: a £31 fee (50% of £62) waiting to be processed. */
  async function lateCancelled(): Promise<string> {
    const reference = await islingtonCut('2026-11-23T14:00:00Z');
    const desk = await signIn('desk@northside.test');
    expect((await desk.post(`/console/bookings/${reference}/cancel`, { reason: 'Ill' })).statusCode).toBe(
      303,
    );
    return reference;
  }

  it('asks first, with a reason, and keeps the reason in the event log', async () => {
    await start();
    const reference = await lateCancelled();
    const desk = await signIn('desk@northside.test');
    const page = (await desk.get(`/console/bookings/${reference}`)).body;
    expect(page).toContain(
      `<a href="/console/bookings/${reference}/waive?fee=late_cancellation">Waive late-cancellation fee…</a>`,
    );
    // No one-click waiver any more.
    const oneClick = await desk.post(`/console/bookings/${reference}/action`, {
      action: 'waive_fee',
      fee: 'late_cancellation',
    });
    expect(oneClick.statusCode).toBe(400);
    const ask = (await desk.get(`/console/bookings/${reference}/waive?fee=late_cancellation`)).body;
    expect(ask).toContain(
      'The late-cancellation fee of £31.00 (£31.00 to charge after the deposit credit) will not be charged.',
    );
    expect(ask).toContain(
      '<label for="reason">Reason (kept in the event log)</label><input id="reason" name="reason" required maxlength="500">',
    );
    expect(ask).toContain('<button type="submit" class="danger">Waive the £31.00 fee</button>');
    const blank = await desk.post(`/console/bookings/${reference}/waive`, {
      fee: 'late_cancellation',
      reason: '  ',
    });
    expect(blank.statusCode).toBe(400);
    expect(blank.body).toContain('Give the reason for waiving the fee.');
    const waived = await desk.post(`/console/bookings/${reference}/waive`, {
      fee: 'late_cancellation',
      reason: 'Hospital appointment, letter seen',
    });
    expect(waived.statusCode).toBe(303);
    expect(waived.headers.location).toBe(`/console/bookings/${reference}?done=fee_waived`);
    const after = (await desk.get(`/console/bookings/${reference}`)).body;
    expect(after).toContain('Late-cancellation fee waived (£31.00): Hospital appointment, letter seen');
    const event = await t.database.db
      .selectFrom('booking_events')
      .select('details')
      .where('details', 'like', '%waived%')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(event.details!)).toMatchObject({
      fee: 'late_cancellation',
      outcome: 'waived',
      reason: 'Hospital appointment, letter seen',
    });
  });

  it('kept to owners and admins where the organisation says so', async () => {
    await start({ fee_waivers: 'owner_admin' });
    const reference = await lateCancelled();
    const desk = await signIn('desk@northside.test');
    const page = (await desk.get(`/console/bookings/${reference}`)).body;
    expect(page).not.toContain('/waive?fee=');
    expect(page).toContain('Only an owner or admin may waive the late-cancellation fee here.');
    expect((await desk.get(`/console/bookings/${reference}/waive?fee=late_cancellation`)).statusCode).toBe(
      403,
    );
    const refused = await desk.post(`/console/bookings/${reference}/waive`, {
      fee: 'late_cancellation',
      reason: 'x',
    });
    expect(refused.statusCode).toBe(403);
    const owner = await signIn('owner@northside.test');
    expect((await owner.get(`/console/bookings/${reference}`)).body).toContain(
      'Waive late-cancellation fee…',
    );
    const waived = await owner.post(`/console/bookings/${reference}/waive`, {
      fee: 'late_cancellation',
      reason: 'Goodwill',
    });
    expect(waived.statusCode).toBe(303);
  });
});

describe('the diary asked for a date twice', () => {
  it('says to give one date, in words, not a refusal with the value cut short', async () => {
    await start();
    const desk = await signIn('desk@northside.test');
    const answer = await desk.get('/console/diary?date=2026-11-23&date=2026-11-24');
    expect(answer.statusCode).toBe(400);
    expect(answer.body).toContain('<p class="error" role="alert">Give one date.</p>');
    expect(answer.body).not.toContain('2026-11-23,');
    // One date is the diary as ever.
    expect((await desk.get('/console/diary?date=2026-11-24')).statusCode).toBe(200);
  });
});
