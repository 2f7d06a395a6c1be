import { afterEach, describe, expect, it } from 'vitest';
import { expireLapsedHolds } from '../../src/app/hold-sweeper.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { deliver, messagesOf, pageGet, pagePost } from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import {
  bookAna,
  bookAnaOnTuesday,
  bookingPagePathOf,
  TUESDAY,
  waitlistPass,
} from '../helpers/waitlist-fixtures.ts';

/**
 * "Tell me if a time frees up" on the public booking page (design.md 9.4 under 9.1's rules), through
 * HTTP as a stranger would use it: the form appears only when the search finds no free time, joining
 * makes an entry whose client is an unproven record of its own (never the client on file with the
 * contact typed), the offer the worker makes goes to the contact typed, without a stored name, and
 * the booking form's caps apply. The small catalogue; Monday 23 November 2026, 09:00 in London. Ana
 * does Cuts at Soho on Mondays and Tuesdays 09:00-17:00; nobody works there on Thursdays.
 */
const NOW = '2026-11-23T09:00:00Z';
const THURSDAY = '2026-11-26';
const ORG = 'acme-hair';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const json = (response: { body: string }) => JSON.parse(response.body);

async function searchPage(date: string): Promise<string> {
  const ids = await catalogueIds(t.database.db);
  const page = await pageGet(t, `/p/${ORG}?location=soho&services=${ids.services.cut}&date=${date}`);
  expect(page.statusCode, page.body).toBe(200);
  return page.body;
}

/** Every hour of Ana's Tuesday booked for Jo over REST: nothing free that day. */
const fillTuesday = () => bookAnaOnTuesday(t, ['09', '10', '11', '12', '13', '14', '15', '16']);

async function joinOnPage(
  fields: Record<string, string | undefined>,
  options: { address?: string; times?: string[] } = {},
) {
  const ids = await catalogueIds(t.database.db);
  const form: Record<string, string> = {
    location: 'soho',
    services: ids.services.cut!,
    from_date: TUESDAY,
    to_date: TUESDAY,
    first_name: 'Mallory',
    last_name: 'Stranger',
  };
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) delete form[name];
    else form[name] = value;
  }
  const params = new URLSearchParams(form);
  for (const time of options.times ?? []) params.append('times', time);
  return t.app.inject({
    method: 'POST',
    url: `/p/${ORG}/waitlist`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
    payload: params.toString(),
    ...(options.address && { remoteAddress: options.address }),
  });
}

const entries = async () =>
  json(await t.request({ method: 'GET', url: '/v1/waitlist?location_slug=soho' })).data as {
    id: string;
    client_id: string;
    staff_id: string | null;
    status: string;
    times: string[] | null;
    offer: null | { booking_reference: string; starts_at: string };
  }[];

const pass = () => waitlistPass(t);

describe('the public page’s waitlist', () => {
  it('is offered only when nothing fits, keeps a stranger off a client’s record, and sends the offer only to the contact typed', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    // Tuesday has free times: no waitlist form. Thursday has none: the form, the day prefilled.
    expect(await searchPage(TUESDAY)).not.toContain('Tell me if a time frees up');
    const thursday = await searchPage(THURSDAY);
    expect(thursday).toContain('No free times that day');
    expect(thursday).toContain('<h2 id="waitlist-heading">Tell me if a time frees up</h2>');
    expect(thursday).toContain(`action="/p/${ORG}/waitlist"`);
    expect(thursday).toContain(`id="wl_from_date" name="from_date" type="date" value="${THURSDAY}"`);
    expect(thursday).toContain(`id="wl_to_date" name="to_date" type="date" value="${THURSDAY}"`);
    expect(thursday).toContain(`name="services" value="${ids.services.cut}"`);
    for (const time of ['morning', 'afternoon', 'evening']) {
      expect(thursday).toContain(`<input type="checkbox" name="times" value="${time}">`);
    }

    const booked = await fillTuesday();
    expect(await searchPage(TUESDAY)).toContain('Tell me if a time frees up');

    // A stranger types Jo's e-mail (Jo is on file with it, and with a phone).
    const joined = await joinOnPage({ email: 'JO@example.com' }, { times: ['afternoon'] });
    expect(joined.statusCode, joined.body).toBe(200);
    expect(joined.body).toContain('<h1>You are on the waitlist</h1>');
    expect(joined.body).toContain('We will tell you if a time frees up at Soho.');
    expect(joined.body).toContain('<dd>Cut</dd>');
    expect(joined.body).toContain('Afternoon (12:00 to 17:00)');
    expect(joined.body).toContain('an e-mail to <strong>jo@example.com</strong>');
    expect(joined.body).toContain('held for you for 15 minutes');
    expect(joined.body).not.toMatch(/Jo\b|Bloggs|\+447911123456/);

    const [entry] = await entries();
    expect(entry).toMatchObject({ status: 'waiting', times: ['afternoon'], offer: null });
    expect(entry!.client_id).not.toBe(ids.jo);
    const client = await t.database.db
      .selectFrom('clients')
      .select(['first_name', 'email', 'phone', 'contact_proven'])
      .where('id', '=', entry!.client_id)
      .executeTakeFirstOrThrow();
    expect(client).toEqual({
      first_name: 'Mallory',
      email: 'jo@example.com',
      phone: null,
      contact_proven: 0,
    });
    // Lookups still find Jo, and only Jo.
    const found = await t.request({ method: 'GET', url: '/v1/clients?email=jo@example.com' });
    expect(json(found).data.id).toBe(ids.jo);

    // The same form again (a reload): the same answer, no second entry.
    const again = await joinOnPage({ email: 'jo@example.com' }, { times: ['afternoon'] });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.body).toContain('You are on the waitlist');
    expect(await entries()).toHaveLength(1);

    // A time frees: the offer is the entry's own client's, sent to the e-mail typed only, no name.
    const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel` });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(await pass()).toBe(1);
    const [offered] = await entries();
    expect(offered!.offer).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });
    const reference = offered!.offer!.booking_reference;
    const hold = json(await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).data;
    expect(hold.client_id).toBe(entry!.client_id);
    await deliver(t);
    const sent = await messagesOf(t, reference);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.map((m) => [m.channel, m.to])).toEqual(sent.map(() => ['email', 'jo@example.com']));
    for (const message of sent) {
      const words = JSON.parse(message.body!) as { text: string; subject?: string };
      expect(`${words.subject ?? ''} ${words.text}`).not.toMatch(/Mallory|Bloggs|\bJo\b/);
    }
    // Nor does the page the offer links to: the name is whatever the stranger typed, shown to Jo.
    const offerPage = (await pageGet(t, await bookingPagePathOf(t, reference))).body;
    expect(offerPage).toContain(reference);
    expect(offerPage).not.toMatch(/Mallory|Stranger|Bloggs|<dt>Name<\/dt>/);

    // Nobody answers: the unproven entry ends with its first lapsed offer, so jo@example.com gets no
    // second one when another time frees.
    t.clock.advance({ minutes: 16 });
    await pass();
    const ended = await t.request({ method: 'GET', url: `/v1/waitlist/${entry!.id}` });
    expect(json(ended).data).toMatchObject({ status: 'ended', offer: null });
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel` });
    expect(await pass()).toBe(0);
  });

  it('waits for the stylist the customer searched with, not anyone: no offer with someone else', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    // Bo does not work on Tuesdays; Ana does, and has free times then.
    const page = await pageGet(
      t,
      `/p/${ORG}?location=soho&services=${ids.services.cut}&staff=${ids.staff.bo}&date=${TUESDAY}`,
    );
    const form = page.body.slice(page.body.indexOf('aria-labelledby="waitlist-heading"'));
    expect(form).toContain('Tell me if a time frees up');
    expect(form).toContain(`<input type="hidden" name="staff" value="${ids.staff.bo}">`);

    const joined = await joinOnPage({ email: 'rosa@example.com', staff: ids.staff.bo });
    expect(joined.statusCode, joined.body).toBe(200);
    expect(joined.body).toContain('<dt>With</dt><dd>Bo</dd>');
    const [entry] = await entries();
    expect(entry).toMatchObject({ staff_id: ids.staff.bo });
    // Ana's free Tuesday is not what Rosa asked for.
    expect(await pass()).toBe(0);
  });

  it('answers the entry already there when the same wants come again with services and times in another order', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const email = 'mallory@example.com';
    const first = await joinOnPage(
      { email, services: `${ids.services.cut},${ids.services.colour}` },
      { times: ['morning', 'afternoon'] },
    );
    expect(first.statusCode, first.body).toBe(200);
    const again = await joinOnPage(
      { email, services: `${ids.services.colour},${ids.services.cut}` },
      { times: ['afternoon', 'morning'] },
    );
    expect(again.statusCode, again.body).toBe(200);
    expect(again.body).toContain('You are on the waitlist');
    const waiting = await entries();
    expect(waiting).toHaveLength(1);
    expect(waiting[0]).toMatchObject({ times: ['morning', 'afternoon'] });
  });

  it('refuses what cannot be asked, on a page saying why, and caps strangers as the booking form does', async () => {
    t = await startTestApp({ now: NOW });
    await fillTuesday();
    const refused = async (
      fields: Record<string, string | undefined>,
      status: number,
      words: string,
      times?: string[],
    ) => {
      const answer = await joinOnPage(fields, { times: times ?? [] });
      expect(answer.statusCode, answer.body).toBe(status);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expect(answer.body).toContain(words);
      expect(answer.body).toContain(`<a href="/p/${ORG}">Back to the booking page</a>`);
    };
    await refused({}, 400, 'Give a phone number or an e-mail address');
    // Said to a person, not in the API's field words ("phone is ...").
    await refused(
      { phone: '+44 909 879 0000' },
      400,
      'That number is a premium-rate number, which we never send messages to',
    );
    await refused(
      { phone: '+33 6 12 34 56 78' },
      400,
      'We can only send texts to numbers in the United Kingdom',
    );
    await refused({ email: 'a@example.com', from_date: 'soon' }, 400, 'Choose the first day you could come.');
    await refused(
      { email: 'a@example.com', to_date: '2026-11-20', from_date: '2026-11-20' },
      400,
      'The last day (Until) has passed',
    );
    await refused({ email: 'a@example.com' }, 400, 'Choose morning, afternoon or evening', ['night']);
    const ids = await catalogueIds(t.database.db);
    await refused({ email: 'a@example.com', services: ids.services['patch-test'] }, 400, 'booked in person');
    // What a browser would never send: never a fault (from an address of its own: each counts).
    for (const odd of [
      { services: 'not-a-service' },
      { services: '' },
      { location: 'nowhere' },
      { from_date: '2026-02-31' },
      { to_date: '2026-11-24\n2026-11-25' },
      { first_name: 'Eve\u0000' },
    ]) {
      const answer = await joinOnPage({ email: 'a@example.com', ...odd }, { address: '127.0.0.20' });
      expect([400, 404], `${JSON.stringify(odd)}: ${answer.body}`).toContain(answer.statusCode);
    }
    expect(await entries()).toEqual([]);

    // A form from another site is refused before anything is read.
    const foreign = await t.app.inject({
      method: 'POST',
      url: `/p/${ORG}/waitlist`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      payload: 'email=a%40example.com',
    });
    expect(foreign.statusCode).toBe(403);

    // Two waiting entries per contact (public_holds_per_contact's default), from this page.
    const phone = '07400 123123';
    expect((await joinOnPage({ phone }, { times: ['morning'] })).statusCode).toBe(200);
    expect((await joinOnPage({ phone }, { times: ['afternoon'] })).statusCode).toBe(200);
    const third = await joinOnPage({ phone }, { times: ['evening'] });
    expect(third.statusCode).toBe(429);
    expect(third.body).toContain('is already on the waitlist 2 times');
    expect(await entries()).toHaveLength(2);

    // Ten form posts per client address an hour, the booking form's counter and its words.
    const address = '127.0.0.9';
    for (let i = 0; i < 10; i++) {
      expect((await joinOnPage({}, { address })).statusCode).toBe(400);
    }
    const limited = await joinOnPage({ email: 'b@example.com' }, { address });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect(limited.body).toContain('Too many booking attempts');
    // The booking form shares the counter.
    const booking = await pagePost(t, `/p/${ORG}/book`, { starts_at: `${TUESDAY}T14:00:00Z` }, { address });
    expect(booking.statusCode).toBe(429);
  });

  it('says a refused date in the form’s words (From, Until), never the API’s field names', async () => {
    t = await startTestApp({ now: NOW });
    await fillTuesday();
    const words = async (fields: Record<string, string>) => {
      const answer = await joinOnPage({ email: 'a@example.com', ...fields });
      expect(answer.statusCode, answer.body).toBe(400);
      return /<p id="wl_(?:from|to)_date-error" role="alert"[^>]*>([^<]*)<\/p>/.exec(answer.body)?.[1];
    };
    expect(await words({ from_date: '2026-11-25', to_date: '2026-11-24' })).toBe(
      'The last day (Until) is before the first (From): choose a last day on or after the first.',
    );
    expect(await words({ from_date: '2026-11-20', to_date: '2026-11-20' })).toBe(
      'The last day (Until) has passed: choose days from today, Monday 23 November, on.',
    );
    expect(await words({ from_date: TUESDAY, to_date: '2027-03-01' })).toBe(
      'You can wait for at most 92 days; these dates span 98. Choose a last day (Until) nearer the first (From).',
    );
  });

  it('says beside the times of day that those ticked are over today, keeping what was typed', async () => {
    // Tuesday 24 November 2026, 18:00 in London: the morning and afternoon are over, the evening not.
    t = await startTestApp({ now: `${TUESDAY}T18:00:00Z` });
    const answer = await joinOnPage({ email: 'a@example.com' }, { times: ['morning', 'afternoon'] });
    expect(answer.statusCode, answer.body).toBe(400);
    const times = /<fieldset id="wl_times"[^>]*>[\s\S]*?<\/fieldset>/.exec(answer.body)?.[0] ?? '';
    expect(times).toContain('aria-describedby="wl_times-error"');
    expect(/<p id="wl_times-error" role="alert"[^>]*>([^<]*)<\/p>/.exec(times)?.[1]).toBe(
      'The morning and afternoon of Tuesday 24 November are over; choose a later part of the day or a later date. Your details are kept below.',
    );
    expect(times).toMatch(/value="morning" checked/);
    expect(answer.body).toContain('value="a@example.com"');
    expect(await entries()).toEqual([]);
    const evening = await joinOnPage({ email: 'a@example.com' }, { times: ['evening'] });
    expect(evening.statusCode, evening.body).toBe(200);
  });

  it('counts a Gmail address spelt another way (dots, a +tag, googlemail.com) as the same contact', async () => {
    t = await startTestApp({ now: NOW });
    await fillTuesday();
    const join = (email: string, times: string[], address: string) =>
      joinOnPage({ email }, { times, address });
    expect((await join('rosaparks@gmail.com', ['morning'], '127.0.0.21')).statusCode).toBe(200);
    expect((await join('Rosa.Parks@gmail.com', ['afternoon'], '127.0.0.22')).statusCode).toBe(200);
    for (const [i, email] of [
      'r.o.s.a.parks@gmail.com',
      'rosaparks+salon@gmail.com',
      'rosaparks@googlemail.com',
    ].entries()) {
      const third = await join(email, ['evening'], `127.0.0.${23 + i}`);
      expect(third.statusCode, email).toBe(429);
      expect(third.body).toContain('is already on the waitlist 2 times');
    }
    expect(await entries()).toHaveLength(2);
    // Another inbox at Gmail is another contact.
    expect((await join('rosa.parks.jr@gmail.com', ['evening'], '127.0.0.30')).statusCode).toBe(200);
  });

  it('so many requests an hour across the organisation, whatever the contacts and addresses', async () => {
    // Each from an inbox and an address of its own (a mail domain and a /48 of one's own make any
    // number): the caps per contact and per address never refuse, yet each entry, once a time frees,
    // holds it for its offer's minutes and is sent the offer.
    const catalogue = { ...smallCatalogue(), policies: { public_bookings_per_organisation_per_hour: 2 } };
    t = await startTestApp({ catalogues: [catalogue], now: NOW });
    await fillTuesday();
    const join = (n: number, times = ['morning']) =>
      joinOnPage({ email: `stranger${n}@example.com` }, { times, address: `127.0.0.${40 + n}` });
    expect((await join(1)).statusCode).toBe(200);
    expect((await join(2)).statusCode).toBe(200);
    const third = await join(3);
    expect(third.statusCode).toBe(429);
    expect(third.headers['retry-after']).toBeDefined();
    expect(third.body).toContain(
      'This salon takes 2 waitlist requests an hour on this page, and this hour&#39;s are taken. Try again in 60 minutes, or call the salon.',
    );
    // The same request again answers the entry already there, taking no place of the hour.
    expect((await join(1)).statusCode).toBe(200);
    expect(await entries()).toHaveLength(2);
    // The booking form keeps its own places: a waitlist flood does not close it.
    const ids = await catalogueIds(t.database.db);
    const booked = await pagePost(
      t,
      `/p/${ORG}/book`,
      {
        location: 'soho',
        services: ids.services.cut!,
        starts_at: '2026-11-23T14:00:00Z',
        first_name: 'Rosa',
        last_name: 'Parks',
        email: 'rosa@example.com',
      },
      { address: '127.0.0.50' },
    );
    expect(booked.statusCode, booked.body).toBe(303);
    // The next clock hour takes requests again.
    t.clock.advance({ hours: 1 });
    expect((await join(3)).statusCode).toBe(200);
  });

  it('counts any address with a +tag as its inbox, at any provider', async () => {
    t = await startTestApp({ now: NOW });
    await fillTuesday();
    const join = (email: string, times: string[], address: string) =>
      joinOnPage({ email }, { times, address });
    expect((await join('ro_sa+1@outlook.com', ['morning'], '127.0.0.21')).statusCode).toBe(200);
    expect((await join('ro_sa+2@outlook.com', ['afternoon'], '127.0.0.22')).statusCode).toBe(200);
    const third = await join('ro_sa@outlook.com', ['evening'], '127.0.0.23');
    expect(third.statusCode).toBe(429);
    expect(third.body).toContain('is already on the waitlist 2 times');
    // An underscore is a letter, not a wildcard: another inbox.
    expect((await join('roxsa@outlook.com', ['evening'], '127.0.0.24')).statusCode).toBe(200);
  });
});

describe('an offer claimed from the public page’s waitlist', () => {
  /** A Tuesday afternoon cut waited for from the page with `fields`, 14:00 freed and claimed. */
  async function claimed(fields: Record<string, string>) {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesday();
    const joined = await joinOnPage(fields, { times: ['afternoon'] });
    expect(joined.statusCode, joined.body).toBe(200);
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel` });
    expect(await pass()).toBe(1);
    const [entry] = await entries();
    const reference = entry!.offer!.booking_reference;
    const page = await bookingPagePathOf(t, reference);
    const claim = await pagePost(t, `${page}/claim`);
    expect(claim.statusCode, claim.body).toBe(303);
    const booking = json(await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).data;
    expect(booking.status).toBe('confirmed');
    return { booking, entry: entry! };
  }

  it('belongs to the client on file with the contact the claim link proved, who finds it', async () => {
    const { booking, entry } = await claimed({ email: 'jo@example.com' });
    const ids = await catalogueIds(t.database.db);
    expect(booking.client_id).toBe(ids.jo);
    // Proven: the page names the client on file, never what the stranger typed.
    const page = (await pageGet(t, await bookingPagePathOf(t, booking.reference))).body;
    expect(page).toContain('<dt>Name</dt><dd>Jo Bloggs</dd>');
    expect(page).not.toContain('Mallory');
    const jos = json(await t.request({ method: 'GET', url: `/v1/clients/${ids.jo}/bookings` })).data;
    expect(jos.map((b: { reference: string }) => b.reference)).toContain(booking.reference);
    // The entry is Jo's too, so the waitlist.claimed event names the booking's client.
    expect(json(await t.request({ method: 'GET', url: `/v1/waitlist/${entry.id}` })).data).toMatchObject({
      status: 'booked',
      client_id: ids.jo,
    });
  });

  it('puts a customer new to the salon on file with that contact, so lookups find them', async () => {
    const { booking } = await claimed({ email: 'new.customer@example.com' });
    const found = await t.request({ method: 'GET', url: '/v1/clients?email=new.customer@example.com' });
    expect(found.statusCode, found.body).toBe(200);
    expect(json(found).data).toMatchObject({ id: booking.client_id, first_name: 'Mallory' });
  });

  it('stays on a record of its own when the claim cannot say which of two contacts it proved', async () => {
    // Jo's phone with another e-mail: the offer went to both, and either may have opened it.
    const { booking } = await claimed({ phone: '+447911123456', email: 'mallory@example.com' });
    const ids = await catalogueIds(t.database.db);
    expect(booking.client_id).not.toBe(ids.jo);
    const found = await t.request({ method: 'GET', url: '/v1/clients?phone=%2B447911123456' });
    expect(json(found).data.id).toBe(ids.jo);
  });
});

describe('an offer’s page once it is let go or lapsed', () => {
  it('says the customer left the waitlist, or that the time went to the next person, not that a booking expired', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesday();
    expect((await joinOnPage({ email: 'jo@example.com' }, { times: ['afternoon'] })).statusCode).toBe(200);
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel` });
    expect(await pass()).toBe(1);
    const [first] = await entries();
    const page = await bookingPagePathOf(t, first!.offer!.booking_reference);
    expect((await pagePost(t, `${page}/leave`)).statusCode).toBe(303);
    const left = (await pageGet(t, page)).body;
    expect(left).toContain('<h1>Time let go</h1>');
    expect(left).toContain('You let this time go and left the waitlist.');
    expect(left).not.toContain('not finished in time');

    expect((await joinOnPage({ email: 'max@example.com' }, { times: ['afternoon'] })).statusCode).toBe(200);
    expect(await pass()).toBe(1);
    const offered = (await entries()).find((e) => e.offer !== null);
    const lapsing = await bookingPagePathOf(t, offered!.offer!.booking_reference);
    t.clock.advance({ minutes: 16 });
    const lapsed = (await pageGet(t, lapsing)).body;
    expect(lapsed).toContain('<h1>Offer lapsed</h1>');
    expect(lapsed).toContain(
      'This time was held for you and not booked in time, so it went to the next person waiting.',
    );
    expect(lapsed).not.toContain('not finished in time');

    // The salon takes the next person off the waitlist while their offer is held (over REST).
    expect((await joinOnPage({ email: 'kim@example.com' }, { times: ['afternoon'] })).statusCode).toBe(200);
    await pass();
    const withdrawn = (await entries()).find((e) => e.offer !== null)!;
    const withdrawnPage = await bookingPagePathOf(t, withdrawn.offer!.booking_reference);
    expect((await t.request({ method: 'DELETE', url: `/v1/waitlist/${withdrawn.id}` })).statusCode).toBe(204);
    const taken = (await pageGet(t, withdrawnPage)).body;
    expect(taken).toContain('<h1>Offer withdrawn</h1>');
    expect(taken).toContain('This time is no longer held for you: the salon has taken you off the waitlist.');
  });
});

describe('an entry from the public page ends with its offer’s lapse, whoever records it', () => {
  /** A stranger waits for a Tuesday afternoon cut, and 14:00 frees: offered, its hold 15 minutes. */
  async function offeredOnce() {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesday();
    const joined = await joinOnPage({ email: 'jo@example.com' }, { times: ['afternoon'] });
    expect(joined.statusCode, joined.body).toBe(200);
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel` });
    expect(await pass()).toBe(1);
    const [entry] = await entries();
    expect(entry!.offer).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });
    return { booked, entry: entry! };
  }

  /** Another time frees: an entry that ended is offered nothing. */
  async function expectNoSecondOffer(booked: Map<string, string>, entryId: string) {
    const ended = json(await t.request({ method: 'GET', url: `/v1/waitlist/${entryId}` })).data;
    expect(ended).toMatchObject({ status: 'ended', offer: null });
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel` });
    expect(await pass()).toBe(0);
  }

  it('the hold sweeper', async () => {
    const { booked, entry } = await offeredOnce();
    t.clock.advance({ minutes: 16 });
    // What `booking serve`'s sweeper runs every 30 seconds, here before the waitlist worker's pass.
    expect(await expireLapsedHolds(t.database.db, t.clock.nowMs())).toBe(1);
    await expectNoSecondOffer(booked, entry.id);
  });

  it('another booking of the same time, which writes the lapsed hold expired first', async () => {
    const { booked, entry } = await offeredOnce();
    t.clock.advance({ minutes: 16 });
    const rebooked = await bookAna(t, `${TUESDAY}T14:00:00Z`);
    expect(rebooked.statusCode, rebooked.body).toBe(201);
    await expectNoSecondOffer(booked, entry.id);
  });

  it('but not "Not this time": the entry keeps waiting for another time', async () => {
    const { booked, entry } = await offeredOnce();
    const page = await bookingPagePathOf(t, entry.offer!.booking_reference);
    const declined = await pagePost(t, `${page}/decline`);
    expect(declined.statusCode, declined.body).toBe(303);
    // The page it lands on says what the customer did, not that a booking of theirs ran out of time.
    const shown = (await pageGet(t, page)).body;
    expect(shown).toContain('<h1>Time let go</h1>');
    expect(shown).toContain('You let this time go. You are still on the waitlist');
    expect(shown).not.toContain('not finished in time');
    await pass();
    const waiting = json(await t.request({ method: 'GET', url: `/v1/waitlist/${entry.id}` })).data;
    expect(waiting).toMatchObject({ status: 'waiting', offer: null });
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel` });
    expect(await pass()).toBe(1);
    // Offered again, now that 15:00 has freed too: not the 14:00 it let go, nor a start whose hold
    // would keep it from the next entry (14:15 to 14:45: 14:00 needs Ana until 15:00 with its buffer),
    // but the first start clear of it.
    const [again] = await entries();
    expect(again).toMatchObject({ status: 'waiting', offer: { starts_at: `${TUESDAY}T15:00:00+00:00` } });
  });
});
