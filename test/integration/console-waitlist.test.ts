import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { createUser } from '../../src/app/staff-account-service.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import {
  expectNamedControls,
  type SignedIn,
  signInToConsole,
  tableRows,
} from '../helpers/console-session.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TUESDAY, waitlistPass } from '../helpers/waitlist-fixtures.ts';

/**
 * The console's Waitlist page through HTTP (design.md 9.4, "the console (list, add, remove, see
 * offers)"): any signed-in role sees a location's entries in joining order with the names behind
 * them and the offer each holds, adds one for a client found by search or given by details, and
 * removes one (its held time released); the service's refusals are said on the form, the typed values
 * kept; another organisation sees none of it. The small catalogue; Monday 23 November 2026, 09:00 in
 * London; Ana does Cuts at Soho on Mondays and Tuesdays 09:00-17:00, Bo on Wednesdays.
 */
const NOW = '2026-11-23T09:00:00Z';
const PASSWORD = 'correct horse battery';

let t: TestApp;
/** acme-hair's rows (beta-barbers has rows with the same refs). */
let acme: { cut: string; colour: string; jo: string; ana: string; bo: string };

beforeAll(async () => {
  t = await startTestApp({
    catalogues: [smallCatalogue(), smallCatalogue({ slug: 'beta-barbers', prefix: 'BB' })],
    limits: { requestsPerMinute: 100_000 },
    now: NOW,
  });
  const db = t.database.db;
  const { id: organisation } = await db
    .selectFrom('organisations')
    .select('id')
    .where('slug', '=', 'acme-hair')
    .executeTakeFirstOrThrow();
  const refOf = async (table: 'services' | 'clients' | 'staff', ref: string) =>
    (
      await db
        .selectFrom(table)
        .select('id')
        .where('organisation_id', '=', organisation)
        .where('ref', '=', ref)
        .executeTakeFirstOrThrow()
    ).id;
  acme = {
    cut: await refOf('services', 'cut'),
    colour: await refOf('services', 'colour'),
    jo: await refOf('clients', 'jo'),
    ana: await refOf('staff', 'ana'),
    bo: await refOf('staff', 'bo'),
  };
  for (const [organisationSlug, email, role] of [
    ['acme-hair', 'owner@acme.test', 'owner'],
    ['acme-hair', 'desk@acme.test', 'staff'],
    ['beta-barbers', 'owner@beta.test', 'owner'],
  ] as const) {
    await createUser(t.database.db, { organisationSlug, email, role, password: PASSWORD }, t.clock.nowMs());
  }
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  t.clock.set(NOW);
  // Each test starts with nobody waiting and Ana's Tuesday free.
  await t.database.db.deleteFrom('waitlist_offers').execute();
  await t.database.db.deleteFrom('waitlist_entries').execute();
  await t.database.db.deleteFrom('waitlist_rescans').execute();
});

const signIn = (organisation: string, email: string) => signInToConsole(t, organisation, email, PASSWORD);

const pass = () => waitlistPass(t);

/** The add form's fields for Jo (found by search), a Cut with Ana on Tuesday afternoon. */
function joForm(extra: Record<string, string | string[]> = {}): Record<string, string | string[]> {
  return {
    location: 'soho',
    client_id: acme.jo,
    service_id: [acme.cut],
    staff_id: acme.ana,
    from_date: TUESDAY,
    to_date: TUESDAY,
    times: ['afternoon'],
    ...extra,
  };
}

async function waitlistPage(me: SignedIn, query = 'location=soho'): Promise<string> {
  const page = await me.get(`/console/waitlist?${query}`);
  expect(page.statusCode, page.body).toBe(200);
  return page.body;
}

describe('the waitlist in the console', () => {
  it('lists, adds by search and by details, shows the offer held, and removes', async () => {
    const desk = await signIn('acme-hair', 'desk@acme.test');
    const empty = await waitlistPage(desk);
    expect(empty).toContain('<a href="/console/waitlist" aria-current="page">Waitlist</a>');
    expect(empty).toContain('<h1>Waitlist – Soho</h1>');
    expect(empty).toContain('Nobody is waiting here.');
    expectNamedControls(empty);

    // The client search offers Jo on the add form.
    const searched = await waitlistPage(desk, 'location=soho&q=bloggs');
    expect(searched).toContain(`<input type="radio" name="client_id" id="wl-client-0" value="${acme.jo}">`);
    expect(searched).toContain('Jo Bloggs');
    expectNamedControls(searched);

    const added = await desk.post('/console/waitlist', joForm());
    expect(added.statusCode, added.body).toBe(303);
    expect(added.headers.location).toBe('/console/waitlist?location=soho&done=added');
    // A new client by details, for any staff member, any time on Tuesday.
    const second = await desk.post('/console/waitlist', {
      location: 'soho',
      client_id: 'new',
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: '07400 555666',
      service_id: [acme.cut],
      staff_id: '',
      from_date: TUESDAY,
      to_date: TUESDAY,
    });
    expect(second.statusCode, second.body).toBe(303);

    const listed = await waitlistPage(desk, 'location=soho&done=added');
    expect(listed).toContain('Added to the waitlist.');
    const rows = tableRows(listed);
    expect(rows).toHaveLength(2);
    expect(rows[0]!.slice(1)).toEqual([
      'Jo Bloggs | +447911123456 | jo@example.com',
      'Cut',
      'Ana',
      // The day as the rest of the console writes dates, in the organisation's locale (en-GB).
      '24 Nov 2026',
      'Afternoon (12:00–17:00)',
      'Waiting',
      '–',
      'Remove',
    ]);
    expect(listed).toContain(`<time datetime="${TUESDAY}">24 Nov 2026</time>`);
    expect(rows[1]!.slice(1, 7)).toEqual([
      'Ada Lovelace | +447400555666',
      'Cut',
      'Anyone',
      '24 Nov 2026',
      'Any time',
      'Waiting',
    ]);
    expect(listed).toContain(
      '<button type="submit" class="danger">Remove<span class="visually-hidden"> Jo Bloggs from the waitlist</span></button>',
    );
    expectNamedControls(listed);

    // Ana's Tuesday afternoon is booked but 14:00, which Jo is offered (first in joining order); by
    // another client: a booking of Jo's there would end Jo's entry as booked.
    const filler = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Fay', last_name: 'Filler', email: 'fay@example.com' },
    });
    expect(filler.statusCode, filler.body).toBe(201);
    for (const hour of ['09', '10', '11', '12', '13', '15', '16']) {
      const booked = await t.request({
        method: 'POST',
        url: '/v1/bookings',
        payload: {
          location_slug: 'soho',
          service_ids: [acme.cut],
          staff_id: acme.ana,
          client_id: filler.json().data.id,
          starts_at: `${TUESDAY}T${hour}:00:00Z`,
        },
      });
      expect(booked.statusCode, booked.body).toBe(201);
    }
    expect(await pass()).toBe(1);
    const offered = await waitlistPage(desk);
    const [jo, ada] = tableRows(offered);
    expect(jo![7]).toMatch(
      /^24 Nov 2026, 14:00 with Ana \| held until 23 Nov 2026, 09:15 \| AC-[0-9A-Z]{6}$/,
    );
    expect(ada![7]).toBe('–');
    const reference = /AC-[0-9A-Z]{6}/.exec(jo![7]!)![0];
    expect(offered).toContain(`<a href="/console/bookings/${reference}">${reference}</a>`);

    // Removing Jo releases the held time; the entry is gone from the waiting list, shown as left.
    const id = /action="\/console\/waitlist\/([0-9a-f-]{36})\/remove"/.exec(offered)![1]!;
    const removed = await desk.post(`/console/waitlist/${id}/remove`, { location: 'soho' });
    expect(removed.statusCode, removed.body).toBe(303);
    expect(removed.headers.location).toBe('/console/waitlist?location=soho&done=removed');
    const hold = (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data;
    expect(hold.status).toBe('expired');
    // The hold's log says who withdrew it: the desk's account, not the customer.
    const withdrawn = await t.database.db
      .selectFrom('booking_events as e')
      .innerJoin('bookings as b', 'b.id', 'e.booking_id')
      .select('e.actor')
      .where('b.reference', '=', reference)
      .where('e.to_status', '=', 'expired')
      .executeTakeFirstOrThrow();
    expect(withdrawn.actor).toMatch(/^user:/);
    const detail = await desk.get(`/console/bookings/${reference}`);
    expect(detail.body).toContain('Waitlist (time offered, or offer lapsed)');
    expect(tableRows(await waitlistPage(desk)).map((r) => r[1])).toEqual(['Ada Lovelace | +447400555666']);
    const all = tableRows(await waitlistPage(desk, 'location=soho&status=all'));
    expect(all.map((r) => r[6])).toEqual(['Left', 'Waiting']);
    // The time goes to Ada at the next pass.
    expect(await pass()).toBe(1);
    expect(tableRows(await waitlistPage(desk))[0]![7]).toContain('14:00 with Ana');

    // Removing an entry that has ended is refused on the page, with the service's reason.
    const again = await desk.post(`/console/waitlist/${id}/remove`, { location: 'soho' });
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('<p class="error" role="alert">This entry has ended already (left).</p>');
  });

  it('says refusals on the form, keeping what was typed', async () => {
    const owner = await signIn('acme-hair', 'owner@acme.test');
    const refused = async (fields: Record<string, string | string[]>, status: number, words: string) => {
      const answer = await owner.post('/console/waitlist', fields);
      expect(answer.statusCode, answer.body).toBe(status);
      expect(answer.body).toContain(`<p class="error" role="alert" id="waitlist-error">${words}`);
      expectNamedControls(answer.body);
      return answer.body;
    };
    const dates = await refused(
      joForm({ from_date: '2026-11-26', to_date: '2026-11-25' }),
      400,
      // In the form's own labels (From, Until), as the public page says it, not the API's field names.
      'The last day (Until) is before the first (From): choose a last day on or after the first.',
    );
    expect(dates).not.toContain('from_date is after to_date');
    expect(dates).toContain(
      'id="wl-from" name="from_date" type="date" required value="2026-11-26" aria-invalid="true" aria-describedby="waitlist-error"',
    );
    expect(dates).toContain(`<option value="${acme.cut}" selected>`);
    const long = await refused(
      joForm({ from_date: TUESDAY, to_date: '2027-11-24' }),
      400,
      'You can wait for at most',
    );
    expect(long).toMatch(/these dates span 366\. Choose a last day \(Until\) nearer the first \(From\)\./);
    expect(long).not.toContain('from_date to to_date');
    expect(long).toContain(
      'id="wl-to" name="to_date" type="date" required value="2027-11-24" aria-invalid="true"',
    );
    await refused(
      joForm({ from_date: '2026-11-20', to_date: '2026-11-21' }),
      400,
      'The last day (Until) has passed: choose days from today, Monday 23 November, on.',
    );
    await refused(
      joForm({ staff_id: acme.bo, service_id: [acme.colour] }),
      400,
      'This staff member does not do',
    );
    await refused(joForm({ service_id: [] }), 400, 'Choose at least one service.');
    await refused(joForm({ times: ['night'] }), 400, 'Choose morning, afternoon or evening');
    const typed = await refused(
      joForm({ client_id: 'new', first_name: 'Bea', last_name: '', email: 'bea@example.com' }),
      400,
      'last_name must be 1 to 60 characters.',
    );
    expect(typed).toContain('value="bea@example.com"');
    expect(typed).toContain('id="wl-last-name" name="last_name" maxlength="60" value="" aria-invalid="true"');
    // A French mobile and no e-mail: no offer could reach her; the e-mail field is where to add one.
    const abroad = await refused(
      joForm({ client_id: 'new', first_name: 'Amelie', last_name: 'Roux', phone: '+33612345678' }),
      400,
      'An offer could not reach this client, who has no e-mail address and no phone we text (we text only numbers in the United Kingdom); add an e-mail address.',
    );
    expect(abroad).toMatch(/id="wl-email" name="email"[^>]* aria-invalid="true"/);
    // Tuesday 18:00 in London (signed in again then): its afternoon is over, so a wait for it alone
    // is refused at the times.
    t.clock.set(`${TUESDAY}T18:00:00Z`);
    const over = await (await signIn('acme-hair', 'owner@acme.test')).post('/console/waitlist', joForm());
    expect(over.statusCode, over.body).toBe(400);
    expect(over.body).toContain(
      '<p class="error" role="alert" id="waitlist-error">The afternoon of Tuesday 24 November is over; choose a later part of the day or a later date.',
    );
    expect(over.body).toContain(
      '<fieldset aria-invalid="true" aria-describedby="waitlist-error"><legend>Times of day',
    );
    expect(over.body).toContain('name="times" value="afternoon" checked');
    t.clock.set(NOW);
    expect((await owner.post('/console/waitlist', joForm())).statusCode).toBe(303);
    await refused(joForm(), 409, 'This client is already waiting for these services here');
    // Nothing of it was written.
    expect(tableRows(await waitlistPage(owner))).toHaveLength(1);
  });

  it('shows another organisation none of it, and marks entries from the public page', async () => {
    const owner = await signIn('acme-hair', 'owner@acme.test');
    expect((await owner.post('/console/waitlist', joForm())).statusCode).toBe(303);
    const id = /action="\/console\/waitlist\/([0-9a-f-]{36})\/remove"/.exec(await waitlistPage(owner))![1]!;

    const beta = await signIn('beta-barbers', 'owner@beta.test');
    expect(await waitlistPage(beta)).toContain('Nobody is waiting here.');
    const foreign = await beta.post(`/console/waitlist/${id}/remove`, { location: 'soho' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.body).toContain('No waitlist entry has this id.');
    // Beta's own client id is not Jo's at acme: adding it there is refused.
    const notOurs = await beta.post('/console/waitlist', joForm());
    expect(notOurs.statusCode).toBe(400);
    expect(tableRows(await waitlistPage(owner))).toHaveLength(1);

    // An entry a stranger made on the public page says its contact is not confirmed.
    const joined = await t.app.inject({
      method: 'POST',
      url: '/p/acme-hair/waitlist',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
      payload: new URLSearchParams({
        location: 'soho',
        services: acme.cut,
        from_date: TUESDAY,
        to_date: TUESDAY,
        first_name: 'Sam',
        last_name: 'Stranger',
        email: 'sam@example.com',
      }).toString(),
    });
    expect(joined.statusCode, joined.body).toBe(200);
    const rows = tableRows(await waitlistPage(owner));
    expect(rows[1]![1]).toBe(
      'Sam Stranger | sam@example.com | Joined on the public page; contact not confirmed',
    );

    // Signed out: the sign-in page.
    const anonymous = await t.app.inject({ method: 'GET', url: '/console/waitlist' });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toMatch(/^\/console\/sign-in/);
  });

  it('links an entry that ended booked to the booking it ended with', async () => {
    const desk = await signIn('acme-hair', 'desk@acme.test');
    // Wednesday: Bo's day (the first test fills Ana's Tuesday).
    const wednesday = '2026-11-25';
    const form = joForm({ staff_id: acme.bo, from_date: wednesday, to_date: wednesday });
    expect((await desk.post('/console/waitlist', form)).statusCode).toBe(303);
    // Jo books an afternoon cut with Bo herself: her entry ends, booked.
    const free = await t.request({
      method: 'GET',
      url: `/v1/locations/soho/availability?service_ids=${acme.cut}&date=${wednesday}&staff_id=${acme.bo}`,
    });
    const afternoon = (free.json().data.slots as { starts_at: string }[])
      .map((slot) => slot.starts_at)
      .find((start) => start >= `${wednesday}T12`);
    expect(afternoon, free.body).toBeDefined();
    const booked = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'soho',
        service_ids: [acme.cut],
        staff_id: acme.bo,
        client_id: acme.jo,
        starts_at: afternoon,
      },
    });
    expect(booked.statusCode, booked.body).toBe(201);
    const reference = booked.json().data.reference as string;
    const page = await waitlistPage(desk, 'location=soho&status=all');
    const [jo] = tableRows(page);
    expect(jo![6]).toBe(`Booked | ${reference}`);
    expect(page).toContain(`<a href="/console/bookings/${reference}">${reference}</a>`);
    // Bo's Wednesday free again for the other tests.
    await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: {} });
  });

  it('lists the entries of a location taken out of the catalogue, as REST’s waitlist does', async () => {
    const desk = await signIn('acme-hair', 'desk@acme.test');
    expect((await desk.post('/console/waitlist', joForm())).statusCode).toBe(303);
    const catalogue = smallCatalogue();
    catalogue.locations[0]!.active = false;
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    try {
      const page = await waitlistPage(desk);
      expect(page).toContain('<h1>Waitlist – Soho</h1>');
      expect(tableRows(page)).toHaveLength(1);
      expect(page).toContain('Jo Bloggs');
      // Shown again with another status, it is still Soho's list.
      expect(page).toContain('<option value="soho" selected>Soho</option>');
      expectNamedControls(page);
      const rest = await t.request({ method: 'GET', url: '/v1/waitlist?location_slug=soho' });
      expect(rest.statusCode, rest.body).toBe(200);
    } finally {
      await importCatalogue(t.database.db, smallCatalogue(), t.clock.nowMs());
    }
  });
});
