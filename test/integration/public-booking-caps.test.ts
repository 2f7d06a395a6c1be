import { afterEach, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { catalogueIds, countBookings } from '../helpers/booking-fixtures.ts';
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
 * What a stranger can do to a salon through its public page, capped (design.md 9.1): unconfirmed holds
 * and bookings per phone or e-mail, booking attempts per client address, and the organisation's own
 * choice of no code (`policies.public_verification: none`), which keeps the caps and still never hands
 * a booking to the client on file. The demo catalogue; Monday 23 November 2026, 09:00 in London.
 */
const NOW = '2026-11-23T09:00:00Z';
const ORG = 'northside-hair';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

/** The demo catalogue with these public-page policies. */
function withPolicies(policies: Record<string, unknown>, where: 'top' | 'organisation' = 'top') {
  const catalogue = demoCatalogue() as { organisation: Record<string, unknown>; policies?: unknown };
  if (where === 'top') catalogue.policies = policies;
  else catalogue.organisation.policies = policies;
  return catalogue;
}

/** Free times for a cut at Camden (London is on UTC in November): Amara works Wednesdays 9-1 and 2-6. */
const FREE = [
  '2026-11-25T09:00:00Z',
  '2026-11-25T14:00:00Z',
  '2026-11-25T16:00:00Z',
  '2026-11-26T11:00:00Z',
  '2026-11-26T14:00:00Z',
];

const cut = (slot: number, contact: { phone?: string; email?: string }, address?: string) =>
  bookOnPage(t, ORG, { location: 'camden', service: 'cut', startsAt: FREE[slot]!, ...contact }, { address });

describe('caps on strangers', () => {
  it('two unconfirmed holds per phone; a third waits until one is confirmed or lapses', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const phone = { phone: '07400 111222' };
    const first = pagePathOf(await cut(0, phone));
    pagePathOf(await cut(1, phone));
    const third = await cut(2, phone);
    expect(third.statusCode).toBe(429);
    expect(third.body).toContain('2 bookings waiting to be confirmed');
    // The same number written another way is the same contact.
    expect((await cut(2, { phone: '+44 7400 111222' })).statusCode).toBe(429);
    expect(await countBookings(t.database.db)).toBe(2);
    // Another number from the same address is not held up by it.
    pagePathOf(await cut(2, { phone: '07400 333444' }));
    // One confirmed: room for one more hold.
    const reference = await referenceOnPage(t, first);
    const { code } = await deliveredCode(t, reference);
    expect((await pagePost(t, `${first}/verify`, { code })).statusCode).toBe(303);
    pagePathOf(await cut(3, phone));
  });

  it('three public bookings per contact in 24 hours, counted by phone and by e-mail', async () => {
    t = await startTestApp({
      catalogues: [withPolicies({ public_verification: 'none' })],
      now: NOW,
    });
    const email = 'rosa@example.com';
    for (const slot of [0, 1, 2]) pagePathOf(await cut(slot, { phone: `07400 00011${slot}`, email }));
    const fourth = await cut(3, { phone: '07400 000119', email: 'ROSA@example.com' });
    expect(fourth.statusCode).toBe(429);
    expect(fourth.body).toContain('3 bookings on this page in the last 24 hours');
    t.clock.advance({ hours: 24, minutes: 1 });
    pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: FREE[4]!,
        email,
      }),
    );
  });

  it('so many public bookings an hour across the organisation, whatever the contacts and addresses', async () => {
    t = await startTestApp({
      catalogues: [withPolicies({ public_bookings_per_organisation_per_hour: 2 })],
      now: NOW,
    });
    // Each from a phone and an address of its own: the caps per contact and per address never refuse.
    pagePathOf(await cut(0, { phone: '07400 100001' }, '127.0.0.41'));
    // A booking not made (the time taken already) gives its place back.
    expect((await cut(0, { phone: '07400 100002' }, '127.0.0.42')).statusCode).toBe(409);
    pagePathOf(await cut(1, { phone: '07400 100003' }, '127.0.0.43'));
    const third = await cut(2, { email: 'someone.else@example.com' }, '127.0.0.44');
    expect(third.statusCode).toBe(429);
    expect(third.body).toContain(
      'This salon takes 2 bookings an hour on this page, and this hour&#39;s are taken. Try again in 60 minutes, or call the salon.',
    );
    expect(await countBookings(t.database.db)).toBe(2);
    // The next clock hour takes bookings again.
    t.clock.advance({ hours: 1 });
    pagePathOf(await cut(2, { email: 'someone.else@example.com' }, '127.0.0.44'));
  });

  it('takes a place of the hour only for a booking made: many at once for one time are one booking and refusals', async () => {
    t = await startTestApp({
      catalogues: [withPolicies({ public_bookings_per_organisation_per_hour: 2 })],
      now: NOW,
    });
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => cut(0, { phone: `07400 20000${i}` }, `127.0.0.${60 + i}`)),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([303, 409, 409, 409, 409]);
    // One place taken: one more booking this hour, then none.
    pagePathOf(await cut(1, { phone: '07400 200009' }, '127.0.0.70'));
    expect((await cut(2, { phone: '07400 200010' }, '127.0.0.71')).statusCode).toBe(429);
  });

  it('a Gmail address spelt another way (dots, a +tag, googlemail.com) is the same inbox for the caps', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    // Google delivers every one of these to rosaparks@gmail.com.
    pagePathOf(await cut(0, { email: 'rosaparks@gmail.com' }, '127.0.0.21'));
    pagePathOf(await cut(1, { email: 'Rosa.Parks@gmail.com' }, '127.0.0.22'));
    for (const [i, email] of [
      'r.o.s.a.parks@gmail.com',
      'rosaparks+salon@gmail.com',
      'rosa.parks@googlemail.com',
    ].entries()) {
      const third = await cut(2, { email }, `127.0.0.${23 + i}`);
      expect(third.statusCode, email).toBe(429);
      expect(third.body).toContain('2 bookings waiting to be confirmed');
    }
    expect(await countBookings(t.database.db)).toBe(2);
    // Another inbox at Gmail is another contact; the held ones keep the address as typed.
    pagePathOf(await cut(2, { email: 'rosa.parks.jr@gmail.com' }, '127.0.0.30'));
    const proofs = await t.database.db
      .selectFrom('contact_proofs')
      .select('email')
      .orderBy('created_at')
      .execute();
    expect(proofs.map((p) => p.email)).toEqual([
      'rosaparks@gmail.com',
      'rosa.parks@gmail.com',
      'rosa.parks.jr@gmail.com',
    ]);
  });

  it('any address with a +tag is its inbox for the caps, at any provider; other names are other inboxes', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    // Outlook delivers each of these to ro_sa@outlook.com.
    pagePathOf(await cut(0, { email: 'ro_sa+1@outlook.com' }, '127.0.0.51'));
    pagePathOf(await cut(1, { email: 'ro_sa+2@outlook.com' }, '127.0.0.52'));
    for (const [i, email] of ['ro_sa@outlook.com', 'ro_sa+salon@outlook.com'].entries()) {
      const third = await cut(2, { email }, `127.0.0.${53 + i}`);
      expect(third.statusCode, email).toBe(429);
      expect(third.body).toContain('2 bookings waiting to be confirmed');
    }
    // Dots count outside Gmail, and an underscore is a letter like any other, not a wildcard.
    pagePathOf(await cut(2, { email: 'roxsa+1@outlook.com' }, '127.0.0.55'));
    pagePathOf(await cut(3, { email: 'ro.sa@outlook.com' }, '127.0.0.56'));
  });

  it('ten booking attempts per client address an hour, whatever became of them, then 429 with Retry-After', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const address = '127.0.0.9';
    for (let i = 0; i < 10; i++) {
      // Attempts that fail (no contact given) count too: trying costs the same.
      const response = await cut(0, {}, address);
      expect(response.statusCode).toBe(400);
    }
    const refused = await cut(0, { phone: '07400 555666' }, address);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe(String(60 * 60));
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.body).toContain('Too many booking attempts');
    // Another address books; the refused one may again in the next hour.
    pagePathOf(await cut(0, { phone: '07400 555666' }, '127.0.0.10'));
    t.clock.advance({ hours: 1 });
    pagePathOf(await cut(1, { phone: '07400 555777' }, address));
  });

  it('an IPv6 client is its /64: the addresses of one network share its ten attempts and its page requests', async () => {
    // Behind a proxy that terminates TLS (TRUST_PROXY), as a server on the internet is.
    t = await startTestApp({
      catalogues: [demoCatalogue()],
      now: NOW,
      limits: { requestsPerMinute: 15 },
      http: { trustProxy: '127.0.0.1' },
    });
    const ids = await catalogueIds(t.database.db);
    const from = (client: string, method: 'GET' | 'POST', url: string, fields: Record<string, string> = {}) =>
      t.app.inject({
        method,
        url,
        headers: {
          'x-forwarded-for': client,
          'x-forwarded-proto': 'https',
          ...(method === 'POST' && {
            'content-type': 'application/x-www-form-urlencoded',
            origin: 'https://localhost:80',
          }),
        },
        ...(method === 'POST' && { payload: new URLSearchParams(fields).toString() }),
      });
    const book = (client: string, phone?: string) =>
      from(client, 'POST', `/p/${ORG}/book`, {
        location: 'camden',
        services: ids.services.cut!,
        starts_at: FREE[0]!,
        first_name: 'Rosa',
        last_name: 'Parks',
        ...(phone && { phone }),
      });
    // One home or server network (a /64) has 2^64 addresses to take turns with.
    for (let i = 1; i <= 10; i++)
      expect((await book(`2001:db8:1:2::${i.toString(16)}`)).statusCode).toBe(400);
    const refused = await book('2001:db8:1:2:ffff:ffff:ffff:ffff', '07400 555666');
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain('Too many booking attempts');
    // The waitlist form counts the same attempts.
    const waitlist = await from('2001:db8:1:2:aaaa::1', 'POST', `/p/${ORG}/waitlist`, {
      location: 'camden',
      services: ids.services.cut!,
      from_date: '2026-11-25',
      to_date: '2026-11-25',
      first_name: 'Rosa',
      last_name: 'Parks',
      phone: '07400 555666',
    });
    expect(waitlist.statusCode).toBe(429);
    // Another network books.
    expect((await book('2001:db8:1:3::1', '07400 555666')).statusCode).toBe(303);
    // The pages' requests a minute, likewise: 15 a minute for the whole /64.
    let answered = 0;
    for (let i = 1; i <= 20; i++) {
      const page = await from(`2001:db8:9:9::${i.toString(16)}`, 'GET', `/p/${ORG}`);
      if (page.statusCode === 200) answered++;
      else expect(page.statusCode).toBe(429);
    }
    expect(answered).toBe(15);
  });

  it('a salon that allows no attempts is said to take no bookings on its page, not to try again later', async () => {
    t = await startTestApp({
      catalogues: [withPolicies({ public_attempts_per_address_per_hour: 0 })],
      now: NOW,
    });
    const refused = await cut(0, { phone: '07400 222333' });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeUndefined();
    expect(refused.body).toContain('This salon takes no bookings on this page; call the salon to book.');
    expect(refused.body).not.toContain('Try again in');
    expect(await countBookings(t.database.db)).toBe(0);
    const waitlist = await pagePost(t, `/p/${ORG}/waitlist`, {
      location: 'camden',
      from_date: '2026-11-25',
      to_date: '2026-11-25',
      phone: '07400 222333',
    });
    expect(waitlist.statusCode).toBe(429);
    expect(waitlist.headers['retry-after']).toBeUndefined();
    expect(waitlist.body).toContain('This salon takes no waitlist requests on this page');
  });

  it.each([
    'public_attempts_per_address_per_hour',
    'public_holds_per_contact',
    'public_bookings_per_contact_per_day',
    'public_bookings_per_organisation_per_hour',
  ])(
    'a salon whose %s is 0 says so on its page at once, with no form to fill in for nothing',
    async (cap) => {
      t = await startTestApp({ catalogues: [withPolicies({ [cap]: 0 })], now: NOW });
      const ids = await catalogueIds(t.database.db);
      for (const url of [
        `/p/${ORG}`,
        `/p/${ORG}?location=camden&services=${ids.services.cut}&date=2026-11-25`,
      ]) {
        const page = await pageGet(t, url);
        expect(page.statusCode).toBe(200);
        expect(page.body).toContain('This salon takes no bookings on this page; call the salon to book.');
        expect(page.body).not.toContain(`action="/p/${ORG}/book"`);
        expect(page.body).not.toContain(`action="/p/${ORG}/waitlist"`);
      }
    },
  );

  it('caps come from the catalogue, in `policies` or in `organisation.policies`, never both', async () => {
    t = await startTestApp({
      catalogues: [withPolicies({ public_holds_per_contact: 1 }, 'organisation')],
      now: NOW,
    });
    pagePathOf(await cut(0, { phone: '07400 222333' }));
    expect((await cut(1, { phone: '07400 222333' })).statusCode).toBe(429);
    const both = withPolicies({ public_holds_per_contact: 1 });
    (both.organisation as Record<string, unknown>).policies = { public_holds_per_contact: 2 };
    await expect(importCatalogue(t.database.db, both, t.clock.nowMs())).rejects.toThrow(
      /\$\.policies: give the policies once/,
    );
    const wrong = withPolicies({ public_verification: 'sms', sms_countries: ['gb'] });
    const refused = importCatalogue(t.database.db, wrong, t.clock.nowMs());
    await expect(refused).rejects.toThrow(/\$\.policies\.public_verification/);
    await expect(importCatalogue(t.database.db, wrong, t.clock.nowMs())).rejects.toThrow(
      /\$\.policies\.sms_countries\[0\]/,
    );
  });
});

describe('policies.public_verification: none', () => {
  it('books at once, for a client record of its own, and its messages greet nobody by name', async () => {
    t = await startTestApp({ catalogues: [withPolicies({ public_verification: 'none' })], now: NOW });
    const ids = await catalogueIds(t.database.db);
    const path = pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: FREE[0]!,
        firstName: 'URGENT: your card was charged £950, refund at',
        lastName: 'x',
        email: 'jo.bloggs@example.com',
      }),
    );
    const reference = await referenceOnPage(t, path);
    const booking = (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data;
    expect(booking.status).toBe('confirmed');
    expect(booking.client_id).not.toBe(ids.jo);
    // The booking's page, which its confirmation links to, names nobody: not Jo, nor what was typed.
    const page = (await pageGet(t, path)).body;
    expect(page).toContain(reference);
    expect(page).not.toMatch(/Bloggs|URGENT|<dt>Name<\/dt>/);
    // Jo's record is untouched and still the one found by her e-mail.
    const jo = await t.request({ method: 'GET', url: '/v1/clients?email=jo.bloggs@example.com' });
    expect(jo.json().data).toMatchObject({ id: ids.jo, first_name: 'Jo' });
    await deliver(t);
    const [confirmation] = (await messagesOf(t, reference)).filter((m) => m.kind === 'confirmed');
    const words = JSON.parse(confirmation!.body!) as { text: string; html: string };
    expect(words.text.startsWith('Hello,\n')).toBe(true);
    expect(`${words.text}${words.html}`).not.toContain('URGENT');
  });

  it('holds waiting for their deposits are capped too, and the refusal speaks of the deposit, not a code', async () => {
    t = await startTestApp({ catalogues: [withPolicies({ public_verification: 'none' })], now: NOW });
    const colour = (slot: number) =>
      bookOnPage(t, ORG, {
        location: 'camden',
        service: 'colour',
        startsAt: FREE[slot]!,
        phone: '07400 111222',
      });
    for (const slot of [0, 3]) {
      const reference = await referenceOnPage(t, pagePathOf(await colour(slot)));
      const booking = (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data;
      expect(booking.status).toBe('pending_payment');
    }
    const third = await colour(4);
    expect(third.statusCode).toBe(429);
    expect(third.body).toContain('2 bookings waiting to be confirmed');
    expect(third.body).toContain('Pay the deposit from each one’s page (or let them lapse)');
    expect(third.body).not.toContain('the code we sent');
  });

  it('moves on the booking’s page are 3 an hour: a stranger cannot text or mail the contact typed without end', async () => {
    t = await startTestApp({ catalogues: [withPolicies({ public_verification: 'none' })], now: NOW });
    const path = pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: FREE[0]!,
        email: 'jo.bloggs@example.com',
      }),
    );
    const reference = await referenceOnPage(t, path);
    const moveTo = (slot: number) => pagePost(t, `${path}/reschedule`, { starts_at: FREE[slot]! });
    // Each move tells the contact, delivered before the next (nothing left pending to fold into one).
    for (const slot of [1, 2, 1]) {
      expect((await moveTo(slot)).statusCode).toBe(303);
      await deliver(t);
      t.clock.advance({ minutes: 1 });
    }
    const fourth = await moveTo(2);
    expect(fourth.statusCode).toBe(429);
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
    expect(fourth.body).toContain('moved 3 times in the last hour');
    await deliver(t);
    const told = (await messagesOf(t, reference)).filter((m) => m.kind === 'rescheduled');
    expect(told).toHaveLength(3);
    // The booking stayed where the third move put it; in the next hour it moves again.
    const booking = (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data;
    expect(booking.starts_at).toBe('2026-11-25T14:00:00+00:00');
    t.clock.advance({ hours: 1 });
    expect((await moveTo(2)).statusCode).toBe(303);
  });
});
