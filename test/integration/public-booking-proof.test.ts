import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { customerLinks } from '../../src/app/customer-links.ts';
import { deliverAllDue } from '../../src/app/outbox-delivery.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { createLogger } from '../../src/cli/logger.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import {
  bookOnPage,
  deliver,
  deliveredCode,
  messagesOf,
  pageGet,
  pagePathOf,
  pagePost,
  referenceOnPage,
} from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A booking made on the public page (no key) is a hold until its customer proves the contact they
 * gave, with the 6-digit code sent there or the message's link (design.md 9.1): it never attaches to,
 * names or messages the client on file with that contact before, and is hers once proven. Through the
 * real pages (inject), the real outbox worker and REST. The demo catalogue (Jo Bloggs on file at
 * +447911123456, jo.bloggs@example.com); Monday 23 November 2026, 09:00 in London.
 */
const NOW = '2026-11-23T09:00:00Z';
const ORG = 'northside-hair';
const WEDNESDAY_2PM = '2026-11-25T14:00:00Z';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

/** Every line the server logged (start's logger), for what must never be logged as an error. */
let logged: string[] = [];

async function start(catalogue: unknown = demoCatalogue()) {
  logged = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logged.push(String(chunk));
      done();
    },
  });
  t = await startTestApp({
    catalogues: [catalogue],
    now: NOW,
    http: { logger: createLogger('info', sink) },
  });
}

/** The server's error lines (level 50 and above). */
function errorsLogged(): string[] {
  return logged.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
}

async function rest(reference: string) {
  const response = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

/**
 * A code entered on the booking's page: a refusal redirects (303) to the page with ?refused=, which
 * says it; `refused` is the flag ('' when accepted) and `said` the page landed on.
 */
async function enterCode(path: string, code: string) {
  const response = await pagePost(t, `${path}/verify`, { code });
  expect(response.statusCode, response.body).toBe(303);
  const location = String(response.headers.location);
  const refused = location.startsWith(`${path}?refused=`) ? location.slice(`${path}?refused=`.length) : '';
  if (!refused) expect(location).toBe(path);
  return { refused, said: (await pageGet(t, location)).body };
}

/** A colour at Camden on the public page: a £20 deposit, so the deposit is a step after the proof. */
async function colourWithDeposit(phone: string) {
  const path = pagePathOf(
    await bookOnPage(t, ORG, { location: 'camden', service: 'colour', startsAt: WEDNESDAY_2PM, phone }),
  );
  return { path, reference: await referenceOnPage(t, path) };
}

/** A stranger books a cut at Camden typing Jo's own phone number, with a name of their own. */
async function strangerBooksWithJosPhone(startsAt = WEDNESDAY_2PM) {
  const path = pagePathOf(
    await bookOnPage(t, ORG, {
      location: 'camden',
      service: 'cut',
      startsAt,
      firstName: 'Mallory',
      lastName: 'Stranger',
      phone: '07911 123456',
    }),
  );
  return { path, reference: await referenceOnPage(t, path) };
}

describe('a public booking waits for its contact to be proven', () => {
  it('holds the slot, belongs to nobody on file, names nobody on file, and sends only the code', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const { path, reference } = await strangerBooksWithJosPhone();
    const booking = await rest(reference);
    expect(booking.status).toBe('pending_confirmation');
    expect(booking.pending_confirmation.requirements).toEqual(['contact_verification']);
    expect(booking.client_id).not.toBe(ids.jo);
    // The page names nobody until the contact is proven: not the one on file for that phone, nor what
    // the visitor typed (the page is reached too from the code's link, by whoever holds that phone).
    const held = await pageGet(t, path);
    expect(held.body).not.toMatch(/Mallory|Stranger|Bloggs|<dt>Name<\/dt>/);
    expect(held.body).toContain('Confirm it is you');
    expect(held.body).toContain('the number ending 3456');
    // Jo is still the one client found by her phone.
    const lookup = await t.request({ method: 'GET', url: '/v1/clients?phone=%2B447911123456' });
    expect(lookup.json().data.id).toBe(ids.jo);
    // The slot is held: nobody else is offered it.
    const cut = ids.services.cut!;
    const free = await t.request({
      method: 'GET',
      url: `/v1/locations/camden/availability?service_ids=${cut}&date=2026-11-25&staff_id=${booking.staff_id}`,
    });
    expect(free.json().data.slots.map((s: { starts_at: string }) => s.starts_at)).not.toContain(
      '2026-11-25T14:00:00+00:00',
    );
    // One message: the code, by text to the phone typed, with no name in it.
    const { message, words } = await deliveredCode(t, reference);
    expect((await messagesOf(t, reference)).map((m) => m.kind)).toEqual(['verification_code']);
    expect(message).toMatchObject({ channel: 'sms', to: '+447911123456' });
    expect(words).not.toMatch(/Mallory|Stranger|Jo\b|Bloggs/);
    expect(words).toContain('Northside Hair');
    expect(words).toMatch(/Ignore this message/);
  });

  it('the right code confirms it for the client on file, whose name it then shows and who is told', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const { path, reference } = await strangerBooksWithJosPhone();
    const { code } = await deliveredCode(t, reference);
    const wrong = await enterCode(path, code === '000000' ? '111111' : '000000');
    expect(wrong.refused).toBe('wrong');
    expect(wrong.said).toContain('4 tries are left');
    expect((await rest(reference)).status).toBe('pending_confirmation');
    const right = await pagePost(t, `${path}/verify`, { code: `${code.slice(0, 3)} ${code.slice(3)}` });
    expect(right.statusCode, right.body).toBe(303);
    expect(right.headers.location).toBe(path);
    const booking = await rest(reference);
    expect(booking.status).toBe('confirmed');
    expect(booking.pending_confirmation).toBeNull();
    expect(booking.client_id).toBe(ids.jo);
    expect((await pageGet(t, path)).body).toContain('Jo Bloggs');
    // Its unproven record is gone: the booking is Jo's, and only Jo has that phone.
    const records = await t.database.db
      .selectFrom('clients')
      .select(['id', 'contact_proven'])
      .where('phone', '=', '+447911123456')
      .execute();
    expect(records).toEqual([{ id: ids.jo, contact_proven: 1 }]);
    await deliver(t);
    const kinds = (await messagesOf(t, reference)).map((m) => `${m.kind}:${m.channel}`).sort();
    expect(kinds).toEqual([
      'confirmed:email',
      'confirmed:sms',
      'reminder:email',
      'reminder:sms',
      'verification_code:sms',
    ]);
  });

  it('a customer new to the salon goes on file once proven, with the contact proven and no other', async () => {
    await start();
    const path = pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: WEDNESDAY_2PM,
        phone: '07400 123456',
        email: 'Rosa@Example.com',
      }),
    );
    const reference = await referenceOnPage(t, path);
    const { code } = await deliveredCode(t, reference);
    expect((await pagePost(t, `${path}/verify`, { code })).statusCode).toBe(303);
    const booking = await rest(reference);
    expect(booking.status).toBe('confirmed');
    const found = await t.request({ method: 'GET', url: '/v1/clients?phone=%2B447400123456' });
    expect(found.json().data).toMatchObject({
      id: booking.client_id,
      first_name: 'Rosa',
      last_name: 'Parks',
      phone: '+447400123456',
      // The e-mail was typed, not proven: it is nobody's on file (whoever types it next is not matched to Rosa).
      email: null,
    });
    const byEmail = await t.request({ method: 'GET', url: '/v1/clients?email=rosa@example.com' });
    expect(byEmail.statusCode).toBe(404);
  });

  it('a wrong code is answered with a redirect to the page, which says it: Back and Reload send no code again', async () => {
    await start();
    const { path, reference } = await strangerBooksWithJosPhone();
    const { code } = await deliveredCode(t, reference);
    const wrongCode = code === '123456' ? '654321' : '123456';
    const tries = async () =>
      (await t.database.db.selectFrom('contact_proofs').select('tries').executeTakeFirstOrThrow()).tries;
    for (const left of [4, 3]) {
      const wrong = await pagePost(t, `${path}/verify`, { code: wrongCode });
      expect(wrong.statusCode, wrong.body).toBe(303);
      const refusedAt = String(wrong.headers.location);
      expect(refusedAt).toBe(`${path}?refused=wrong`);
      // The page the browser lands on (and reloads, or goes Back to) only reads: the count is the database's.
      for (let reload = 0; reload < 2; reload++) {
        const shown = await pageGet(t, refusedAt);
        expect(shown.statusCode).toBe(200);
        expect(shown.body).toContain(
          `<p id="code-error" role="alert" class="fee">That code is not right. Check the latest message we sent; ${left} tries are left for this code.</p>`,
        );
        expect(shown.body).toMatch(
          /<input id="code" name="code"[^>]* aria-invalid="true" aria-describedby="code-error" autofocus>/,
        );
      }
      expect(await tries()).toBe(5 - left);
    }
    // The flag says which words to show, never how many tries are left; without a wrong try it shows none.
    expect((await pageGet(t, `${path}?refused=wrong&tries_left=5`)).body).toContain('3 tries are left');
    expect((await pageGet(t, path)).body).not.toContain('code-error');
    const right = await pagePost(t, `${path}/verify`, { code });
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toBe(path);
    expect((await pageGet(t, `${path}?refused=wrong`)).body).not.toContain('code-error');
  });

  it('a code a digit short or long, or no digits at all, is said to be no code and costs no try', async () => {
    await start();
    const { path, reference } = await strangerBooksWithJosPhone();
    const { code } = await deliveredCode(t, reference);
    for (const typed of [code.slice(0, 5), `${code}1`, 'abcdef', '12 34 5']) {
      const response = await enterCode(path, typed);
      expect(response.refused, typed).toBe('unreadable');
      expect(response.said).toContain(
        '<p id="code-error" role="alert" class="fee">The code has 6 digits: check the latest message we sent and enter all of them.</p>',
      );
    }
    const { tries } = await t.database.db
      .selectFrom('contact_proofs')
      .select('tries')
      .executeTakeFirstOrThrow();
    expect(tries).toBe(0);
    expect((await enterCode(path, code)).refused).toBe('');
  });

  it('takes the right code typed in another script’s digits (Arabic-Indic, full-width) without counting a try', async () => {
    await start();
    const tries = async () =>
      (await t.database.db.selectFrom('contact_proofs').select('tries').executeTakeFirstOrThrow()).tries;
    const inDigits = (code: string, zero: number) =>
      [...code].map((d) => String.fromCodePoint(zero + Number(d))).join('');
    // An Arabic keyboard types its own digits.
    const { path, reference } = await strangerBooksWithJosPhone();
    const { code } = await deliveredCode(t, reference);
    expect((await enterCode(path, inDigits(code, 0x0660))).refused).toBe('');
    expect(await tries()).toBe(0);
    expect(await rest(reference)).toMatchObject({ status: 'confirmed' });
    // A Japanese IME types full-width ones (and a full-width dash).
    const other = pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: '2026-11-26T14:00:00Z',
        email: 'rosa@example.org',
      }),
    );
    const otherReference = await referenceOnPage(t, other);
    const wide = inDigits((await deliveredCode(t, otherReference)).code, 0xff10);
    expect((await enterCode(other, `${wide.slice(0, 3)}\uff0d${wide.slice(3)}`)).refused).toBe('');
    expect(await rest(otherReference)).toMatchObject({ status: 'confirmed' });
  });

  it('five wrong codes spend the code; a new one works and the old one does not', async () => {
    await start();
    const { path, reference } = await strangerBooksWithJosPhone();
    const first = await deliveredCode(t, reference);
    const wrongCode = first.code === '123456' ? '654321' : '123456';
    for (let left = 4; left >= 1; left--) {
      const response = await enterCode(path, wrongCode);
      expect(response.refused).toBe('wrong');
      expect(response.said).toContain(`${left} ${left === 1 ? 'try is' : 'tries are'} left`);
    }
    const spent = await enterCode(path, wrongCode);
    expect(spent.refused).toBe('spent');
    expect(spent.said).toContain('too many times');
    // Even the right code is refused now.
    expect((await enterCode(path, first.code)).refused).toBe('spent');
    const resent = await pagePost(t, `${path}/resend`);
    expect(resent.statusCode).toBe(303);
    expect((await pageGet(t, String(resent.headers.location))).body).toContain('We sent you a new code');
    const second = await deliveredCode(t, reference);
    expect(second.linkPath).not.toBe(first.linkPath);
    if (second.code !== first.code) {
      expect((await enterCode(path, first.code)).refused).toBe('wrong');
    }
    expect((await pagePost(t, `${path}/verify`, { code: second.code })).statusCode).toBe(303);
    expect((await rest(reference)).status).toBe('confirmed');
  });

  it('says a new code was sent only while the code is awaited: Reload after confirming does not say it', async () => {
    await start();
    const { path, reference } = await strangerBooksWithJosPhone();
    const resent = await pagePost(t, `${path}/resend`);
    const sentPage = String(resent.headers.location);
    expect(sentPage).toBe(`${path}?sent=1`);
    expect((await pageGet(t, sentPage)).body).toContain('We sent you a new code');
    // The link in the new message, confirmed in another tab; then the first tab is reloaded.
    const { code } = await deliveredCode(t, reference);
    expect((await enterCode(path, code)).refused).toBe('');
    const reloaded = await pageGet(t, sentPage);
    expect(reloaded.statusCode).toBe(200);
    expect(reloaded.body).toContain('Booking confirmed');
    expect(reloaded.body).not.toContain('new code');
    // "Send a new code" pressed in the first tab after all: it lands on the booking, sending nothing.
    const sent = (await messagesOf(t, reference)).length;
    const late = await pagePost(t, `${path}/resend`);
    expect(late.statusCode).toBe(303);
    expect(late.headers.location).toBe(path);
    expect((await messagesOf(t, reference)).length).toBe(sent);
  });

  it('guesses made at once are counted one after another: five at most, whatever the concurrency', async () => {
    await start();
    const { path, reference } = await strangerBooksWithJosPhone();
    const { code } = await deliveredCode(t, reference);
    const wrongCode = code === '123456' ? '654321' : '123456';
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => pagePost(t, `${path}/verify`, { code: wrongCode })),
    );
    const refusals = answers.map((a) => String(a.headers.location).replace(`${path}?refused=`, ''));
    expect(refusals.filter((r) => r === 'wrong')).toHaveLength(4);
    expect(refusals.filter((r) => r === 'spent')).toHaveLength(8);
    const proof = await t.database.db.selectFrom('contact_proofs').select('tries').executeTakeFirstOrThrow();
    expect(proof.tries).toBe(5);
    expect((await enterCode(path, code)).refused).toBe('spent');
  });

  it('a code lasts ten minutes; the hold lasts its own fifteen, then the slot is free again', async () => {
    await start();
    const { path, reference } = await strangerBooksWithJosPhone();
    const { code } = await deliveredCode(t, reference);
    t.clock.advance({ minutes: 10 });
    const late = await enterCode(path, code);
    expect(late.refused).toBe('expired');
    expect(late.said).toContain('That code has expired.');
    t.clock.advance({ minutes: 5 });
    expect((await rest(reference)).status).toBe('expired');
    const afterHold = await pagePost(t, `${path}/verify`, { code });
    expect(afterHold.statusCode).toBe(409);
    expect(afterHold.body).toContain('not confirmed in time');
    expect((await pagePost(t, `${path}/resend`)).statusCode).toBe(409);
  });

  it('the link proves it too, but only through its button: opening it changes nothing', async () => {
    await start();
    const { path, reference } = await strangerBooksWithJosPhone();
    const { linkPath } = await deliveredCode(t, reference);
    const opened = await pageGet(t, linkPath);
    expect(opened.statusCode).toBe(200);
    expect(opened.body).toContain('Yes, confirm my booking');
    expect(opened.body).not.toMatch(/Mallory|Bloggs/);
    expect((await rest(reference)).status).toBe('pending_confirmation');
    const confirmed = await pagePost(t, linkPath);
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    expect(confirmed.headers.location).toBe(path);
    expect((await rest(reference)).status).toBe('confirmed');
    // Used again: it is done already, and still leads to the booking.
    expect((await pagePost(t, linkPath)).headers.location).toBe(path);
    expect((await pageGet(t, `/p/verify/${'x'.repeat(43)}`)).statusCode).toBe(404);
    expect((await pagePost(t, `/p/verify/${'x'.repeat(43)}`)).statusCode).toBe(404);
  });

  it('a link that is no longer valid says so when opened, with the way on, and opening it spends nothing', async () => {
    await start();
    const { path, reference } = await strangerBooksWithJosPhone();
    const first = await deliveredCode(t, reference);
    // Unknown: no button, no booking named.
    const unknown = await pageGet(t, `/p/verify/${'x'.repeat(43)}`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('This link is not valid');
    expect(unknown.body).not.toContain('Yes, confirm my booking');
    // Replaced by a new code: the old link is not valid any more.
    expect((await pagePost(t, `${path}/resend`)).statusCode).toBe(303);
    const { linkPath } = await deliveredCode(t, reference);
    const replaced = await pageGet(t, first.linkPath);
    expect(replaced.statusCode).toBe(404);
    expect(replaced.body).not.toContain('Yes, confirm my booking');
    // Expired: said, with the booking's page to ask for a new code there; still waiting for it.
    t.clock.advance({ minutes: 10 });
    const expired = await pageGet(t, linkPath);
    expect(expired.statusCode).toBe(409);
    expect(expired.body).toContain('This link has expired');
    expect(expired.body).toContain(`href="${path}"`);
    expect(expired.body).not.toContain('Yes, confirm my booking');
    expect((await rest(reference)).status).toBe('pending_confirmation');
    // The hold lapsed: said, with the way to book again.
    t.clock.advance({ minutes: 5 });
    const lapsed = await pageGet(t, linkPath);
    expect(lapsed.statusCode).toBe(409);
    expect(lapsed.body).toContain('not confirmed in time');
    expect(lapsed.body).toMatch(/href="\/p\/northside-hair\?location=camden[^"]*">Book again/);
    expect(lapsed.body).not.toContain('Yes, confirm my booking');
  });

  it('a link already used leads to the booking when opened again', async () => {
    await start();
    const { path, reference } = await strangerBooksWithJosPhone();
    const { linkPath } = await deliveredCode(t, reference);
    expect((await pagePost(t, linkPath)).statusCode).toBe(303);
    const again = await pageGet(t, linkPath);
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(path);
  });

  it('before the proof, nothing else is done from its page: no payment, no move; cancelling is', async () => {
    await start();
    const { path, reference } = await colourWithDeposit('07400 654321');
    expect((await rest(reference)).pending_confirmation.requirements).toEqual([
      'contact_verification',
      'deposit',
    ]);
    const held = await pageGet(t, path);
    expect(held.body).not.toContain('Pay deposit');
    expect(held.body).not.toContain('Change the time');
    expect((await pagePost(t, `${path}/pay`)).statusCode).toBe(409);
    expect((await pageGet(t, `${path}/reschedule`)).statusCode).toBe(409);
    // Proven: the deposit is the step left, and the customer is sent the page's link for it.
    const { code } = await deliveredCode(t, reference);
    expect((await pagePost(t, `${path}/verify`, { code })).statusCode).toBe(303);
    const proven = await rest(reference);
    expect(proven.status).toBe('pending_confirmation');
    expect(proven.pending_confirmation.requirements).toEqual(['deposit']);
    expect((await pageGet(t, path)).body).toContain('Pay deposit');
    expect((await messagesOf(t, reference)).map((m) => m.kind)).toContain('booking_page_link');
    // Paid at the (local) checkout: confirmed.
    const pay = await pagePost(t, `${path}/pay`);
    expect(pay.statusCode).toBe(303);
    const checkout = new URL(String(pay.headers.location)).pathname;
    expect((await pagePost(t, `${checkout}/pay`)).statusCode).toBe(303);
    expect((await rest(reference)).status).toBe('confirmed');
    // "Pay deposit" pressed again in a tab still open on it: it lands on the booking, confirmed.
    const again = await pagePost(t, `${path}/pay`);
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(path);
  });

  it('a stranger can cancel an unproven hold from its page, which frees the slot', async () => {
    await start();
    const { path, reference } = await strangerBooksWithJosPhone();
    await deliver(t);
    expect((await pagePost(t, `${path}/cancel`)).statusCode).toBe(303);
    expect((await rest(reference)).status).toBe('cancelled');
    // Nothing goes to the unproven contact but the code already sent: no "cancelled" to Jo's phone.
    await deliver(t);
    expect((await messagesOf(t, reference)).map((m) => m.kind)).toEqual(['verification_code']);
  });
});

describe('a salon with no payment provider', () => {
  it('gives the form back with what was typed when a service needs a deposit no one can take online', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW, payments: null });
    const refused = await bookOnPage(t, ORG, {
      location: 'camden',
      service: 'colour',
      startsAt: WEDNESDAY_2PM,
      firstName: 'Mallory',
      phone: '07400 777888',
    });
    expect(refused.statusCode).toBe(503);
    expect(refused.body).toContain('no payment provider is set up to take it online');
    expect(refused.body).toContain('value="Mallory"');
    expect(refused.body).toContain('value="07400 777888"');
    const written = await t.database.db.selectFrom('bookings').select('id').execute();
    expect(written).toEqual([]);
  });
});

describe('every face keeps to the proof, not only the page', () => {
  it('REST gives no payment_url before the proof and refuses to move the booking; the local checkout refuses to take the deposit', async () => {
    await start();
    const { path, reference } = await colourWithDeposit('07400 777888');
    const booking = await rest(reference);
    expect(booking.payment_url).toBeNull();
    expect(booking.booking_page_url).toMatch(/\/p\/manage\//);
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: '2026-11-25T16:00:00+00:00' },
    });
    expect(moved.statusCode).toBe(409);
    expect(moved.json().error.message).toContain('confirm it with the code');
    // The checkout exists (the deposit is the next step), but takes nothing before the proof.
    const session = await t.database.db
      .selectFrom('checkout_sessions')
      .select('id')
      .executeTakeFirstOrThrow();
    const refused = await pagePost(t, `/checkout/${session.id}/pay`);
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('Not yet');
    // Answered as a page, and nothing after it: no error logged once the page was sent.
    expect(errorsLogged()).toEqual([]);
    const { code } = await deliveredCode(t, reference);
    expect((await pagePost(t, `${path}/verify`, { code })).statusCode).toBe(303);
    expect((await rest(reference)).payment_url).toMatch(/\/checkout\//);
  });

  it('a record an integrator booked again for does not stop the proof: it stays, the proven booking moves', async () => {
    await start();
    const ids = await catalogueIds(t.database.db);
    const { path, reference } = await strangerBooksWithJosPhone();
    const unproven = (await rest(reference)).client_id;
    const again = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'camden',
        service_ids: [ids.services.cut],
        client_id: unproven,
        starts_at: '2026-11-25T16:00:00+00:00',
      },
    });
    expect(again.statusCode, again.body).toBe(201);
    const { code } = await deliveredCode(t, reference);
    expect((await pagePost(t, `${path}/verify`, { code })).statusCode).toBe(303);
    expect((await rest(reference)).client_id).toBe(ids.jo);
    expect((await rest(again.json().data.reference)).client_id).toBe(unproven);
  });

  it('a code sent keeps no secret in the record; one not sent within its ten minutes is not sent at all', async () => {
    await start();
    const { reference } = await strangerBooksWithJosPhone();
    const sent: string[] = [];
    const sms = {
      async send(message: { rendered: { sms: string } }) {
        sent.push(message.rendered.sms);
        return { providerId: `SM${sent.length}` };
      },
    };
    const links = customerLinks(localCheckout, 'https://book.example');
    await deliverAllDue({ db: t.database.db, clock: t.clock, senders: { sms, email: null }, links });
    expect(sent).toHaveLength(1);
    const code = /code is (\d{6})/.exec(sent[0]!)![1]!;
    const [record] = await messagesOf(t, reference);
    expect(record!.status).toBe('sent');
    expect(record!.body).not.toContain(code);
    expect(record!.body).not.toMatch(/\/p\/verify\/[A-Za-z0-9_-]{43}/);
    expect(record!.body).toContain('Your code is ••••••');
    // A new code whose delivery is held up past its ten minutes is dropped, not sent late.
    const path = `/p/manage/${await pageTokenOf(reference)}`;
    expect((await pagePost(t, `${path}/resend`)).statusCode).toBe(303);
    t.clock.advance({ minutes: 10 });
    await deliverAllDue({ db: t.database.db, clock: t.clock, senders: { sms, email: null }, links });
    expect(sent).toHaveLength(1);
  });
});

async function pageTokenOf(reference: string): Promise<string> {
  const row = await t.database.db
    .selectFrom('booking_pages as p')
    .innerJoin('bookings as b', 'b.id', 'p.booking_id')
    .select('p.token')
    .where('b.reference', '=', reference)
    .executeTakeFirstOrThrow();
  return row.token;
}
