import { afterEach, expect, it } from 'vitest';
import { signInNewAccount } from '../helpers/console-session.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { insertProtectedIslingtonCut } from '../helpers/protected-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Console pages left open while the booking changed. The Cancel page states what cancelling means (on time or late, the deposit, the fee)
 * before the button. What the button does is what the page said: when that changed while the page was
 * open (the cancellation window passed, another desk moved the booking), nothing is cancelled and the
 * page says so with the new terms, to confirm again. Islington: Booking Protection, 48-hour window,
 * 50% late-cancellation fee. Monday 23 November 2026, 09:00 in London.
 */
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

/** The hidden fields of the page's cancel form, as the browser sends them with its button. */
function cancelForm(html: string, reference: string): Record<string, string> {
  const form = new RegExp(
    `<form method="post" action="/console/bookings/${reference}/cancel">([\\s\\S]*?)</form>`,
  ).exec(html);
  expect(form, html).not.toBeNull();
  const fields: Record<string, string> = {};
  for (const [, name, value] of form![1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    if (name !== '_csrf') fields[name!] = value!;
  }
  return fields;
}

it('cancels nothing when the window passed while the page was open, and shows the late terms to confirm', async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
  const desk = await signInNewAccount(t, 'northside-hair', 'desk@northside.test', 'staff');
  // 48 hours and 10 minutes ahead: on time now, late in a quarter of an hour.
  const reference = await insertProtectedIslingtonCut(t.database.db, Date.parse('2026-11-25T09:10:00Z'));
  const page = await desk.get(`/console/bookings/${reference}/cancel`);
  expect(page.body).toContain('This cancellation is on time.');
  expect(page.body).toContain('No fee applies.');
  const shown = cancelForm(page.body, reference);

  t.clock.advance({ minutes: 15 });
  const sent = await desk.post(`/console/bookings/${reference}/cancel`, { ...shown, reason: 'Caller ill' });
  expect(sent.statusCode, sent.body).toBe(409);
  expect(sent.body).toContain('Nothing was cancelled');
  // The reason typed is kept for the second confirmation.
  expect(sent.body).toContain('name="reason" maxlength="1000" value="Caller ill"');
  expect(sent.body).toContain('This is a late cancellation (inside the cancellation window).');
  expect(sent.body).toContain('A late-cancellation fee of £31.00 (50%) will be recorded');
  const still = await desk.get(`/console/bookings/${reference}`);
  expect(still.body).toContain(`Booking ${reference}: Confirmed`);

  // Confirmed on the terms now shown: cancelled, with its fee.
  const again = await desk.post(`/console/bookings/${reference}/cancel`, cancelForm(sent.body, reference));
  expect(again.statusCode, again.body).toBe(303);
  const cancelled = await desk.get(`/console/bookings/${reference}`);
  expect(cancelled.body).toContain(`Booking ${reference}: Cancelled`);
  expect(cancelled.body).toContain('Late cancellation');
});

it('sends the form back, the reason kept, when the reason is refused (over 1,000 characters)', async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
  const desk = await signInNewAccount(t, 'northside-hair', 'desk@northside.test', 'staff');
  const reference = await insertProtectedIslingtonCut(t.database.db, Date.parse('2026-11-30T09:00:00Z'));
  const page = await desk.get(`/console/bookings/${reference}/cancel`);
  const long = `Caller ill ${'x'.repeat(1000)}`;
  const sent = await desk.post(`/console/bookings/${reference}/cancel`, {
    ...cancelForm(page.body, reference),
    reason: long,
  });
  expect(sent.statusCode, sent.body).toBe(400);
  expect(sent.body).toMatch(/<p class="error" role="alert">reason [^<]*1000/);
  expect(sent.body).toContain(`value="${long}"`);
  expect(sent.body).toContain('<button type="submit" class="danger">Cancel the booking</button>');
  expect((await desk.get(`/console/bookings/${reference}`)).body).toContain(
    `Booking ${reference}: Confirmed`,
  );
});

it('tells in the event log what became of a deposit only when there was one paid', async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
  const desk = await signInNewAccount(t, 'northside-hair', 'desk@northside.test', 'staff');
  // No deposit: cancelled late and on time, neither says a deposit was kept or returned.
  for (const startsAt of ['2026-11-24T14:00:00Z', '2026-11-30T14:00:00Z']) {
    const reference = await insertProtectedIslingtonCut(t.database.db, Date.parse(startsAt));
    const page = await desk.get(`/console/bookings/${reference}/cancel`);
    const sent = await desk.post(`/console/bookings/${reference}/cancel`, cancelForm(page.body, reference));
    expect(sent.statusCode, sent.body).toBe(303);
    const cancelled = await desk.get(`/console/bookings/${reference}`);
    expect(cancelled.body).toMatch(/<td>(Late cancellation|Cancelled in time)<\/td>/);
    expect(cancelled.body).not.toMatch(/deposit (retained|refunded)/);
  }
  // A deposit paid at the desk: its cancellation says what became of it.
  const paid = await insertProtectedIslingtonCut(t.database.db, Date.parse('2026-11-24T15:00:00Z'));
  await t.database.db
    .updateTable('bookings')
    .set({ deposit_minor: 2000, deposit_status: 'paid' })
    .where('reference', '=', paid)
    .execute();
  const page = await desk.get(`/console/bookings/${paid}/cancel`);
  expect(page.body).toContain('The paid deposit will be retained.');
  await desk.post(`/console/bookings/${paid}/cancel`, cancelForm(page.body, paid));
  expect((await desk.get(`/console/bookings/${paid}`)).body).toContain(
    '<td>Late cancellation; deposit retained</td>',
  );
});

/** The hidden fields of the Reschedule page's button for a time, as the browser sends them. */
function timeButton(html: string, reference: string, startsAt: string): Record<string, string> {
  const forms = html.matchAll(
    new RegExp(
      `<form method="post" action="/console/bookings/${reference}/reschedule" class="inline">(.*?)</form>`,
      'g',
    ),
  );
  for (const [, inner] of forms) {
    const fields = Object.fromEntries(
      [...inner!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(([, n, v]) => [
        n!,
        v!,
      ]),
    );
    if (fields.starts_at === startsAt) {
      delete fields._csrf;
      return fields;
    }
  }
  throw new Error(`no button for ${startsAt}`);
}

it('moves nothing when another desk moved the booking while the Reschedule page was open', async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
  const deskA = await signInNewAccount(t, 'northside-hair', 'a@northside.test', 'staff');
  const deskB = await signInNewAccount(t, 'northside-hair', 'b@northside.test', 'staff');
  const reference = await insertProtectedIslingtonCut(t.database.db, Date.parse('2026-11-30T14:00:00Z'));
  const pageA = await deskA.get(`/console/bookings/${reference}/reschedule?date=2026-11-30`);
  const pageB = await deskB.get(`/console/bookings/${reference}/reschedule?date=2026-11-30`);
  // Desk B moves it to 15:00; desk A, on the page opened before, picks 13:00.
  const movedByB = await deskB.post(
    `/console/bookings/${reference}/reschedule`,
    timeButton(pageB.body, reference, '2026-11-30T15:00:00.000Z'),
  );
  expect(movedByB.statusCode, movedByB.body).toBe(303);
  const byA = await deskA.post(
    `/console/bookings/${reference}/reschedule`,
    timeButton(pageA.body, reference, '2026-11-30T13:00:00.000Z'),
  );
  expect(byA.statusCode, byA.body).toBe(409);
  expect(byA.body).toContain('Someone else moved this booking while the page was open');
  const rest = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
  expect(rest.json().data.starts_at).toBe('2026-11-30T15:00:00+00:00');

  // Picked again on the page as it is now: moved.
  const fresh = await deskA.get(`/console/bookings/${reference}/reschedule?date=2026-11-30`);
  const again = await deskA.post(
    `/console/bookings/${reference}/reschedule`,
    timeButton(fresh.body, reference, '2026-11-30T13:00:00.000Z'),
  );
  expect(again.statusCode, again.body).toBe(303);
  const after = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
  expect(after.json().data.starts_at).toBe('2026-11-30T13:00:00+00:00');
});
