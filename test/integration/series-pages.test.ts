import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { nightBarberCatalogue } from '../helpers/catalogue-fixtures.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import {
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
 * A recurring series booked on the public page and at the console's desk (design.md 9.5), through the
 * real pages (inject). The demo catalogue: Amara Okafor does Cuts at Camden, Monday to Friday; Jo
 * Bloggs is on file at +447911123456. Monday 23 November 2026, 09:00 in London.
 */
const NOW = '2026-11-23T09:00:00Z';
const ORG = 'northside-hair';
const PASSWORD = 'correct horse battery staple';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function series(seriesId: string) {
  const listed = await t.request({ method: 'GET', url: `/v1/bookings?series_id=${seriesId}` });
  expect(listed.statusCode, listed.body).toBe(200);
  return listed.json().data as { reference: string; status: string; starts_at: string; client_id: string }[];
}

async function rest(reference: string) {
  return (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data;
}

/**
 * northside-hair's public page (the demo catalogue unless told), and `bookRosa`, which sends its form
 * for Rosa Parks' Cut at Camden on Wednesday 25 November at 14:00, every two weeks, `count` visits.
 */
async function onThePage(catalogue: unknown = demoCatalogue()) {
  t = await startTestApp({ catalogues: [catalogue], now: NOW });
  const ids = await catalogueIds(t.database.db);
  const bookRosa = (count: string, visit: { service?: string; startsAt?: string } = {}) =>
    pagePost(t, `/p/${ORG}/book`, {
      location: 'camden',
      services: ids.services[visit.service ?? 'cut']!,
      starts_at: visit.startsAt ?? '2026-11-25T14:00:00Z',
      first_name: 'Rosa',
      last_name: 'Parks',
      email: 'rosa@example.com',
      repeat_every_weeks: '2',
      repeat_count: count,
    });
  /** Rosa's series of three booked and its code typed: its first visit's page and reference. */
  const provenRosa = async (visit: { service?: string; startsAt?: string } = {}) => {
    const path = pagePathOf(await bookRosa('3', visit));
    const reference = await referenceOnPage(t, path);
    const { code } = await deliveredCode(t, reference);
    expect((await pagePost(t, `${path}/verify`, { code })).statusCode).toBe(303);
    return { path, reference };
  };
  return { ids, bookRosa, provenRosa };
}

/** A Cut at Camden booked for Jo with `staff` at `startsAt`: that stylist is taken then. */
async function takeCamdenCut(
  ids: Awaited<ReturnType<typeof catalogueIds>>,
  staff: 'amara' | 'ben',
  startsAt: string,
) {
  const taken = await t.request({
    method: 'POST',
    url: '/v1/bookings',
    payload: {
      location_slug: 'camden',
      service_ids: [ids.services.cut],
      staff_id: ids.staff[staff],
      client_id: ids.jo,
      starts_at: startsAt,
    },
  });
  expect(taken.statusCode, taken.body).toBe(201);
}

describe('a series on the public page', () => {
  it('offers the repeat, holds every visit until the first one’s code is typed, then confirms them all', async () => {
    const { ids } = await onThePage();
    const form = await pageGet(t, `/p/${ORG}?location=camden&services=${ids.services.cut}&date=2026-11-25`);
    expect(form.body).toContain('<select id="repeat_every_weeks" name="repeat_every_weeks">');
    expect(form.body).toContain('<label for="repeat_count">');

    const booked = await pagePost(t, `/p/${ORG}/book`, {
      location: 'camden',
      services: ids.services.cut!,
      starts_at: '2026-11-25T14:00:00Z',
      first_name: 'Mallory',
      last_name: 'Stranger',
      phone: '07911 123456',
      repeat_every_weeks: '2',
      repeat_count: '3',
    });
    const path = pagePathOf(booked);
    const reference = await referenceOnPage(t, path);
    const first = await rest(reference);
    const visits = await series(first.series_id);
    expect(visits.map((v) => v.starts_at)).toEqual([
      '2026-11-25T14:00:00+00:00',
      '2026-12-09T14:00:00+00:00',
      '2026-12-23T14:00:00+00:00',
    ]);
    expect(visits.every((v) => v.status === 'pending_confirmation')).toBe(true);
    // One code for the series, to the number typed, and nothing else to anyone.
    for (const visit of visits.slice(1)) expect(await messagesOf(t, visit.reference)).toEqual([]);
    const { code } = await deliveredCode(t, reference);
    const right = await pagePost(t, `${path}/verify`, { code });
    expect(right.statusCode, right.body).toBe(303);

    const proven = await series(first.series_id);
    expect(proven.map((v) => v.status)).toEqual(['confirmed', 'confirmed', 'confirmed']);
    // All of them Jo's now (her phone was proven); her unproven record is gone.
    expect(new Set(proven.map((v) => v.client_id))).toEqual(new Set([ids.jo]));
    const records = await t.database.db
      .selectFrom('clients')
      .select('id')
      .where('phone', '=', '+447911123456')
      .execute();
    expect(records).toEqual([{ id: ids.jo }]);
    // The first visit confirms; the later ones only remind.
    const kinds = async (ref: string) => (await messagesOf(t, ref)).map((m) => m.kind).sort();
    expect(await kinds(reference)).toContain('confirmed');
    for (const visit of proven.slice(1))
      expect(await kinds(visit.reference)).toEqual(['reminder', 'reminder']);
    // Its confirmation names the visits booked with it.
    await deliver(t);
    const confirmation = (await messagesOf(t, reference)).find((m) => m.kind === 'confirmed');
    expect(JSON.parse(confirmation!.body!).text).toContain(
      'Also booked: the 2 visits after it, every 2 weeks, the last on Wednesday 23 December.',
    );
  });

  it('says in its confirmation which later visits are with another stylist than the first', async () => {
    const { ids, provenRosa } = await onThePage();
    // Camden on Tuesdays: Amara and Ben. Amara is taken at the first visit's time, Ben at the second's.
    await takeCamdenCut(ids, 'amara', '2026-11-24T14:00:00Z');
    await takeCamdenCut(ids, 'ben', '2026-12-08T14:00:00Z');
    const { reference } = await provenRosa({ startsAt: '2026-11-24T14:00:00Z' });
    await deliver(t);
    const confirmation = (await messagesOf(t, reference)).find((m) => m.kind === 'confirmed');
    const text = JSON.parse(confirmation!.body!).text as string;
    expect(text).toContain('Cut & blow-dry with Ben Carter on Tuesday 24 November');
    expect(text).toContain(
      'Also booked: the 2 visits after it, every 2 weeks, the last on Tuesday 22 December. One of them is with Amara Okafor.',
    );
  });

  it('names the visits its code confirms in the code’s message, and those it still does in a code sent again', async () => {
    const { ids, bookRosa } = await onThePage();
    // Amara is taken at the second visit's time (Tuesday 8 December): Ben has it.
    await takeCamdenCut(ids, 'amara', '2026-12-08T14:00:00Z');
    const path = pagePathOf(await bookRosa('3', { startsAt: '2026-11-24T14:00:00Z' }));
    const reference = await referenceOnPage(t, path);
    const held =
      'And the 2 visits after it, every 2 weeks, the last on Tuesday 22 December. One of them is with Ben Carter.';
    const sent = await deliveredCode(t, reference);
    expect(sent.words).toContain('To confirm: Cut & blow-dry with Amara Okafor on Tuesday 24 November');
    expect(sent.words).toContain(held);
    // The last visit cancelled meanwhile: a code sent again names the one it still confirms, and
    // the code it carries is the one that confirms them.
    const first = await rest(reference);
    const last = (await series(first.series_id))[2]!;
    const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${last.reference}/cancel` });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect((await pagePost(t, `${path}/resend`)).statusCode).toBe(303);
    const again = await deliveredCode(t, reference);
    expect(again.code === sent.code && again.linkPath === sent.linkPath).toBe(false);
    expect(again.words).toContain('And the visit after it, on Tuesday 8 December. It is with Ben Carter.');
    expect((await pagePost(t, `${path}/verify`, { code: again.code })).statusCode).toBe(303);
    expect((await series(first.series_id)).map((v) => v.status)).toEqual([
      'confirmed',
      'confirmed',
      'cancelled',
    ]);
  });

  it('lists every visit of the series on each visit’s page, with a link to its own page', async () => {
    const { bookRosa } = await onThePage();
    const path = pagePathOf(await bookRosa('3'));
    const reference = await referenceOnPage(t, path);
    const visits = await series((await rest(reference)).series_id);
    const pages = await Promise.all(
      visits.map(async (v) => new URL((await rest(v.reference)).booking_page_url).pathname),
    );
    expect(pages[0]).toBe(path);
    const shown = (await pageGet(t, path)).body;
    expect(shown).toContain('Your visits in this series');
    for (const [i, visit] of visits.entries())
      expect(shown).toContain(i === 0 ? ': this page' : visit.reference);
    // The later visits are reached from the first one's page, and lead back to it.
    const link = (to: string, when: string) => `<a href="${to}"><time datetime="${when}">`;
    expect(shown).toContain(link(pages[1]!, '2026-12-09T14:00:00Z'));
    expect(shown).toContain(link(pages[2]!, '2026-12-23T14:00:00Z'));
    expect((await pageGet(t, pages[1]!)).body).toContain(link(path, '2026-11-25T14:00:00Z'));
    // A booking of no series shows no list.
    const single = pagePathOf(
      await pagePost(t, `/p/${ORG}/book`, {
        location: 'camden',
        services: (await catalogueIds(t.database.db)).services.cut!,
        starts_at: '2026-11-26T14:00:00Z',
        first_name: 'Rosa',
        last_name: 'Parks',
        email: 'rosa@example.com',
      }),
    );
    expect((await pageGet(t, single)).body).not.toContain('Your visits in this series');
  });

  it('takes the series’ one code on a later visit’s page too, and sends a new one from there', async () => {
    const { bookRosa } = await onThePage();
    const path = pagePathOf(await bookRosa('3'));
    const reference = await referenceOnPage(t, path);
    const visits = await series((await rest(reference)).series_id);
    const later = new URL((await rest(visits[1]!.reference)).booking_page_url).pathname;
    // The later visit's page asks for the code, and says where it went.
    expect((await pageGet(t, later)).body).toContain('We sent a 6-digit code by e-mail to r…@example.com.');
    const resent = await pagePost(t, `${later}/resend`);
    expect(resent.statusCode, resent.body).toBe(303);
    expect(resent.headers.location).toBe(`${later}?sent=1`);
    // The new code is the series' (sent for its first visit), and typed on the later page it confirms all.
    const { code } = await deliveredCode(t, reference);
    const typed = await pagePost(t, `${later}/verify`, { code });
    expect(typed.statusCode, typed.body).toBe(303);
    expect(typed.headers.location).toBe(later);
    expect((await series((await rest(reference)).series_id)).map((v) => v.status)).toEqual([
      'confirmed',
      'confirmed',
      'confirmed',
    ]);
  });

  it('cancels the later visits waiting for the code with the first one, and says so first', async () => {
    const { bookRosa } = await onThePage();
    const path = pagePathOf(await bookRosa('3'));
    const reference = await referenceOnPage(t, path);
    const seriesId = (await rest(reference)).series_id;
    const asked = await pageGet(t, `${path}/cancel`);
    expect(asked.body).toContain(
      'The 2 later visits booked with it wait for the same code and are cancelled too: <time datetime="2026-12-09T14:00:00Z">Wednesday, 9 December 2026 at 14:00 London time</time>; <time datetime="2026-12-23T14:00:00Z">Wednesday, 23 December 2026 at 14:00 London time</time>.',
    );
    expect((await pagePost(t, `${path}/cancel`)).statusCode).toBe(303);
    expect((await series(seriesId)).map((v) => v.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    // Nothing of the series holds a place among the contact's holds: two more series may wait for codes.
    expect(pagePathOf(await bookRosa('2', { startsAt: '2026-11-26T14:00:00Z' }))).toMatch(/\/p\/manage\//);
    expect(pagePathOf(await bookRosa('2', { startsAt: '2026-11-27T14:00:00Z' }))).toMatch(/\/p\/manage\//);
  });

  it('counts a series among the contact’s unconfirmed holds while any of its visits is one', async () => {
    const { bookRosa } = await onThePage();
    const path = pagePathOf(await bookRosa('3'));
    const reference = await referenceOnPage(t, path);
    // Its first visit cancelled by the salon alone (REST): the later two still hold their times.
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: {},
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(pagePathOf(await bookRosa('2', { startsAt: '2026-11-26T14:00:00Z' }))).toMatch(/\/p\/manage\//);
    // Two series wait for codes: a third is refused, as with its first visit live.
    const third = await bookRosa('2', { startsAt: '2026-11-27T14:00:00Z' });
    expect(third.statusCode).toBe(429);
  });

  it('says, once a visit is confirmed, that the later visits still held wait to be finished on their own pages', async () => {
    const { provenRosa } = await onThePage();
    const { path, reference } = await provenRosa({ service: 'colour' });
    const pay = await pagePost(t, `${path}/pay`);
    const checkout = new URL(String(pay.headers.location)).pathname;
    expect((await pagePost(t, `${checkout}/pay`)).statusCode).toBe(303);
    expect((await rest(reference)).status).toBe('confirmed');
    const shown = (await pageGet(t, path)).body;
    expect(shown).toContain('<h1>Booking confirmed</h1>');
    expect(shown).toContain(
      '<p class="notice">The 2 other visits held for you are not booked yet: open each one below to finish it, or it is released.</p>',
    );
    // Once every visit is finished, nothing more is asked.
    for (const visit of (await series((await rest(reference)).series_id)).slice(1)) {
      const page = new URL((await rest(visit.reference)).booking_page_url).pathname;
      const next = await pagePost(t, `${page}/pay`);
      expect((await pagePost(t, `${new URL(String(next.headers.location)).pathname}/pay`)).statusCode).toBe(
        303,
      );
    }
    expect((await pageGet(t, path)).body).not.toContain('not booked yet');
  });

  it('says which visit of a series is not free and the free times that day, as its refusal promises', async () => {
    const { ids, bookRosa } = await onThePage();
    // 14:00 on Wednesday 9 December, the series' second visit, taken with every stylist there.
    for (let taken = 201; taken === 201; ) {
      const booked = await t.request({
        method: 'POST',
        url: '/v1/bookings',
        payload: {
          location_slug: 'camden',
          service_ids: [ids.services.cut],
          client_id: ids.jo,
          starts_at: '2026-12-09T14:00:00Z',
        },
      });
      taken = booked.statusCode;
    }
    const refused = await bookRosa('3');
    expect(refused.statusCode).toBe(409);
    const alert = /<p [^>]*role="alert"[^>]*>([^<]*)<\/p>/.exec(refused.body)![1]!;
    expect(alert).toMatch(
      /^Nothing was booked: this visit of the series is not free at that time: Wednesday 9 December \(free that day: \d\d:\d\d(, \d\d:\d\d)* or \d\d:\d\d\)\. Your details are kept below/,
    );
    expect(alert).not.toContain('Each clash lists');
  });

  it('refuses a repeat out of bounds with the field named', async () => {
    const { bookRosa } = await onThePage();
    const refused = await bookRosa('40');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Online, a series has 2 to 6 visits. Call the salon for more.');
    expect(await t.database.db.selectFrom('bookings').select('id').execute()).toEqual([]);
    // The form comes back as it was sent, the repeat included.
    expect(refused.body).toContain('value="Rosa"');
    expect(refused.body).toContain('<option value="2" selected>Every 2 weeks</option>');
    expect(refused.body).not.toContain('<option value="" selected>');
    expect(refused.body).toMatch(/<input id="repeat_count" name="repeat_count" [^>]*value="40"/);
    // Said beside the field it is about, which it describes, and said once.
    expect(refused.body).toContain(
      '<p id="repeat_count-error" role="alert" class="fee">Online, a series has 2 to 6 visits. Call the salon for more. Your details are kept below.</p>',
    );
    expect(refused.body).toMatch(
      /<input id="repeat_count" [^>]* aria-invalid="true" aria-describedby="repeat_count-error" autofocus>/,
    );
    expect(refused.body.match(/role="alert"/g)).toHaveLength(1);
  });

  it('says the number of visits a series may have online alike in the label, the field and a refusal', async () => {
    const { ids, bookRosa } = await onThePage();
    const form = await pageGet(t, `/p/${ORG}?location=camden&services=${ids.services.cut}&date=2026-11-25`);
    expect(form.body).toContain(
      '<label for="repeat_count">Visits in all, this one included (2 to 6)</label>',
    );
    expect(form.body).toMatch(/<input id="repeat_count" name="repeat_count" type="number" min="2" max="6" /);
    const refusal = async (count: string) => {
      const refused = await bookRosa(count);
      expect(refused.statusCode).toBe(400);
      // The field comes back with the same label and bounds.
      expect(refused.body).toContain('(2 to 6)</label>');
      expect(refused.body).toMatch(/<input id="repeat_count" [^>]*min="2" max="6" /);
      return /<p id="repeat_count-error" role="alert" class="fee">([^<]*)<\/p>/.exec(refused.body)?.[1];
    };
    // Left empty, too few, or more than the page books (the console books up to 26): the same range.
    const kept = ' Your details are kept below.';
    expect(await refusal('')).toBe(`Online, a series has 2 to 6 visits.${kept}`);
    expect(await refusal('1')).toBe(`Online, a series has 2 to 6 visits.${kept}`);
    expect(await refusal('7')).toBe(`Online, a series has 2 to 6 visits. Call the salon for more.${kept}`);
    expect(await refusal('40')).toBe(`Online, a series has 2 to 6 visits. Call the salon for more.${kept}`);
    expect(await t.database.db.selectFrom('bookings').select('id').execute()).toEqual([]);
  });

  it('says a repeat refused where no series is booked online at the top: no repeat field to be beside', async () => {
    const catalogue = demoCatalogue() as { policies?: unknown };
    catalogue.policies = { public_verification: 'none' };
    const { bookRosa } = await onThePage(catalogue);
    const refused = await bookRosa('3');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).not.toContain('name="repeat_every_weeks"');
    expect(refused.body).toContain(
      '<p role="alert" class="fee">Repeat bookings are made by phone or at the salon. Your details are kept below.</p>',
    );
  });
});

/**
 * A desk user signed in to acme-hair's console, its Book form for a Cut at Soho on Monday 30 November,
 * and `book`, which sends that form for Wal Kin in its first slot with the repeat given.
 */
async function atTheDesk() {
  t = await startTestApp({ now: NOW });
  await createUser(
    t.database.db,
    { organisationSlug: 'acme-hair', email: 'desk@acme.test', role: 'staff', password: PASSWORD },
    t.clock.nowMs(),
  );
  const me = await signInToConsole(t, 'acme-hair', 'desk@acme.test', PASSWORD);
  const ids = await catalogueIds(t.database.db);
  const form = await me.get(`/console/book?location=soho&date=2026-11-30&service_id=${ids.services.cut}`);
  const slot = /<option value="([^"]+\|[^"]+)">/.exec(form.body)![1]!;
  const book = (repeat: { repeat_every_weeks: string; repeat_count: string }) =>
    me.post('/console/book', {
      location: 'soho',
      service_id: [ids.services.cut!],
      slot,
      first_name: 'Wal',
      last_name: 'Kin',
      phone: '+44 7911 223366',
      ...repeat,
    });
  return { form, book, me };
}

describe('a series at the console’s desk', () => {
  it('books every visit with the stylist of the slot chosen', async () => {
    const { form, book } = await atTheDesk();
    expect(form.body).toContain('name="repeat_every_weeks"');
    const booked = await book({ repeat_every_weeks: '1', repeat_count: '4' });
    expect(booked.statusCode, booked.body).toBe(303);
    const reference = decodeURIComponent(/bookings\/([^?]+)/.exec(booked.headers.location as string)![1]!);
    const visits = await series((await rest(reference)).series_id);
    expect(visits).toHaveLength(4);
    expect(visits.every((v) => v.status === 'confirmed')).toBe(true);
    expect(new Set(visits.map((v) => (v as unknown as { staff_id: string }).staff_id)).size).toBe(1);
  });

  it('lists the free times of a visit the series took beyond max_advance_days, to move it', async () => {
    const { book, me } = await atTheDesk();
    // Every 12 weeks from Monday 30 November: the third visit, 17 May 2027, lies beyond the 60 days.
    const booked = await book({ repeat_every_weeks: '12', repeat_count: '3' });
    expect(booked.statusCode, booked.body).toBe(303);
    const reference = decodeURIComponent(/bookings\/([^?]+)/.exec(booked.headers.location as string)![1]!);
    const last = (await series((await rest(reference)).series_id)).at(-1)!;
    expect(last.starts_at.slice(0, 10)).toBe('2027-05-17');
    const page = await me.get(`/console/bookings/${last.reference}/reschedule`);
    expect(page.statusCode).toBe(200);
    // Its own day's other free times, each a button that moves it there, as the API would.
    expect(page.body).toContain(`action="/console/bookings/${last.reference}/reschedule" class="inline"`);
    expect(page.body).toContain('name="starts_at" value="2027-05-17T');
  });

  it('gives a refused form back with its repeat as chosen, like every other field', async () => {
    const { book } = await atTheDesk();
    const refused = await book({ repeat_every_weeks: '3', repeat_count: '40' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('A series has 2 to 26 visits.');
    expect(refused.body).toContain('value="Wal"');
    expect(refused.body).toContain('<option value="3" selected>Every 3 weeks</option>');
    expect(refused.body).not.toContain('<option value="" selected>');
    expect(refused.body).toMatch(/<input id="repeat_count" name="repeat_count" [^>]*value="40"/);
    expect(await t.database.db.selectFrom('bookings').select('id').execute()).toEqual([]);
    // Said beside the field, in the console's style, which it describes; not again above the form.
    expect(refused.body).toContain(
      '<p id="repeat_count-error" role="alert" class="error">A series has 2 to 26 visits.</p>',
    );
    expect(refused.body).toMatch(
      /<input id="repeat_count" [^>]* aria-invalid="true" aria-describedby="repeat_count-error" autofocus>/,
    );
    expect(refused.body.match(/role="alert"/g)).toHaveLength(1);
  });
});

describe('a series on the public page across the night the clocks go back', () => {
  it('tells apart the free times the clocks show twice when a visit is not free', async () => {
    // Night Cuts: Kit trims on Sunday nights from midnight in London. On Sunday 31 October 2027 the
    // clocks go back at 02:00 BST to 01:00 GMT, so 01:00 to 02:00 happens twice.
    const catalogue = nightBarberCatalogue({
      sundayUntil: '06:00',
      clients: [{ ref: 'sam', first_name: 'Sam', last_name: 'Lee', phone: '+447911123456' }],
    });
    t = await startTestApp({ catalogues: [catalogue], now: '2027-10-20T09:00:00Z' });
    const db = t.database.db;
    const service = (await db.selectFrom('services').select('id').executeTakeFirstOrThrow()).id;
    const client = (await db.selectFrom('clients').select('id').executeTakeFirstOrThrow()).id;
    // The series' second visit, 01:30 BST on 31 October, is taken.
    const taken = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'soho',
        service_ids: [service],
        client_id: client,
        starts_at: '2027-10-31T01:30:00+01:00',
      },
    });
    expect(taken.statusCode, taken.body).toBe(201);
    const refused = await pagePost(t, '/p/night-cuts/book', {
      location: 'soho',
      services: service,
      starts_at: '2027-10-24T01:30:00+01:00',
      first_name: 'Rosa',
      last_name: 'Parks',
      email: 'rosa@example.com',
      repeat_every_weeks: '1',
      repeat_count: '2',
    });
    expect(refused.statusCode, refused.body).toBe(409);
    const alert = /<p [^>]*role="alert"[^>]*>([^<]*)<\/p>/.exec(refused.body)![1]!;
    // The free times nearest 01:30 BST, the two 01:00s told apart.
    expect(alert).toContain('Sunday 31 October (free that day: 00:30, 01:00 BST or 01:00 GMT)');
  });
});

describe('a series on the public page across the night the clocks go forward', () => {
  it('says a visit whose time the clocks skip does not exist, with the free times nearest it', async () => {
    // Night Cuts, London: on Sunday 28 March 2027 the clocks go from 01:00 GMT to 02:00 BST.
    const catalogue = nightBarberCatalogue({ sundayUntil: '06:00' });
    t = await startTestApp({ catalogues: [catalogue], now: '2027-03-15T09:00:00Z' });
    const service = (await t.database.db.selectFrom('services').select('id').executeTakeFirstOrThrow()).id;
    const refused = await pagePost(t, '/p/night-cuts/book', {
      location: 'soho',
      services: service,
      starts_at: '2027-03-21T01:30:00+00:00',
      first_name: 'Rosa',
      last_name: 'Parks',
      email: 'rosa@example.com',
      repeat_every_weeks: '1',
      repeat_count: '2',
    });
    expect(refused.statusCode, refused.body).toBe(409);
    const alert = /<p [^>]*role="alert"[^>]*>([^<]*)<\/p>/.exec(refused.body)![1]!;
    expect(alert).toContain(
      'Sunday 28 March (that time does not exist that night: the clocks go forward over it; free nearest it: 00:30, 02:00 or 02:30)',
    );
  });
});
