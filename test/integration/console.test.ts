import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerLinks } from '../../src/app/customer-links.ts';
import { takeMessage } from '../../src/app/message-service.ts';
import { deliverAllDue } from '../../src/app/outbox-delivery.ts';
import { localCheckout } from '../../src/app/payments.ts';
import {
  createUser,
  disableUser,
  IDLE_TIMEOUT_MS,
  listUsers,
  SIGN_IN_LIMITS,
} from '../../src/app/staff-account-service.ts';
import { insertBooking } from '../../src/data/booking-repository.ts';
import type { BookingsTable } from '../../src/data/tables.ts';
import { type CatalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The staff console through HTTP (design.md 8.4): accounts, sign-in and its throttles, the session
 * cookie and its idle expiry, CSRF, the diary, a booking's actions, clients, messages, keys by role,
 * and one organisation never seeing another's data. Two organisations: acme-hair (the small catalogue)
 * and beta-barbers (the same catalogue under another slug and prefix). The clock starts Monday
 * 2026-11-23 09:00Z; Ana works Mondays at Soho.
 */
const ORIGIN = 'http://localhost:80';
const PASSWORD = 'correct horse battery';
let t: TestApp;
let ids: CatalogueIds;

beforeAll(async () => {
  t = await startTestApp({
    catalogues: [smallCatalogue(), smallCatalogue({ slug: 'beta-barbers', prefix: 'BB' })],
    limits: { requestsPerMinute: 100_000 },
  });
  ids = await acmeIds();
  const now = t.clock.nowMs();
  await createUser(
    t.database.db,
    { organisationSlug: 'acme-hair', email: 'Owner@Acme.test', role: 'owner', password: PASSWORD },
    now,
  );
  await createUser(
    t.database.db,
    { organisationSlug: 'acme-hair', email: 'desk@acme.test', role: 'staff', password: PASSWORD },
    now,
  );
  await createUser(
    t.database.db,
    { organisationSlug: 'beta-barbers', email: 'owner@beta.test', role: 'owner', password: PASSWORD },
    now,
  );
});
afterAll(async () => {
  await t.close();
});

interface Signed {
  cookie: string;
  csrf: string;
  get(url: string): Promise<LightMyRequestResponse>;
  post(
    url: string,
    form?: Record<string, string | string[]>,
    options?: { csrf?: string | null; origin?: string | null },
  ): Promise<LightMyRequestResponse>;
}

function encode(form: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) for (const v of [value].flat()) params.append(name, v);
  return params.toString();
}

function postForm(
  url: string,
  form: Record<string, string | string[]>,
  headers: Record<string, string> = {},
  remoteAddress = '127.0.0.1',
) {
  return t.app.inject({
    method: 'POST',
    url,
    remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN, ...headers },
    payload: encode(form),
  });
}

async function signIn(organisation: string, email: string, remoteAddress = '127.0.0.1'): Promise<Signed> {
  const response = await postForm(
    '/console/sign-in',
    { organisation, email, password: PASSWORD, next: '/console/diary' },
    {},
    remoteAddress,
  );
  expect(response.statusCode, response.body).toBe(303);
  const setCookie = String(response.headers['set-cookie']);
  const cookie = setCookie.split(';')[0]!;
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });
  const page = await get('/console/clients');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  return {
    cookie,
    csrf,
    get,
    post: (url, form = {}, options = {}) =>
      postForm(
        url,
        { ...(options.csrf === null ? {} : { _csrf: options.csrf ?? csrf }), ...form },
        {
          cookie,
          ...(options.origin === null ? { origin: '' } : options.origin ? { origin: options.origin } : {}),
        },
      ),
  };
}

describe('staff accounts', () => {
  it('creates accounts with an argon2id hash, one e-mail per organisation, and refuses weak input', async () => {
    const row = await t.database.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', 'owner@acme.test')
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const now = t.clock.nowMs();
    const create = (email: string, role: string, password = PASSWORD) =>
      createUser(t.database.db, { organisationSlug: 'acme-hair', email, role, password }, now);
    await expect(create('OWNER@acme.test', 'admin')).rejects.toMatchObject({ code: 'conflict' });
    await expect(create('x@acme.test', 'boss')).rejects.toMatchObject({
      code: 'invalid_request',
      param: 'role',
    });
    await expect(create('x@acme.test', 'admin', 'short')).rejects.toMatchObject({
      code: 'invalid_request',
      param: 'password',
    });
    await expect(create('not-an-email', 'admin')).rejects.toMatchObject({ param: 'email' });
    expect((await listUsers(t.database.db, 'acme-hair')).map((u) => [u.email, u.role])).toEqual([
      ['desk@acme.test', 'staff'],
      ['owner@acme.test', 'owner'],
    ]);
  });
});

describe('signing in and out', () => {
  it('sets an HttpOnly, Secure, SameSite cookie, redirects pages without one, and signs out', async () => {
    const anonymous = await t.app.inject({ method: 'GET', url: '/console/diary?date=2026-11-23' });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe(
      '/console/sign-in?expired=0&next=%2Fconsole%2Fdiary%3Fdate%3D2026-11-23',
    );
    const response = await postForm('/console/sign-in', {
      organisation: 'acme-hair',
      email: 'owner@acme.test',
      password: PASSWORD,
    });
    const cookie = String(response.headers['set-cookie']);
    expect(cookie).toMatch(
      /^console_session=[A-Za-z0-9_-]{43}; Path=\/console; HttpOnly; Secure; SameSite=Lax; Max-Age=1800$/,
    );
    const me = await signIn('acme-hair', 'owner@acme.test');
    expect((await me.get('/console/diary')).statusCode).toBe(200);
    const out = await me.post('/console/sign-out');
    expect(out.statusCode).toBe(303);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await me.get('/console/diary')).headers.location).toMatch(/^\/console\/sign-in\?expired=1/);
  });

  it('answers every wrong sign-in the same, and never echoes the password', async () => {
    for (const form of [
      { organisation: 'acme-hair', email: 'owner@acme.test', password: 'wrong password!' },
      { organisation: 'acme-hair', email: 'nobody@acme.test', password: PASSWORD },
      { organisation: 'no-such-org', email: 'owner@acme.test', password: PASSWORD },
      { organisation: 'beta-barbers', email: 'owner@acme.test', password: PASSWORD },
    ]) {
      const response = await postForm('/console/sign-in', form, {}, '127.0.0.9');
      expect(response.statusCode, response.body).toBe(401);
      expect(response.body).toContain('The organisation, e-mail or password is wrong.');
      expect(response.body).not.toContain(form.password);
    }
  });

  it('refuses a return address with a control character or a line separator with 400, signing nobody in', async () => {
    const unsafe = ['\r\nSet-Cookie: planted=1', '\n', '\r', '\u2028', '\u2029', '\u0085', '\t', '\u007f'];
    for (const tail of unsafe) {
      const next = `/console/diary${tail}`;
      const page = await t.app.inject({
        method: 'GET',
        url: `/console/sign-in?next=${encodeURIComponent(next)}`,
      });
      expect(page.statusCode, JSON.stringify(tail)).toBe(400);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('The address to go back to after signing in is not valid.');
      expect(page.headers['set-cookie']).toBeUndefined();

      const posted = await postForm(
        '/console/sign-in',
        { organisation: 'acme-hair', email: 'owner@acme.test', password: PASSWORD, next },
        {},
        '127.0.0.12',
      );
      expect(posted.statusCode, JSON.stringify(tail)).toBe(400);
      expect(posted.body).toContain('The address to go back to after signing in is not valid.');
      expect(posted.headers.location).toBeUndefined();
      expect(posted.headers['set-cookie']).toBeUndefined();
    }
    // Other characters beyond ASCII go back percent-encoded, as a browser sends them; elsewhere: the diary.
    const accented = await postForm(
      '/console/sign-in',
      {
        organisation: 'acme-hair',
        email: 'owner@acme.test',
        password: PASSWORD,
        next: '/console/clients?q=José',
      },
      {},
      '127.0.0.12',
    );
    expect(accented.statusCode).toBe(303);
    expect(accented.headers.location).toBe('/console/clients?q=Jos%C3%A9');
    const elsewhere = await postForm(
      '/console/sign-in',
      {
        organisation: 'acme-hair',
        email: 'owner@acme.test',
        password: PASSWORD,
        next: '//evil.example/console',
      },
      {},
      '127.0.0.12',
    );
    expect(elsewhere.headers.location).toBe('/console/diary');
  });

  it('goes back after signing in to no page outside the console by dot segments', async () => {
    // A browser resolves "..", "%2e%2e" and "\" in the Location it follows: each of these would leave
    // /console for another page of the server (a public page of any organisation, say).
    for (const next of [
      '/console/../p/beta-barbers',
      '/console/%2e%2e/p/beta-barbers',
      '/console/.%2E/p/beta-barbers',
      '/console/..\\p/beta-barbers',
      '/console/./../../ical/x.ics',
    ]) {
      const posted = await postForm(
        '/console/sign-in',
        { organisation: 'acme-hair', email: 'owner@acme.test', password: PASSWORD, next },
        {},
        '127.0.0.13',
      );
      expect(posted.statusCode, next).toBe(303);
      const landed = new URL(posted.headers.location as string, 'http://localhost').pathname;
      expect(landed, next).toBe('/console/diary');
    }
    // A console page with dots that stay inside it still goes back there.
    const inside = await postForm(
      '/console/sign-in',
      {
        organisation: 'acme-hair',
        email: 'owner@acme.test',
        password: PASSWORD,
        next: '/console/x/../clients?q=a',
      },
      {},
      '127.0.0.13',
    );
    expect(inside.headers.location).toBe('/console/x/../clients?q=a');
  });

  it('throttles one address guessing at one account without locking its owner out elsewhere', async () => {
    const guess = (address: string, password = 'not the password') =>
      postForm(
        '/console/sign-in',
        { organisation: 'acme-hair', email: 'desk@acme.test', password },
        {},
        address,
      );
    for (let i = 0; i < SIGN_IN_LIMITS.accountFromAddress; i++)
      expect((await guess('127.1.1.1')).statusCode).toBe(401);
    const refused = await guess('127.1.1.1', PASSWORD);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body).toContain('Too many failed sign-ins');
    // The owner at the desk, at another address, still signs in.
    await signIn('acme-hair', 'desk@acme.test', '127.2.2.2');
    // And the guesser is let in again once the window has passed.
    t.clock.advance({ milliseconds: 15 * 60_000 });
    expect((await guess('127.1.1.1', PASSWORD)).statusCode).toBe(303);
  });

  it('ends a session 14 hours after sign-in however busy it is, its cookie expiring with it', async () => {
    const me = await signIn('acme-hair', 'owner@acme.test');
    // In use every 20 minutes all day: never idle.
    for (let minutes = 20; minutes < 14 * 60; minutes += 20) {
      t.clock.advance({ minutes: 20 });
      const page = await me.get('/console/messages');
      expect(page.statusCode, `after ${minutes} minutes`).toBe(200);
      // The cookie lasts no longer than the session: 30 minutes, or what is left of the 14 hours.
      const maxAge = Number(/Max-Age=(\d+)/.exec(String(page.headers['set-cookie'] ?? ''))?.[1] ?? 1800);
      expect(maxAge).toBe(Math.min(1800, (14 * 60 - minutes) * 60));
    }
    t.clock.advance({ minutes: 20 });
    const ended = await me.get('/console/messages');
    expect(ended.statusCode).toBe(303);
    expect(ended.headers.location).toBe('/console/sign-in?expired=1&next=%2Fconsole%2Fmessages');
  });

  it('ends a session after 30 idle minutes, and a disabled account at once', async () => {
    const me = await signIn('acme-hair', 'owner@acme.test');
    t.clock.advance({ milliseconds: IDLE_TIMEOUT_MS - 60_000 });
    expect((await me.get('/console/messages')).statusCode).toBe(200);
    // A request keeps the session alive: idle time counts from the last one.
    t.clock.advance({ milliseconds: IDLE_TIMEOUT_MS - 60_000 });
    expect((await me.get('/console/messages')).statusCode).toBe(200);
    t.clock.advance({ milliseconds: IDLE_TIMEOUT_MS });
    const expired = await me.get('/console/messages');
    expect(expired.statusCode).toBe(303);
    expect(expired.headers.location).toBe('/console/sign-in?expired=1&next=%2Fconsole%2Fmessages');
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: '/console/diary/stamp?location=soho',
          headers: { cookie: me.cookie },
        })
      ).statusCode,
    ).toBe(401);

    const desk = await signIn('acme-hair', 'desk@acme.test');
    await createUser(
      t.database.db,
      { organisationSlug: 'acme-hair', email: 'temp@acme.test', role: 'admin', password: PASSWORD },
      t.clock.nowMs(),
    );
    const temp = await signIn('acme-hair', 'temp@acme.test');
    await disableUser(t.database.db, 'acme-hair', 'temp@acme.test', t.clock.nowMs());
    expect((await temp.get('/console/diary')).statusCode).toBe(303);
    expect(
      (
        await postForm('/console/sign-in', {
          organisation: 'acme-hair',
          email: 'temp@acme.test',
          password: PASSWORD,
        })
      ).statusCode,
    ).toBe(401);
    expect((await desk.get('/console/diary')).statusCode).toBe(200);
  });
});

describe('CSRF', () => {
  it('refuses a form without the session token, with another session token, or from another site', async () => {
    const me = await signIn('acme-hair', 'owner@acme.test');
    const other = await signIn('acme-hair', 'desk@acme.test');
    const attempts = [
      await me.post('/console/keys', { label: 'x', scope: 'read' }, { csrf: null }),
      await me.post('/console/keys', { label: 'x', scope: 'read' }, { csrf: other.csrf }),
      await me.post('/console/keys', { label: 'x', scope: 'read' }, { origin: 'https://evil.example' }),
      await me.post('/console/keys', { label: 'x', scope: 'read' }, { origin: null }),
    ];
    expect(attempts.map((r) => r.statusCode)).toEqual([403, 403, 403, 403]);
    expect(attempts[0]!.body).toContain('Form expired');
    const keys = await t.database.db
      .selectFrom('api_keys')
      .select('label')
      .where('label', '=', 'x')
      .execute();
    expect(keys).toEqual([]);
    // Sign-out is a form too: a cross-site post cannot sign anyone out.
    expect((await me.post('/console/sign-out', {}, { csrf: null })).statusCode).toBe(403);
  });
});

describe('the diary and a booking', () => {
  it('shows a day per staff member with bookings, working hours and the current time, and a week', async () => {
    t.clock.set('2026-11-23T09:00:00Z');
    const booked = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: '2026-11-23T11:00:00Z',
    });
    expect(booked.statusCode, booked.body).toBe(201);
    const reference = booked.json().data.reference;
    let me = await signIn('acme-hair', 'desk@acme.test');
    const day = await me.get('/console/diary?location=soho&date=2026-11-23');
    expect(day.statusCode).toBe(200);
    expect(day.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(day.headers['x-frame-options']).toBe('DENY');
    expect(day.body).toContain('<h2>Ana</h2>');
    expect(day.body).toContain(`data-reference="${reference}"`);
    // Its accessible name is its visible text (no aria-label saying something else), then its stylist.
    expect(day.body).toContain(
      '<strong>11:00–11:45</strong> Jo Bloggs<br>Cut<br><em>Confirmed</em><span class="visually-hidden">, with Ana</span></a>',
    );
    expect(day.body).toContain('class="now"');
    expect(day.body).toContain('class="hours"');
    // The legend names every status a block is drawn for, holds awaiting a confirmation among them.
    const legend = /<p class="legend" aria-label="Colours">(.*?)<\/p>/.exec(day.body)![1]!;
    expect([...legend.matchAll(/class="s-(\w+)">([^<]+)</g)].map((m) => `${m[1]}: ${m[2]}`)).toEqual([
      'confirmed: Confirmed',
      'pending_payment: Awaiting deposit',
      'pending_confirmation: Awaiting confirmation',
      'needs_checkout: Needs checkout',
      'completed: Completed',
      'no_show: No-show',
      'cancelled: Cancelled',
    ]);
    const stamp = /data-stamp="([^"]+)"/.exec(day.body)![1];
    const polled = await me.get('/console/diary/stamp?location=soho');
    expect(polled.json()).toEqual({ stamp });
    const week = await me.get('/console/diary?location=soho&date=2026-11-23&view=week');
    expect(week.body).toContain('Week of');
    expect(week.body).toContain(`/console/bookings/${reference}`);

    // A new booking changes the stamp that live updates poll.
    const second = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: '2026-11-23T14:00:00Z',
    });
    expect(second.statusCode).toBe(201);
    expect((await me.get('/console/diary/stamp?location=soho')).json().stamp).not.toBe(stamp);

    const page = await me.get(`/console/bookings/${reference}`);
    expect(page.body).toContain('Event log');
    // Who made it, in words: the API key's label.
    expect(page.body).toContain('API (key test read_write)');
    // Before the start, Complete and No-show are not offered (they could only be refused).
    expect(page.body).not.toContain('>Complete<');
    expect(page.body).not.toContain('>Mark no-show<');
    expect(page.body).toContain(
      'Complete, needs checkout and no-show are offered once the appointment has started.',
    );

    // Completing before the start is refused by the state machine, as in the API.
    const early = await me.post(`/console/bookings/${reference}/action`, { action: 'complete' });
    expect(early.statusCode).toBe(409);
    t.clock.set('2026-11-23T11:30:00Z');
    // Two and a half idle hours ended the session: the desk signs in again.
    me = await signIn('acme-hair', 'desk@acme.test');
    const started = await me.get(`/console/bookings/${reference}`);
    expect(started.body).toContain('>Complete<');
    expect(started.body).toContain('>Mark no-show<');
    const done = await me.post(`/console/bookings/${reference}/action`, { action: 'complete' });
    expect(done.statusCode).toBe(303);
    const after = await me.get(done.headers.location as string);
    expect(after.body).toContain(`Booking ${reference}: Completed`);
    // The event log says who in words: the signed-in account's e-mail, not its id.
    expect(after.body).toMatch(/Confirmed → Completed<\/td><td>desk@acme.test<\/td>/);
  });

  it('shows a hold whose time ran out as expired, before the sweeper writes it so, offering nothing for it', async () => {
    const org = ids.organisation;
    const startsAt = Date.parse('2026-12-02T10:00:00Z');
    const row = bookingRow(
      {
        organisationId: org,
        locationId: ids.locations.soho!,
        staffId: ids.staff.ana!,
        clientId: ids.jo,
        startsAt,
        endsAt: startsAt + 3_600_000,
      },
      {
        status: 'pending_payment',
        deposit_minor: 2000,
        deposit_status: 'pending',
        hold_expires_at: Date.parse('2026-11-26T09:30:00Z'),
        created_at: Date.parse('2026-11-26T09:00:00Z'),
      },
    );
    await insertCut(row);
    t.clock.set('2026-11-26T09:20:00Z');
    const me = await signIn('acme-hair', 'desk@acme.test');
    const held = await me.get(`/console/bookings/${row.reference}`);
    expect(held.body).toContain(`Booking ${row.reference}: Awaiting deposit`);
    expect(held.body).toContain('Deposit paid at the desk');
    // Its 30 minutes are over; no sweeper has run (the row still says pending_payment).
    t.clock.set('2026-11-26T09:31:00Z');
    const page = await me.get(`/console/bookings/${row.reference}`);
    expect(page.body).toContain(`Booking ${row.reference}: Expired`);
    for (const offered of [
      'Deposit paid at the desk',
      'Send the payment link again',
      'Reschedule',
      'Cancel…',
    ]) {
      expect(page.body).not.toContain(offered);
    }
    const diary = await me.get('/console/diary?location=soho&date=2026-12-02');
    const block = new RegExp(`data-reference="${row.reference}">(?:(?!</a>).)*</a>`, 's').exec(
      diary.body,
    )?.[0];
    expect(block).toContain('<em>Expired</em>');
    const found = await me.get('/console/clients?q=Jo');
    expect(found.body).toMatch(
      new RegExp(`${row.reference}</a>[^<]*<time[^>]*>[^<]*</time>[^<]*Soho – Expired`),
    );
    expect(await statusOf(row.reference)).toBe('pending_payment');
  });

  it('marks a protected no-show and charges its fee, and cancels with the fee stated first', async () => {
    const org = ids.organisation;
    const insert = async (startsAt: number) => {
      const row = bookingRow(
        {
          organisationId: org,
          locationId: ids.locations['kings-cross']!,
          staffId: ids.staff.bo!,
          clientId: ids.jo,
          startsAt,
          endsAt: startsAt + 3_600_000,
        },
        {
          total_price_minor: 4500,
          protection_applies: 1,
          late_cancellation_fee_percentage: 50,
          no_show_fee_percentage: 100,
          protection_setup_status: 'succeeded',
          payment_method_saved: 1,
          source: 'staff',
        },
      );
      await insertCut(row);
      return row.reference;
    };
    t.clock.set('2026-11-25T12:00:00Z');
    const missed = await insert(Date.parse('2026-11-25T10:00:00Z'));
    const me = await signIn('acme-hair', 'desk@acme.test');
    const marked = await me.post(`/console/bookings/${missed}/action`, { action: 'no_show' });
    expect(marked.statusCode).toBe(303);
    expect(marked.headers.location).toBe(`/console/bookings/${missed}?done=no_show`);
    expect((await me.get(marked.headers.location as string)).body).toContain(
      '<p class="ok" role="status">Marked as a no-show.</p>',
    );
    // Only the console's own words: any other text in done (a lure in a link) shows nothing.
    for (const done of ['Call +44 20 7946 0000 now to keep your account', 'constructor', '__proto__', '']) {
      const lure = await me.get(`/console/bookings/${missed}?done=${encodeURIComponent(done)}`);
      expect(lure.statusCode).toBe(200);
      expect(lure.body).not.toContain('class="ok"');
      expect(lure.body).not.toContain('Call +44');
    }
    const page = await me.get(`/console/bookings/${missed}`);
    expect(page.body).toContain('Charge no-show fee (£45.00)');
    expect(
      (await me.post(`/console/bookings/${missed}/action`, { action: 'charge_fee', fee: 'no_show' }))
        .statusCode,
    ).toBe(303);
    const fee = await t.database.db
      .selectFrom('booking_fees')
      .select(['status', 'charge_amount_minor'])
      .where('kind', '=', 'no_show')
      .execute();
    expect(fee).toEqual([{ status: 'charged', charge_amount_minor: 4500 }]);
    // The fee's event changes no status: its row names the status once, and says what happened.
    const charged = (await me.get(`/console/bookings/${missed}`)).body;
    expect(charged).toMatch(/<td>No-show<\/td><td>desk@acme.test<\/td><td>No-show fee charged \(£45.00\)/);
    expect(charged).not.toContain('No-show → No-show');

    const soon = await insert(Date.parse('2026-11-25T14:00:00Z'));
    const preview = await me.get(`/console/bookings/${soon}/cancel`);
    expect(preview.body).toContain('This is a late cancellation');
    expect(preview.body).toContain('A late-cancellation fee of £22.50 (50%) will be recorded');
    expect(await statusOf(soon)).toBe('confirmed');
    expect((await me.post(`/console/bookings/${soon}/cancel`, { reason: 'Called in sick' })).statusCode).toBe(
      303,
    );
    expect(await statusOf(soon)).toBe('cancelled');
  });

  it('books a caller into an offered slot, reschedules to another, and finds the client', async () => {
    t.clock.set('2026-11-23T09:00:00Z');
    const me = await signIn('acme-hair', 'desk@acme.test');
    const form = await me.get(`/console/book?location=soho&date=2026-11-30&service_id=${ids.services.cut}`);
    expect(form.statusCode).toBe(200);
    const slot = /<option value="([^"]+\|[^"]+)">/.exec(form.body)![1]!;
    const booked = await me.post('/console/book', {
      location: 'soho',
      service_id: [ids.services.cut!],
      slot,
      first_name: 'Wal',
      last_name: 'Kin',
      phone: '+44 7911 223366',
      notes: 'Walk-in',
    });
    expect(booked.statusCode, booked.body).toBe(303);
    const reference = decodeURIComponent(/bookings\/([^?]+)/.exec(booked.headers.location as string)![1]!);
    const row = await t.database.db
      .selectFrom('bookings')
      .select(['source', 'starts_at', 'notes'])
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      source: 'staff',
      notes: 'Walk-in',
      starts_at: Date.parse(slot.split('|')[0]!),
    });

    const choices = await me.get(`/console/bookings/${reference}/reschedule?date=2026-11-30`);
    const moveTo = [
      ...choices.body.matchAll(
        /name="starts_at" value="([^"]+)"><input type="hidden" name="staff_id" value="([^"]+)"/g,
      ),
    ];
    expect(moveTo.length).toBeGreaterThan(1);
    const [, startsAt, staffId] = moveTo[moveTo.length - 1]!;
    expect(
      (
        await me.post(`/console/bookings/${reference}/reschedule`, {
          starts_at: startsAt!,
          staff_id: staffId!,
        })
      ).statusCode,
    ).toBe(303);
    const moved = await t.database.db
      .selectFrom('bookings')
      .select('starts_at')
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    expect(moved.starts_at).toBe(Date.parse(startsAt!));

    for (const q of ['wal kin', '7911223366', 'KIN']) {
      const found = await me.get(`/console/clients?q=${encodeURIComponent(q)}`);
      expect(found.body, q).toContain('Wal Kin');
      expect(found.body).toContain(reference);
    }
    expect((await me.get('/console/clients?q=%25')).body).not.toContain('Wal Kin');
  });
});

describe('what the client was told', () => {
  it("lists a booking's messages on its page and in the outbox, and sends the confirmation again", async () => {
    t.clock.set('2026-11-23T09:00:00Z');
    const me = await signIn('acme-hair', 'desk@acme.test');
    const { reference } = await t.database.db
      .selectFrom('bookings as b')
      .innerJoin('clients as c', 'c.id', 'b.client_id')
      .select('b.reference')
      .where('c.first_name', '=', 'Wal')
      .executeTakeFirstOrThrow();
    // Booked and then moved by the desk: a confirmation, the new time, the reminder to come.
    await deliverAllDue({
      db: t.database.db,
      clock: t.clock,
      senders: { sms: null, email: null },
      links: customerLinks(localCheckout, 'https://book.example'),
    });
    const page = await me.get(`/console/bookings/${reference}`);
    const messages = page.body.slice(page.body.indexOf('Messages to the client'));
    expect(messages).toContain('Confirmation');
    expect(messages).toContain('New time');
    expect(messages).toMatch(/Reminder<\/td><td>SMS to \+447911223366<\/td><td>Scheduled for <time/);
    expect(messages).toContain('Logged (no provider set up)');
    expect(page.body).toMatch(/Moved from <time [^>]+>30 Nov 2026, \d\d:\d\d<\/time> to <time/);
    expect(messages).toMatch(
      new RegExp(
        `Booked: Cut with Ana on Monday 30 November at 16:15 GMT, at Soho\\. See, move or cancel it: https://book\\.example/p/manage/[A-Za-z0-9_-]{43} Ref ${reference}\\.`,
      ),
    );

    const again = await me.post(`/console/bookings/${reference}/action`, { action: 'send_link' });
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(`/console/bookings/${reference}?done=sent_sms`);
    expect((await me.get(again.headers.location as string)).body).toContain(
      '<p class="ok" role="status">Sent again by SMS (see the messages below).</p>',
    );
    const rows = await t.database.db
      .selectFrom('outbox')
      .select(['kind', 'status'])
      .where('reference', '=', reference)
      // Written in the same instant of the test's clock: the outbox's sequence tells them apart.
      .orderBy('created_at')
      .orderBy('seq')
      .execute();
    expect(rows.filter((r) => r.kind === 'confirmed')).toEqual([
      { kind: 'confirmed', status: 'logged' },
      { kind: 'confirmed', status: 'pending' },
    ]);

    const outbox = await me.get('/console/outbox');
    expect(outbox.statusCode).toBe(200);
    expect(outbox.body).toContain(`href="/console/bookings/${reference}"`);
    expect(outbox.body.match(/<tr class="m-/g)).toHaveLength(
      (
        await t.database.db
          .selectFrom('outbox')
          .select('id')
          .where('organisation_id', '=', ids.organisation)
          .execute()
      ).length,
    );
    const pendingOnly = await me.get('/console/outbox?status=pending');
    expect(pendingOnly.body).toContain('class="m-pending"');
    expect(pendingOnly.body).not.toContain('class="m-logged"');
    expect((await me.get('/console/outbox?status=failed')).body).toContain('<p>No messages.</p>');

    // A cancelled booking has nothing to send again: no button, and a forged post is refused.
    await me.post(`/console/bookings/${reference}/cancel`, {});
    expect((await me.get(`/console/bookings/${reference}`)).body).not.toContain('again');
    const refused = await me.post(`/console/bookings/${reference}/action`, { action: 'send_link' });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('There is nothing to send for this booking');
  });
});

describe('messages and keys', () => {
  it('lists messages taken by the agent and marks them done', async () => {
    const message = await takeMessage(
      t.database.db,
      ids.organisation,
      { callerName: 'Pat', phone: '+447911223355', message: 'Please call back about colour' },
      t.clock.nowMs(),
    );
    const me = await signIn('acme-hair', 'desk@acme.test');
    const list = await me.get('/console/messages');
    expect(list.body).toContain('Please call back about colour');
    expect((await me.post(`/console/messages/${message.id}/done`)).statusCode).toBe(303);
    const status = await t.database.db
      .selectFrom('messages')
      .select('status')
      .where('id', '=', message.id)
      .executeTakeFirstOrThrow();
    expect(status.status).toBe('done');
  });

  it('lets owners and admins issue a key shown once and revoke it; staff cannot', async () => {
    const owner = await signIn('acme-hair', 'owner@acme.test');
    const created = await owner.post('/console/keys', { label: 'Front desk tablet', scope: 'read_write' });
    expect(created.statusCode).toBe(201);
    const key = /(bk_[0-9A-Za-z]{40})/.exec(created.body)![1]!;
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: '/v1/locations',
          headers: { authorization: `Bearer ${key}` },
        })
      ).statusCode,
    ).toBe(200);
    const list = await owner.get('/console/keys');
    expect(list.body).not.toContain(key);
    expect(list.body).toContain(`bk_…${key.slice(-4)}`);
    const id = (
      await t.database.db
        .selectFrom('api_keys')
        .select('id')
        .where('label', '=', 'Front desk tablet')
        .executeTakeFirstOrThrow()
    ).id;

    const staff = await signIn('acme-hair', 'desk@acme.test');
    expect((await staff.get('/console/keys')).statusCode).toBe(403);
    expect((await staff.post('/console/keys', { label: 'sneaky', scope: 'read_write' })).statusCode).toBe(
      403,
    );
    expect((await staff.post(`/console/keys/${id}/revoke`)).statusCode).toBe(403);
    expect((await staff.get('/console/diary')).body).not.toContain('API keys');

    expect((await owner.post(`/console/keys/${id}/revoke`)).statusCode).toBe(303);
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: '/v1/locations',
          headers: { authorization: `Bearer ${key}` },
        })
      ).statusCode,
    ).toBe(401);
  });
});

describe('organisations apart', () => {
  it("never shows or changes another organisation's bookings, clients, messages or keys", async () => {
    const acme = await signIn('acme-hair', 'owner@acme.test');
    const beta = await signIn('beta-barbers', 'owner@beta.test');
    const acmeBooking = await t.database.db
      .selectFrom('bookings')
      .select('reference')
      .where('organisation_id', '=', ids.organisation)
      .executeTakeFirstOrThrow();
    expect((await beta.get(`/console/bookings/${acmeBooking.reference}`)).statusCode).toBe(404);
    expect(
      (await beta.post(`/console/bookings/${acmeBooking.reference}/action`, { action: 'no_show' }))
        .statusCode,
    ).toBe(404);
    expect((await beta.get('/console/clients?q=Wal')).body).not.toContain('Wal Kin');
    expect((await acme.get('/console/outbox')).body).toContain('+447911223366');
    expect((await beta.get('/console/outbox')).body).not.toContain('+447911223366');
    const acmeKey = await t.keyFor('acme-hair');
    const acmeKeyId = (
      await t.database.db
        .selectFrom('api_keys')
        .select('id')
        .where('organisation_id', '=', ids.organisation)
        .orderBy('created_at', 'desc')
        .executeTakeFirstOrThrow()
    ).id;
    expect((await beta.post(`/console/keys/${acmeKeyId}/revoke`)).statusCode).toBe(404);
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: '/v1/locations',
          headers: { authorization: `Bearer ${acmeKey}` },
        })
      ).statusCode,
    ).toBe(200);
    const message = await takeMessage(
      t.database.db,
      ids.organisation,
      { callerName: 'Quinn', message: 'Private note' },
      t.clock.nowMs(),
    );
    expect((await beta.get('/console/messages')).body).not.toContain('Private note');
    expect((await beta.post(`/console/messages/${message.id}/done`)).statusCode).toBe(404);
    const betaDiary = await beta.get('/console/diary?location=soho&date=2026-11-23');
    expect(betaDiary.body).not.toContain('Jo Bloggs');
    expect((await acme.get('/console/diary?location=soho&date=2026-11-23')).body).toContain('Jo Bloggs');
  });
});

/** The small catalogue's ids inside acme-hair (beta-barbers has rows with the same refs). */
async function acmeIds(): Promise<CatalogueIds> {
  const db = t.database.db;
  const { id: organisation } = await db
    .selectFrom('organisations')
    .select('id')
    .where('slug', '=', 'acme-hair')
    .executeTakeFirstOrThrow();
  const where = <T extends { id: string }>(list: T[], name: (row: T) => string | null) =>
    Object.fromEntries(list.map((row) => [name(row), row.id]));
  const mine = (table: 'locations' | 'staff' | 'services') =>
    db.selectFrom(table).selectAll().where('organisation_id', '=', organisation).execute();
  const jo = await db
    .selectFrom('clients')
    .select('id')
    .where('organisation_id', '=', organisation)
    .where('ref', '=', 'jo')
    .executeTakeFirstOrThrow();
  return {
    organisation,
    locations: where(await mine('locations'), (r) => (r as { slug: string }).slug),
    staff: where(await mine('staff'), (r) => (r as { ref: string }).ref),
    services: where(await mine('services'), (r) => (r as { ref: string }).ref),
    jo: jo.id,
  };
}

async function statusOf(reference: string): Promise<string> {
  const row = await t.database.db
    .selectFrom('bookings')
    .select('status')
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();
  return row.status;
}

/** Inserts a bookings row as one Cut over its whole time, at its price and deposit. */
async function insertCut(row: BookingsTable): Promise<void> {
  await insertBooking(t.database.db, row, [
    {
      organisation_id: row.organisation_id,
      booking_id: row.id,
      position: 0,
      service_id: ids.services.cut!,
      starts_at: row.starts_at,
      ends_at: row.ends_at,
      duration_minutes: (row.ends_at - row.starts_at) / 60_000,
      buffer_after_minutes: 0,
      price_minor: row.total_price_minor,
      deposit_minor: row.deposit_minor,
    },
  ]);
}
