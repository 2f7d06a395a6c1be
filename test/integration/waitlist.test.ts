import { afterEach, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { customerLinks } from '../../src/app/customer-links.ts';
import { deliverAllDue } from '../../src/app/outbox-delivery.ts';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { declineOffer } from '../../src/app/waitlist/claims.ts';
import { offerFreedTimes } from '../../src/app/waitlist/offers.ts';
import { deliverAllDueWebhooks } from '../../src/app/webhooks/delivery.ts';
import { httpSender } from '../../src/app/webhooks/sender.ts';
import { catalogueIds, countClients } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import {
  anaTuesdayStarts,
  bookAna,
  bookAnaOnTuesday,
  bookingPagePathOf,
  joinForAna,
  joinWaitlist,
  TUESDAY,
  waitlistPass,
} from '../helpers/waitlist-fixtures.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * The waitlist through its real interfaces (design.md 9.4): REST to join, read and leave; the worker's
 * pass (what `booking serve` runs every 250 ms) on an injected clock; the booking page to claim, let go
 * or leave. The small catalogue; Monday 23 November 2026, 09:00 in London. Ana does Cuts at Soho on
 * Tuesdays 09:00-17:00 (45 minutes and 15 of buffer: an hour each).
 */
const NOW = '2026-11-23T09:00:00Z';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' };

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const json = (response: { body: string }) => JSON.parse(response.body);

/** Joins the waitlist at Soho for a cut, with `fields` over those: 201, the entry. */
const joinWith = (fields: Record<string, unknown>) => joinWaitlist(t, fields);

/**
 * Jo waits for a colour with anyone on Tuesday, and books one with Ana at 14:00: held (pending_payment)
 * until its deposit is paid, her entry still waiting. The entry and the booking.
 */
async function joHoldsTheColourSheWaitsFor(ids: Awaited<ReturnType<typeof catalogueIds>>) {
  const colour = await joinWith({
    client_id: ids.jo,
    service_ids: [ids.services.colour],
    from_date: TUESDAY,
    to_date: TUESDAY,
  });
  const held = await t.request({
    method: 'POST',
    url: '/v1/bookings',
    payload: {
      location_slug: 'soho',
      service_ids: [ids.services.colour],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: `${TUESDAY}T14:00:00Z`,
    },
  });
  const booking = json(held).data;
  expect(booking.status, held.body).toBe('pending_payment');
  expect(await entry(colour.id)).toMatchObject({ status: 'waiting' });
  return { colour, booking };
}

/** `name` joins for Ana on Tuesday, in the afternoon unless told. */
const join = (name: string, times = ['afternoon']) => joinForAna(t, name, { times });

/** Ana's Tuesday afternoon, every hour from 12:00 to 16:00, booked for Jo. */
const fillTuesdayAfternoon = () => bookAnaOnTuesday(t, ['12', '13', '14', '15', '16']);
const pass = () => waitlistPass(t);
const pageOf = (reference: string) => bookingPagePathOf(t, reference);
const tuesdayStarts = () => anaTuesdayStarts(t);

/**
 * Dee waits for a colour (90 minutes, a £20 deposit) on Ana's full Tuesday; two hours free up and the
 * worker offers her 13:00: her entry's id and its offer. `policy` is Soho's (the defaults otherwise);
 * `now`, when all this happens (Monday 09:00 unless said).
 */
async function deeOfferedColour(policy?: Record<string, unknown>, now = NOW) {
  const catalogue = smallCatalogue();
  if (policy) (catalogue.locations[0] as Record<string, unknown>).policy = policy;
  t = await startTestApp({ catalogues: [catalogue], now });
  const booked = await bookAnaOnTuesday(t, ['09', '10', '11', '12', '13', '14', '15', '16']);
  const ids = await catalogueIds(t.database.db);
  const { id } = await joinWith({
    service_ids: [ids.services.colour],
    client: { first_name: 'Dee', last_name: 'Posit', email: 'dee@example.com' },
    from_date: TUESDAY,
    to_date: TUESDAY,
  });
  for (const hour of ['13', '14']) {
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get(hour)}/cancel` });
  }
  const offered = await offerFreedTimes({
    db: t.database.db,
    clock: t.clock,
    payments: localCheckout,
    publicBaseUrl: 'http://localhost',
  });
  expect(offered).toBe(1);
  const { offer } = await entry(id);
  return { id, offer };
}

/** Bea, a client of her own (another caller, whose bookings take Ana's times). */
async function addBea(): Promise<string> {
  const response = await t.request({
    method: 'POST',
    url: '/v1/clients',
    payload: { first_name: 'Bea', last_name: 'Other', email: 'bea@example.com' },
  });
  return json(response).data.id as string;
}

const entry = async (id: string) => json(await t.request({ method: 'GET', url: `/v1/waitlist/${id}` })).data;

/**
 * Starts the app (Monday 09:00) with a webhook receiver subscribed to `events`, runs `work` with it and
 * the sender that delivers to it, and stops both after.
 */
async function withWaitlistReceiver(
  events: string[],
  work: (
    receiver: Awaited<ReturnType<typeof startWebhookReceiver>>,
    sender: ReturnType<typeof httpSender>,
  ) => Promise<void>,
): Promise<void> {
  const destinations = { allowInsecure: true, allowPrivateNetworks: false };
  t = await startTestApp({ now: NOW, webhookDestinations: destinations });
  const receiver = await startWebhookReceiver({ nowSeconds: () => Math.floor(t.clock.nowMs() / 1000) });
  const sender = httpSender(destinations, 2_000);
  try {
    const subscribed = await t.request({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      payload: { url: receiver.url, events },
    });
    receiver.state.secret = json(subscribed).data.secret;
    await work(receiver, sender);
  } finally {
    sender.close();
    await receiver.close();
  }
}

describe('the waitlist', () => {
  it('offers a cancelled time to the first entry, holds it, passes it on when it lapses, and books the claim once', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesdayAfternoon();
    const first = await join('Ada');
    const second = await join('Bea');
    expect(first).toMatchObject({ status: 'waiting', offer: null, times: ['afternoon'] });
    expect(await pass()).toBe(0);

    const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel` });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(await pass()).toBe(1);
    const offered = await entry(first.id);
    expect(offered.offer).toMatchObject({
      starts_at: `${TUESDAY}T14:00:00+00:00`,
      expires_at: '2026-11-23T09:15:00Z',
    });
    expect((await entry(second.id)).offer).toBeNull();
    // Held: nobody else is offered it or can book it.
    expect((await tuesdayStarts()).filter((s) => s.startsWith(`${TUESDAY}T14`))).toEqual([]);
    const ids = await catalogueIds(t.database.db);
    expect((await bookAna(t, `${TUESDAY}T14:00:00+00:00`, ids.jo)).statusCode).toBe(409);
    const held = json(
      await t.request({ method: 'GET', url: `/v1/bookings/${offered.offer.booking_reference}` }),
    );
    expect(held.data).toMatchObject({
      status: 'pending_confirmation',
      pending_confirmation: { requirements: ['waitlist_claim'] },
    });

    // Ada lets it lapse: it goes to Bea.
    t.clock.advance({ minutes: 16 });
    expect(await pass()).toBe(1);
    expect((await entry(first.id)).offer).toBeNull();
    const bea = await entry(second.id);
    expect(bea.offer).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });

    // Bea claims it from the link, twice at once: one booking, confirmed once.
    const page = await pageOf(bea.offer.booking_reference);
    const shown = await t.app.inject({ method: 'GET', url: page });
    expect(shown.body).toContain('A time has freed up for you');
    const claims = await Promise.all([
      t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM }),
      t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM }),
    ]);
    // Both land on the booking's page; the second found the claim made.
    expect(claims.map((c) => c.statusCode)).toEqual([303, 303]);
    const claimed = json(
      await t.request({ method: 'GET', url: `/v1/bookings/${bea.offer.booking_reference}` }),
    );
    expect(claimed.data.status).toBe('confirmed');
    expect(await entry(second.id)).toMatchObject({ status: 'booked', offer: null });
    const confirmations = await t.database.db
      .selectFrom('booking_events as e')
      .innerJoin('bookings as b', 'b.id', 'e.booking_id')
      .select('e.seq')
      .where('e.to_status', '=', 'confirmed')
      .where('b.reference', '=', bea.offer.booking_reference)
      .execute();
    expect(confirmations).toHaveLength(1);
    // Ada is still waiting, for another time.
    expect(await entry(first.id)).toMatchObject({ status: 'waiting', offer: null });
    expect(await pass()).toBe(0);
  });

  it('passes over an entry no message can reach any more (a number abroad, no e-mail): the time goes to the next', async () => {
    const texting = (countries: string[]) => {
      return Object.assign(smallCatalogue(), { policies: { sms_countries: countries } });
    };
    t = await startTestApp({ now: NOW, catalogues: [texting(['FR'])] });
    const booked = await fillTuesdayAfternoon();
    const ids = await catalogueIds(t.database.db);
    // A French mobile only, and no e-mail: she joins while the salon texts France too, and then it
    // stops (a new catalogue), leaving the London salon texting the United Kingdom only.
    const abroad = await joinWith({
      staff_id: ids.staff.ana,
      client: { first_name: 'Amelie', last_name: 'Roux', phone: '+33612345678' },
      from_date: TUESDAY,
      to_date: TUESDAY,
      times: ['afternoon'],
    });
    await importCatalogue(t.database.db, texting([]), t.clock.nowMs());
    const reachable = await join('Bea');
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel` });
    expect(await pass()).toBe(1);
    expect((await entry(abroad.id)).offer).toBeNull();
    const offered = await entry(reachable.id);
    expect(offered.offer).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });
    const messages = (await listOutbox(t.database.db, ids.organisation)).filter(
      (m) => m.reference === offered.offer.booking_reference,
    );
    expect(messages.map((m) => `${m.kind}:${m.channel}`)).toEqual(['booking_page_link:email']);
  });

  it('lets the customer decline an offer or leave from its link, and the time goes to the next entry', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesdayAfternoon();
    const first = await join('Ada');
    const second = await join('Bea');
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel` });
    await pass();
    const ada = await entry(first.id);
    const declined = await t.app.inject({
      method: 'POST',
      url: `${await pageOf(ada.offer.booking_reference)}/leave`,
      headers: FORM,
    });
    expect(declined.statusCode, declined.body).toBe(303);
    expect(await entry(first.id)).toMatchObject({ status: 'left', offer: null });
    await pass();
    const bea = await entry(second.id);
    expect(bea.offer).toMatchObject({ starts_at: `${TUESDAY}T15:00:00+00:00` });
    // Bea lets it go but stays: nobody else waits, and it is not offered to her again.
    const passed = await t.app.inject({
      method: 'POST',
      url: `${await pageOf(bea.offer.booking_reference)}/decline`,
      headers: FORM,
    });
    expect(passed.statusCode).toBe(303);
    await pass();
    expect(await entry(second.id)).toMatchObject({ status: 'waiting', offer: null });
    expect(await tuesdayStarts()).toContain(`${TUESDAY}T15:00:00+00:00`);
    // Leaving over REST.
    const left = await t.request({ method: 'DELETE', url: `/v1/waitlist/${second.id}` });
    expect(left.statusCode).toBe(204);
    expect((await t.request({ method: 'DELETE', url: `/v1/waitlist/${second.id}` })).statusCode).toBe(409);
    const listed = json(
      await t.request({ method: 'GET', url: '/v1/waitlist?location_slug=soho&status=left' }),
    );
    expect(listed.data.map((e: { id: string }) => e.id)).toEqual([first.id, second.id]);
  });

  it('answers a claim that a decline beat (both pressed at once) as too late, not as taken', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesdayAfternoon();
    const first = await join('Ada');
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel` });
    await pass();
    const ada = await entry(first.id);
    const page = await pageOf(ada.offer.booking_reference);
    const [declined, claimed] = await Promise.all([
      t.app.inject({ method: 'POST', url: `${page}/decline`, headers: FORM }),
      t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM }),
    ]);
    const status = json(
      await t.request({ method: 'GET', url: `/v1/bookings/${ada.offer.booking_reference}` }),
    ).data.status;
    // Whichever went first, the answers agree with what became of the time.
    if (status === 'expired') {
      expect(declined.statusCode).toBe(303);
      expect(claimed.statusCode, claimed.body).toBe(409);
      expect(claimed.body).toContain('This time is no longer held for you.');
    } else {
      expect(status).toBe('confirmed');
      expect(claimed.statusCode).toBe(303);
    }
  });

  it('neither cancels nor moves an offer not claimed yet from its page, and says nothing of a time never booked', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesdayAfternoon();
    const first = await join('Ada');
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel` });
    await pass();
    const reference = (await entry(first.id)).offer.booking_reference as string;
    const page = await pageOf(reference);
    // The page shows no such forms; hand-made requests for them are refused, as pages.
    const starts = `${TUESDAY}T16:00:00.000Z`;
    const refusals = [
      await t.app.inject({ method: 'GET', url: `${page}/cancel` }),
      await t.app.inject({ method: 'POST', url: `${page}/cancel`, headers: FORM }),
      await t.app.inject({ method: 'GET', url: `${page}/reschedule` }),
      await t.app.inject({ method: 'GET', url: `${page}/reschedule?starts_at=${starts}` }),
      await t.app.inject({
        method: 'POST',
        url: `${page}/reschedule`,
        headers: FORM,
        payload: `starts_at=${encodeURIComponent(starts)}`,
      }),
    ];
    for (const refused of refusals) {
      expect(refused.statusCode, refused.body).toBe(409);
      expect(refused.headers['content-type']).toMatch(/^text\/html/);
      expect(refused.body).toContain('This time is offered to you, not booked yet');
      expect(refused.body).not.toContain('Yes, cancel it');
    }
    const held = json(await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).data;
    expect(held).toMatchObject({
      status: 'pending_confirmation',
      starts_at: `${TUESDAY}T14:00:00+00:00`,
      pending_confirmation: { requirements: ['waitlist_claim'] },
    });
    const ids = await catalogueIds(t.database.db);
    const said = (await listOutbox(t.database.db, ids.organisation)).filter((m) => m.reference === reference);
    expect(said.map((m) => m.kind)).toEqual(['booking_page_link']);
    // Its own answers still work.
    const claimed = await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM });
    expect(claimed.statusCode).toBe(303);
    expect((await t.app.inject({ method: 'GET', url: `${page}/cancel` })).body).toContain('Yes, cancel it');
  });

  it('lets the desk withdraw an offer not claimed yet: never late, and nothing sent of a time never booked', async () => {
    const { id, offer } = await deeOfferedColour();
    // Soho now refuses late cancellations, and the offer starts in 28 hours: inside the window.
    const catalogue = smallCatalogue();
    const policy = { cancellation_window_hours: 48, late_cancellation: 'forbid' };
    Object.assign(catalogue.locations[0]!, { policy });
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    const reference = offer.booking_reference as string;
    const links = customerLinks(localCheckout, 'https://book.example');
    await deliverAllDue({ db: t.database.db, clock: t.clock, senders: { sms: null, email: null }, links });
    const preview = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: { dry_run: true },
    });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(json(preview).data.change).toMatchObject({ late: false, fee: null });
    const withdrawn = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel` });
    expect(withdrawn.statusCode, withdrawn.body).toBe(200);
    expect(json(withdrawn).data).toMatchObject({ status: 'cancelled', change: { late: false, fee: null } });
    const ids = await catalogueIds(t.database.db);
    const said = (await listOutbox(t.database.db, ids.organisation)).filter((m) => m.reference === reference);
    expect(said.map((m) => m.kind)).toEqual(['booking_page_link']);
    expect(await entry(id)).toMatchObject({ status: 'waiting', offer: null });
  });

  it('never offers an entry for anyone again the start it let go, with another staff member', async () => {
    // Bo works at Soho on Tuesdays 14:00-14:45 too: one start, 14:00, he and Ana can both do.
    const catalogue = smallCatalogue();
    const bo = catalogue.staff.find((member) => member.ref === 'bo')!;
    (bo.working_hours as Record<string, unknown>).soho = { tue: [['14:00', '14:45']] };
    t = await startTestApp({ now: NOW, catalogues: [catalogue] });
    const ids = await catalogueIds(t.database.db);
    const ana = await fillTuesdayAfternoon();
    const bos = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        staff_id: ids.staff.bo,
        client_id: ids.jo,
        starts_at: `${TUESDAY}T14:00:00Z`,
      },
    });
    expect(bos.statusCode, bos.body).toBe(201);
    const { id } = await joinWith({
      client: { first_name: 'Ada', last_name: 'Waiting', email: 'ada@example.com' },
      from_date: TUESDAY,
      to_date: TUESDAY,
      times: ['afternoon'],
    });

    await t.request({ method: 'POST', url: `/v1/bookings/${ana.get('14')}/cancel` });
    expect(await pass()).toBe(1);
    const offered = (await entry(id)).offer;
    expect(offered).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00`, staff_id: ids.staff.ana });
    const declined = await t.app.inject({
      method: 'POST',
      url: `${await pageOf(offered.booking_reference)}/decline`,
      headers: FORM,
    });
    expect(declined.statusCode).toBe(303);
    expect(await pass()).toBe(0);

    // Bo's 14:00 frees too: Tuesday 14:00 is the time Ada let go, whoever would do it.
    await t.request({ method: 'POST', url: `/v1/bookings/${json(bos).data.reference}/cancel` });
    expect(await pass()).toBe(0);
    expect(await entry(id)).toMatchObject({ status: 'waiting', offer: null });
  });

  it('offers a free time once its date comes within max_advance_days, though nothing freed it', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    // Bookable until 22 January (60 days); Ada waits for Tuesday 2 February, all free.
    const { id } = await joinWith({
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      from_date: '2027-02-02',
      to_date: '2027-02-02',
    });
    expect(await pass()).toBe(0);
    expect(await pass()).toBe(0);
    // On 4 December, 2 February is 60 days ahead: its first free time is Ada's.
    t.clock.set('2026-12-04T09:00:00Z');
    expect(await pass()).toBe(1);
    expect((await entry(id)).offer).toMatchObject({ starts_at: '2027-02-02T09:00:00+00:00' });
  });

  it('refuses what cannot be waited for, in the envelope, naming the field', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const base = {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      from_date: TUESDAY,
      to_date: TUESDAY,
    };
    const refusal = async (payload: Record<string, unknown>, key?: string) => {
      const answer = await t.request({ method: 'POST', url: '/v1/waitlist', payload, ...(key && { key }) });
      return { status: answer.statusCode, error: json(answer).error };
    };
    expect(await refusal({ ...base, to_date: '2026-11-20', from_date: '2026-11-20' })).toMatchObject({
      status: 400,
      error: { code: 'invalid_request', param: 'to_date' },
    });
    expect(await refusal({ ...base, from_date: '2026-11-26', to_date: '2026-11-25' })).toMatchObject({
      status: 400,
      error: { param: 'from_date' },
    });
    expect(
      await refusal({ ...base, staff_id: ids.staff.bo, service_ids: [ids.services.colour] }),
    ).toMatchObject({
      status: 400,
      error: { param: 'staff_id' },
    });
    expect(await refusal({ ...base, service_ids: [ids.services['patch-test']] })).toMatchObject({
      status: 400,
      error: { param: 'service_ids' },
    });
    expect(await refusal({ ...base, client_id: undefined })).toMatchObject({ status: 400 });
    // A new client's own field refused (a number no person's own, one with a digit missing) names
    // `client`, as its shape's refusals do, and says which field of it.
    const newClient = (phone: string) => ({
      ...base,
      client_id: undefined,
      client: { first_name: 'Ann', last_name: 'Lee', phone },
    });
    for (const [phone, said] of [
      ['+449098790879', 'client.phone is a premium-rate number, which we never send messages to'],
      ['+44740', 'client.phone is too short'],
    ] as const) {
      const refused = await refusal(newClient(phone));
      expect(refused, phone).toMatchObject({
        status: 400,
        error: { code: 'invalid_request', param: 'client' },
      });
      expect(refused.error.message).toContain(said);
    }
    expect(await refusal({ ...base, times: ['night'] })).toMatchObject({ status: 400 });
    expect(await refusal(base, t.keys.read)).toMatchObject({ status: 403 });
    const joined = await t.request({ method: 'POST', url: '/v1/waitlist', payload: base });
    expect(joined.statusCode).toBe(201);
    expect(await refusal(base)).toMatchObject({ status: 409, error: { code: 'conflict' } });
    expect((await t.request({ method: 'GET', url: '/v1/waitlist', key: t.keys.read })).statusCode).toBe(200);
    // An unknown location: 404 naming it, joining or listing, as the OpenAPI document says.
    expect(await refusal({ ...base, location_slug: 'nowhere' })).toMatchObject({
      status: 404,
      error: { code: 'not_found', param: 'location_slug' },
    });
    const unknown = await t.request({ method: 'GET', url: '/v1/waitlist?location_slug=nowhere' });
    expect(unknown.statusCode).toBe(404);
    expect(json(unknown).error).toMatchObject({ code: 'not_found', param: 'location_slug' });
  });

  it('refuses a client no offer could reach (no e-mail, a phone in a country not texted), leaving no client behind', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const base = {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      from_date: TUESDAY,
      to_date: TUESDAY,
    };
    const clients = () => countClients(t.database.db);
    const before = await clients();
    // The organisation texts the United Kingdom only (its locations' country).
    const american = { first_name: 'Sam', last_name: 'Ray', phone: '+14155552671' };
    const refused = await t.request({
      method: 'POST',
      url: '/v1/waitlist',
      payload: { ...base, client: american },
    });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(json(refused).error).toEqual({
      code: 'invalid_request',
      message:
        'An offer could not reach this client, who has no e-mail address and no phone we text (we text only numbers in the United Kingdom); give client.email too.',
      param: 'client',
    });
    expect(await clients()).toBe(before);

    // On file with that phone alone (POST /clients takes it: messages are another matter), by client_id.
    const onFile = await t.request({ method: 'POST', url: '/v1/clients', payload: american });
    expect(onFile.statusCode, onFile.body).toBe(201);
    const byId = await t.request({
      method: 'POST',
      url: '/v1/waitlist',
      payload: { ...base, client_id: json(onFile).data.id },
    });
    expect(byId.statusCode, byId.body).toBe(400);
    expect(json(byId).error).toMatchObject({
      param: 'client_id',
      message: expect.stringMatching(/^An offer could not reach this client, .*United Kingdom\)\.$/),
    });

    // Given again with an e-mail, that phone still finds the client on file, whose contacts stay as
    // they are: named, and no e-mail asked for (it would not be added).
    const again = await t.request({
      method: 'POST',
      url: '/v1/waitlist',
      payload: { ...base, client: { ...american, email: 'sam@example.com' } },
    });
    expect(again.statusCode, again.body).toBe(400);
    expect(json(again).error).toEqual({
      code: 'invalid_request',
      message: `An offer could not reach the client on file with that contact (${json(onFile).data.id}), who has no e-mail address and no phone we text (we text only numbers in the United Kingdom).`,
      param: 'client',
    });

    // With an e-mail, or a British mobile, an offer can reach them: they join.
    const withEmail = {
      first_name: 'Kim',
      last_name: 'Ray',
      phone: '+14155552672',
      email: 'kim@example.com',
    };
    for (const client of [withEmail, { first_name: 'Lou', last_name: 'Ray', phone: '07911 123456' }]) {
      const joined = await t.request({ method: 'POST', url: '/v1/waitlist', payload: { ...base, client } });
      expect(joined.statusCode, joined.body).toBe(201);
    }
  });

  it('refuses a wait for parts of today already over on the location’s clock, naming times', async () => {
    // Tuesday 24 November 2026, 18:00 in London (GMT): its morning and afternoon are over.
    t = await startTestApp({ now: `${TUESDAY}T18:00:00Z` });
    const ids = await catalogueIds(t.database.db);
    const base = {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      from_date: TUESDAY,
      to_date: TUESDAY,
    };
    const join = (fields: Record<string, unknown>) =>
      t.request({ method: 'POST', url: '/v1/waitlist', payload: { ...base, ...fields } });
    for (const [times, said] of [
      [['morning'], 'The morning of Tuesday 24 November is over'],
      [['afternoon', 'morning'], 'The morning and afternoon of Tuesday 24 November are over'],
    ] as const) {
      const refused = await join({ times });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(json(refused).error).toMatchObject({
        code: 'invalid_request',
        param: 'times',
        message: `${said}; choose a later part of the day or a later date.`,
      });
    }
    // A wait from earlier days, or tomorrow's morning too, is refused alike; the evening is still to come.
    expect((await join({ from_date: '2026-11-23', times: ['morning'] })).statusCode).toBe(400);
    expect((await join({ to_date: '2026-11-25', times: ['morning'] })).statusCode).toBe(201);
    t.clock.set(`${TUESDAY}T23:30:00Z`);
    expect(json(await join({ service_ids: [ids.services.colour], times: ['morning'] })).error).toMatchObject({
      param: 'times',
    });
    expect((await join({ service_ids: [ids.services.colour], times: ['evening'] })).statusCode).toBe(201);
    expect(json(await t.request({ method: 'GET', url: '/v1/waitlist' })).data).toHaveLength(2);
  });

  it('ends an entry as booked once its client books a time that fits it, so no offer follows', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    // Jo waits for a Cut with anyone on Tuesday afternoon.
    const waiting = await joinWith({
      client_id: ids.jo,
      from_date: TUESDAY,
      to_date: TUESDAY,
      times: ['afternoon'],
    });
    // A morning is not what the entry waits for, nor is another client's afternoon: it still waits.
    expect((await bookAna(t, `${TUESDAY}T10:00:00Z`)).statusCode).toBe(201);
    expect((await bookAna(t, `${TUESDAY}T13:00:00Z`, await addBea())).statusCode).toBe(201);
    expect(await entry(waiting.id)).toMatchObject({ status: 'waiting' });

    const booked = await bookAna(t, `${TUESDAY}T14:00:00Z`);
    expect(booked.statusCode, booked.body).toBe(201);
    const bookingRow = await t.database.db
      .selectFrom('bookings')
      .select('id')
      .where('reference', '=', json(booked).data.reference)
      .executeTakeFirstOrThrow();
    expect(await entry(waiting.id)).toMatchObject({
      status: 'booked',
      booking_id: bookingRow.id,
      booking_reference: json(booked).data.reference,
      offer: null,
    });
    // Other afternoon times are free, and none is held for Jo, who needs none now.
    expect((await tuesdayStarts()).some((start) => start.startsWith(`${TUESDAY}T15`))).toBe(true);
    expect(await pass()).toBe(0);
    expect(await entry(waiting.id)).toMatchObject({ status: 'booked', offer: null });
  });

  it('ends an entry as booked once its client books the time its offer held, after the offer lapsed unnoticed', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesdayAfternoon();
    const ada = await join('Ada');
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel`, payload: {} });
    expect(await pass()).toBe(1);
    expect((await entry(ada.id)).offer).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });
    // Ada lets the offer's minutes run out (no pass of the worker since), then rings and books that
    // very time: the lapsed hold is no offer she still holds, and the entry has what it waited for.
    t.clock.advance({ minutes: 16 });
    const adaId = (await entry(ada.id)).client_id as string;
    const mine = await bookAna(t, `${TUESDAY}T14:00:00Z`, adaId);
    expect(mine.statusCode, mine.body).toBe(201);
    expect(await entry(ada.id)).toMatchObject({
      status: 'booked',
      booking_reference: json(mine).data.reference,
      offer: null,
    });
    // No other time is held and sent to her when one frees up.
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel`, payload: {} });
    expect(await pass()).toBe(0);
  });

  /**
   * Ada waits for Ana's Tuesday afternoon; 14:00 and 15:00 free up and she is offered 14:00; before
   * answering, she rings and books 15:00 herself. Her entry waits (the offer can still be claimed).
   */
  async function adaBooksWhileOffered() {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesdayAfternoon();
    const ada = await join('Ada');
    for (const hour of ['14', '15']) {
      await t.request({ method: 'POST', url: `/v1/bookings/${booked.get(hour)}/cancel`, payload: {} });
    }
    expect(await pass()).toBe(1);
    const { offer, client_id } = await entry(ada.id);
    expect(offer).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });
    const mine = await bookAna(t, `${TUESDAY}T15:00:00Z`, client_id);
    expect(mine.statusCode, mine.body).toBe(201);
    expect(await entry(ada.id)).toMatchObject({
      status: 'waiting',
      offer: { booking_reference: offer.booking_reference },
    });
    return { id: ada.id as string, offered: offer.booking_reference as string };
  }

  it.each([
    ['over REST', (id: string) => t.request({ method: 'DELETE', url: `/v1/waitlist/${id}` }), 204],
    [
      'from the offer’s page',
      async (_id: string, offered: string) =>
        t.app.inject({ method: 'POST', url: `${await pageOf(offered)}/leave`, headers: FORM }),
      303,
    ],
  ])(
    'lets a client who booked while offered leave the waitlist %s: the entry left, the offered time free',
    async (_how, leave, status) => {
      const { id, offered } = await adaBooksWhileOffered();
      const left = await leave(id, offered);
      expect(left.statusCode, left.body).toBe(status);
      expect(await entry(id)).toMatchObject({ status: 'left', offer: null, booking_reference: null });
      expect(await tuesdayStarts()).toContain(`${TUESDAY}T14:00:00+00:00`);
      expect(json(await t.request({ method: 'DELETE', url: `/v1/waitlist/${id}` })).error).toMatchObject({
        code: 'conflict',
        message: 'This entry has ended already (left).',
      });
    },
  );

  it("ends an entry as booked once its client's booking is moved to a time that fits it", async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const waiting = await joinWith({
      client_id: ids.jo,
      from_date: TUESDAY,
      to_date: TUESDAY,
      times: ['afternoon'],
    });
    // Jo's Tuesday morning cut is not what the entry waits for; moved to the afternoon, it is.
    const morning = await bookAna(t, `${TUESDAY}T10:00:00Z`);
    expect(morning.statusCode, morning.body).toBe(201);
    const reference = json(morning).data.reference as string;
    expect(await entry(waiting.id)).toMatchObject({ status: 'waiting' });
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: `${TUESDAY}T15:00:00Z` },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(await entry(waiting.id)).toMatchObject({ status: 'booked', booking_reference: reference });
  });

  it('keeps an entry waiting when its client only holds a time (a deposit to pay) or it holds an offer', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const bea = await addBea();
    // Jo waits for a colour on Tuesday; her colour at 14:00 is held until its deposit is paid.
    await joHoldsTheColourSheWaitsFor(ids);

    // Jo waits for a cut too; Bea's 10:00 is cancelled and offered to Jo, held for her to claim.
    const taken = await bookAna(t, `${TUESDAY}T10:00:00Z`, bea);
    expect(taken.statusCode, taken.body).toBe(201);
    const cut = await joinWith({
      client_id: ids.jo,
      from_date: TUESDAY,
      to_date: TUESDAY,
      times: ['morning'],
    });
    await t.request({
      method: 'POST',
      url: `/v1/bookings/${json(taken).data.reference}/cancel`,
      payload: {},
    });
    await pass();
    expect((await entry(cut.id)).offer).not.toBeNull();
    // Booking 11:00 herself leaves the entry with its offer as it is: not ended with a hold still claimable.
    expect((await bookAna(t, `${TUESDAY}T11:00:00Z`)).statusCode).toBe(201);
    expect(await entry(cut.id)).toMatchObject({ status: 'waiting' });
  });

  /** Ends an offer unclaimed: let go from its link, cancelled by the desk over REST, or left to lapse. */
  async function endOffer(reference: string, ending: 'let-go' | 'cancel' | 'lapse') {
    if (ending === 'let-go') {
      const page = await pageOf(reference);
      expect((await t.app.inject({ method: 'POST', url: `${page}/decline`, headers: FORM })).statusCode).toBe(
        303,
      );
    } else if (ending === 'cancel') {
      const cancelled = await t.request({
        method: 'POST',
        url: `/v1/bookings/${reference}/cancel`,
        payload: {},
      });
      expect(cancelled.statusCode, cancelled.body).toBe(200);
    } else {
      t.clock.advance({ minutes: 16 });
    }
  }

  it.each([
    ['lets it go from its link', 'let-go'],
    ['lets it lapse', 'lapse'],
    ['has the desk cancel it over REST', 'cancel'],
  ] as const)(
    'ends as booked the entry of a client who booked a time it waits for while holding an offer, once she %s',
    async (_, ending) => {
      t = await startTestApp({ now: NOW });
      const ids = await catalogueIds(t.database.db);
      const bea = await addBea();
      // Bea holds Ana's whole Tuesday; Jo waits for a morning cut with Ana.
      const beas = new Map<string, string>();
      for (const hour of ['09', '10', '11', '12', '13', '14', '15', '16']) {
        beas.set(hour, json(await bookAna(t, `${TUESDAY}T${hour}:00:00Z`, bea)).data.reference);
      }
      const waiting = await joinWith({
        client_id: ids.jo,
        staff_id: ids.staff.ana,
        from_date: TUESDAY,
        to_date: TUESDAY,
        times: ['morning'],
      });
      // 10:00 and 11:00 free up; 10:00 is offered to Jo, who rings and books 11:00 herself.
      for (const hour of ['10', '11']) {
        await t.request({ method: 'POST', url: `/v1/bookings/${beas.get(hour)}/cancel`, payload: {} });
      }
      expect(await pass()).toBe(1);
      const { offer } = await entry(waiting.id);
      expect(offer).toMatchObject({ starts_at: `${TUESDAY}T10:00:00+00:00` });
      const own = await bookAna(t, `${TUESDAY}T11:00:00Z`);
      expect(json(own).data.status, own.body).toBe('confirmed');

      await endOffer(offer.booking_reference, ending);
      // She has the morning she waited for: another one freeing is not held and sent to her.
      await t.request({ method: 'POST', url: `/v1/bookings/${beas.get('09')}/cancel`, payload: {} });
      expect(await pass()).toBe(0);
      expect(await entry(waiting.id)).toMatchObject({
        status: 'booked',
        booking_reference: json(own).data.reference,
        offer: null,
      });
    },
  );

  it.each([
    ['lapses', 'lapse'],
    ['is cancelled over REST', 'cancel'],
  ] as const)(
    'keeps an entry waiting when its offer %s and its client has only the booking she had before it',
    async (_, ending) => {
      t = await startTestApp({ now: NOW });
      const ids = await catalogueIds(t.database.db);
      const bea = await addBea();
      // Jo has Ana's Tuesday 09:00 and waits for another morning time with Ana (for a friend, say);
      // Bea holds the rest of the morning.
      const jos = await bookAna(t, `${TUESDAY}T09:00:00Z`);
      expect(jos.statusCode, jos.body).toBe(201);
      const beas = new Map<string, string>();
      for (const hour of ['10', '11']) {
        beas.set(hour, json(await bookAna(t, `${TUESDAY}T${hour}:00:00Z`, bea)).data.reference);
      }
      const waiting = await joinWith({
        client_id: ids.jo,
        staff_id: ids.staff.ana,
        from_date: TUESDAY,
        to_date: TUESDAY,
        times: ['morning'],
      });
      t.clock.advance({ minutes: 1 });
      await t.request({ method: 'POST', url: `/v1/bookings/${beas.get('10')}/cancel`, payload: {} });
      expect(await pass()).toBe(1);
      const { offer } = await entry(waiting.id);
      expect(offer).toMatchObject({ starts_at: `${TUESDAY}T10:00:00+00:00` });

      await endOffer(offer.booking_reference, ending);
      if (ending === 'lapse') await pass();
      // The 09:00 she had all along is no answer to the offer: she still waits, and is offered a
      // morning time again once more of it frees.
      expect(await entry(waiting.id)).toMatchObject({ status: 'waiting', booking_reference: null });
      await t.request({ method: 'POST', url: `/v1/bookings/${beas.get('11')}/cancel`, payload: {} });
      expect(await pass()).toBe(1);
      expect((await entry(waiting.id)).offer).toMatchObject({ starts_at: expect.stringMatching(/T1[01]:/) });
    },
  );

  it('ends the entry once the time its client holds is confirmed: the deposit paid', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const { colour, booking } = await joHoldsTheColourSheWaitsFor(ids);
    const checkout = new URL(booking.payment_url as string).pathname;
    const paid = await t.app.inject({ method: 'POST', url: `${checkout}/pay`, headers: FORM });
    expect(paid.statusCode, paid.body).toBe(303);
    expect(
      json(await t.request({ method: 'GET', url: `/v1/bookings/${booking.reference}` })).data.status,
    ).toBe('confirmed');
    expect(await entry(colour.id)).toMatchObject({
      status: 'booked',
      booking_reference: booking.reference,
      offer: null,
    });
  });

  it('counts the days an entry spans alike whatever zone the server runs in', async () => {
    // Chile's clocks go forward at midnight on 6 September 2026: in the server's zone that day has
    // no 00:00, and a day counted from it was 23 hours.
    const saved = process.env.TZ;
    process.env.TZ = 'America/Santiago';
    try {
      t = await startTestApp({ now: '2026-08-31T12:00:00Z' });
      const ids = await catalogueIds(t.database.db);
      const join = (from: string, to: string) =>
        t.request({
          method: 'POST',
          url: '/v1/waitlist',
          payload: {
            location_slug: 'soho',
            service_ids: [ids.services.cut],
            client_id: ids.jo,
            from_date: from,
            to_date: to,
          },
        });
      const tooLong = await join('2026-09-06', '2026-12-07');
      expect(tooLong.statusCode, tooLong.body).toBe(400);
      expect(json(tooLong).error).toMatchObject({
        param: 'to_date',
        message: 'An entry waits for at most 92 days: from_date to to_date spans 93.',
      });
      const longest = await join('2026-09-06', '2026-12-06');
      expect(longest.statusCode, longest.body).toBe(201);
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it('tells a client already waiting for the same services in another order that they wait already', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const base = { location_slug: 'soho', client_id: ids.jo, from_date: TUESDAY, to_date: TUESDAY };
    const first = await t.request({
      method: 'POST',
      url: '/v1/waitlist',
      payload: { ...base, service_ids: [ids.services.cut, ids.services.colour] },
    });
    expect(first.statusCode, first.body).toBe(201);
    const again = await t.request({
      method: 'POST',
      url: '/v1/waitlist',
      payload: { ...base, service_ids: [ids.services.colour, ids.services.cut] },
    });
    expect(again.statusCode, again.body).toBe(409);
    expect(json(again).error).toMatchObject({ code: 'conflict' });
    expect(json(again).error.message).toContain(json(first).data.id);
    // The entry keeps the order it was asked in (the order its booking is made in).
    const listed = json(await t.request({ method: 'GET', url: '/v1/waitlist?location_slug=soho' })).data;
    expect(listed.map((e: { service_ids: string[] }) => e.service_ids)).toEqual([
      [ids.services.cut, ids.services.colour],
    ]);
  });

  it('texts or e-mails the offer with its link and tells integrators waitlist.offered and waitlist.claimed', async () => {
    await withWaitlistReceiver(['waitlist.offered', 'waitlist.claimed'], async (receiver, sender) => {
      const booked = await fillTuesdayAfternoon();
      const ada = await join('Ada');
      await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('13')}/cancel` });
      await pass();
      const offered = await entry(ada.id);
      const offer = offered.offer;
      const ids = await catalogueIds(t.database.db);
      const links = customerLinks(localCheckout, 'https://book.example');
      await deliverAllDue({ db: t.database.db, clock: t.clock, senders: { sms: null, email: null }, links });
      const messages = (await listOutbox(t.database.db, ids.organisation)).filter(
        (m) => m.reference === offer.booking_reference,
      );
      expect(messages.map((m) => `${m.kind}:${m.channel}:${m.status}`)).toEqual([
        'booking_page_link:email:logged',
      ]);
      const { text, subject } = JSON.parse(messages[0]!.body!) as { text: string; subject: string };
      const page = await pageOf(offer.booking_reference);
      // The customer booked nothing: the subject says a time freed up, not "complete your booking".
      expect(subject).toMatch(/: A time has freed up for you \([A-Z]+-[A-Z0-9]+\)$/);
      expect(text).toContain('A time has freed up for you: Cut with Ana on');
      expect(text).toContain(`Held for you until`);
      expect(text).toContain(`https://book.example${page}`);

      await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM });
      await deliverAllDueWebhooks({ db: t.database.db, clock: t.clock, sender });
      expect(receiver.received.map((r) => [r.json.type, r.signed])).toEqual([
        ['waitlist.offered', true],
        ['waitlist.claimed', true],
      ]);
      // Each event's data is the REST resource after the change: the WaitlistEntry as GET
      // /v1/waitlist/{id} answered then (design.md 9.2), as a Booking's events carry the Booking.
      expect(offer).toEqual({
        booking_reference: expect.any(String),
        staff_id: ids.staff.ana,
        starts_at: `${TUESDAY}T13:00:00+00:00`,
        expires_at: '2026-11-23T09:15:00Z',
      });
      expect(receiver.received[0]!.json.data).toEqual(offered);
      const claimed = await entry(ada.id);
      expect(claimed).toMatchObject({
        status: 'booked',
        booking_id: expect.any(String),
        booking_reference: offer.booking_reference,
        offer: null,
      });
      expect(receiver.received[1]!.json.data).toEqual(claimed);
    });
  });

  it("says the offered time in the location's zone, with the offset in force, over REST and in its events", async () => {
    // Soho moved to Kolkata (UTC+05:30): Ana's Tuesday 12:00 there is 06:30 UTC.
    const catalogue = smallCatalogue();
    catalogue.locations[0]!.timezone = 'Asia/Kolkata';
    const destinations = { allowInsecure: true, allowPrivateNetworks: false };
    t = await startTestApp({ catalogues: [catalogue], now: NOW, webhookDestinations: destinations });
    const receiver = await startWebhookReceiver({ nowSeconds: () => Math.floor(t.clock.nowMs() / 1000) });
    const sender = httpSender(destinations, 2_000);
    try {
      const subscribed = await t.request({
        method: 'POST',
        url: '/v1/webhook-endpoints',
        payload: { url: receiver.url, events: ['waitlist.offered'] },
      });
      receiver.state.secret = json(subscribed).data.secret;
      const ada = await join('Ada');
      expect(await pass()).toBe(1);
      const offer = (await entry(ada.id)).offer;
      const held = json(await t.request({ method: 'GET', url: `/v1/bookings/${offer.booking_reference}` }));
      // The first free afternoon time is offered (Ada's Tuesday is otherwise open): 12:00 there.
      expect(held.data.starts_at).toBe(`${TUESDAY}T12:00:00+05:30`);
      expect(offer.starts_at).toBe(held.data.starts_at);
      await deliverAllDueWebhooks({ db: t.database.db, clock: t.clock, sender });
      expect(receiver.received[0]!.json.data).toMatchObject({ offer: { starts_at: held.data.starts_at } });
    } finally {
      sender.close();
      await receiver.close();
    }
  });

  it('offers what new working hours open, and ends an entry once its last date has passed', async () => {
    t = await startTestApp({ now: NOW });
    await fillTuesdayAfternoon();
    const ids = await catalogueIds(t.database.db);
    const wednesday = (
      await joinWith({
        staff_id: ids.staff.ana,
        client_id: ids.jo,
        from_date: '2026-11-25',
        to_date: '2026-11-25',
      })
    ).id;
    const tuesday = (await join('Bea')).id;
    expect(await pass()).toBe(0);
    // Ana now works Wednesdays too.
    const catalogue = smallCatalogue();
    const ana = catalogue.staff.find((member) => member.ref === 'ana')!;
    ana.working_hours = {
      soho: { ...ana.working_hours.soho, wed: [['09:00', '17:00']] },
    } as typeof ana.working_hours;
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    expect(await pass()).toBe(1);
    expect((await entry(wednesday)).offer).toMatchObject({ starts_at: '2026-11-25T09:00:00+00:00' });
    // Tuesday is over in London at midnight: Bea's entry ends.
    t.clock.set('2026-11-25T00:00:00Z');
    await pass();
    expect(await entry(tuesday)).toMatchObject({ status: 'ended', offer: null });
    expect((await entry(wednesday)).status).toBe('waiting');
  });

  it('books an offer with a deposit only once both the claim and the deposit are done', async () => {
    const { id, offer } = await deeOfferedColour();
    expect(offer).toMatchObject({ starts_at: `${TUESDAY}T13:00:00+00:00` });
    const hold = () => t.request({ method: 'GET', url: `/v1/bookings/${offer.booking_reference}` });
    expect(json(await hold()).data.pending_confirmation.requirements).toEqual(['waitlist_claim', 'deposit']);

    const page = await pageOf(offer.booking_reference);
    // Nothing is paid for a time not taken yet.
    expect((await t.app.inject({ method: 'POST', url: `${page}/pay`, headers: FORM })).statusCode).toBe(409);
    expect((await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM })).statusCode).toBe(
      303,
    );
    expect(json(await hold()).data).toMatchObject({
      status: 'pending_confirmation',
      pending_confirmation: { requirements: ['deposit'] },
    });
    // Claimed but not paid: the entry still waits on it (a lapse would send it the next time).
    expect(await entry(id)).toMatchObject({
      status: 'waiting',
      offer: { starts_at: `${TUESDAY}T13:00:00+00:00` },
    });
    const shown = await t.app.inject({ method: 'GET', url: page });
    expect(shown.body).toContain('Pay deposit £20.00');
    const pay = await t.app.inject({ method: 'POST', url: `${page}/pay`, headers: FORM });
    expect(pay.statusCode, pay.body).toBe(303);
    const paid = await t.app.inject({
      method: 'POST',
      url: `${new URL(pay.headers.location as string, 'http://localhost').pathname}/pay`,
      headers: FORM,
    });
    expect(paid.statusCode, paid.body).toBe(303);
    expect(json(await hold()).data).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
    expect(await entry(id)).toMatchObject({ status: 'booked', offer: null });
  });

  it('takes an entry off the list without releasing the time its customer claimed and is paying for', async () => {
    const { id, offer } = await deeOfferedColour();
    const hold = () => t.request({ method: 'GET', url: `/v1/bookings/${offer.booking_reference}` });
    const page = await pageOf(offer.booking_reference);
    expect((await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM })).statusCode).toBe(
      303,
    );
    // Dee rings the salon: no more offers, please. The time she claimed stays hers to pay for.
    expect((await t.request({ method: 'DELETE', url: `/v1/waitlist/${id}` })).statusCode).toBe(204);
    expect(await entry(id)).toMatchObject({ status: 'left' });
    expect(json(await hold()).data).toMatchObject({
      status: 'pending_confirmation',
      pending_confirmation: { requirements: ['deposit'] },
    });
    const pay = await t.app.inject({ method: 'POST', url: `${page}/pay`, headers: FORM });
    expect(pay.statusCode, pay.body).toBe(303);
    const paid = await t.app.inject({
      method: 'POST',
      url: `${new URL(pay.headers.location as string, 'http://localhost').pathname}/pay`,
      headers: FORM,
    });
    expect(paid.statusCode, paid.body).toBe(303);
    expect(json(await hold()).data).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
  });

  it('holds a claimed offer for its deposit as long as a deposit hold made at the claim', async () => {
    const { offer } = await deeOfferedColour();
    expect(offer.expires_at).toBe('2026-11-23T09:15:00Z');
    const hold = () => t.request({ method: 'GET', url: `/v1/bookings/${offer.booking_reference}` });
    const page = await pageOf(offer.booking_reference);
    // Claimed in the offer's 14th minute: Soho holds a deposit 30 minutes (pending_payment_hold_minutes).
    t.clock.advance({ minutes: 14 });
    const claimed = await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM });
    expect(claimed.statusCode, claimed.body).toBe(303);
    expect(json(await hold()).data).toMatchObject({
      status: 'pending_confirmation',
      hold_expires_at: '2026-11-23T09:44:00Z',
      pending_confirmation: { requirements: ['deposit'], expires_at: '2026-11-23T09:44:00Z' },
    });
    // Paid 20 minutes after the claim, past the offer's own expiry: the checkout takes it.
    t.clock.advance({ minutes: 20 });
    expect(await pass()).toBe(0);
    const pay = await t.app.inject({ method: 'POST', url: `${page}/pay`, headers: FORM });
    expect(pay.statusCode, pay.body).toBe(303);
    const paid = await t.app.inject({
      method: 'POST',
      url: `${new URL(pay.headers.location as string, 'http://localhost').pathname}/pay`,
      headers: FORM,
    });
    expect(paid.statusCode, paid.body).toBe(303);
    expect(json(await hold()).data).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
  });

  it('holds a claimed offer for its deposit no longer than a deposit hold made at the claim', async () => {
    // Soho offers a freed time for an hour but holds a deposit 10 minutes.
    const { id, offer } = await deeOfferedColour({
      waitlist_offer_minutes: 60,
      pending_payment_hold_minutes: 10,
    });
    expect(offer.expires_at).toBe('2026-11-23T10:00:00Z');
    const hold = () => t.request({ method: 'GET', url: `/v1/bookings/${offer.booking_reference}` });
    const page = await pageOf(offer.booking_reference);
    t.clock.advance({ minutes: 5 });
    const claimed = await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM });
    expect(claimed.statusCode, claimed.body).toBe(303);
    // Ten minutes from the claim, not the 55 the offer had left.
    expect(json(await hold()).data).toMatchObject({
      status: 'pending_confirmation',
      hold_expires_at: '2026-11-23T09:15:00Z',
      pending_confirmation: { requirements: ['deposit'], expires_at: '2026-11-23T09:15:00Z' },
    });
    expect((await entry(id)).offer).toMatchObject({ expires_at: '2026-11-23T09:15:00Z' });
    // Its checkout says so too.
    const pay = await t.app.inject({ method: 'POST', url: `${page}/pay`, headers: FORM });
    expect(pay.statusCode, pay.body).toBe(303);
    const checkout = new URL(pay.headers.location as string, 'http://localhost').pathname;
    const shown = await t.app.inject({ method: 'GET', url: checkout });
    expect(shown.body).toContain('Pay by <time datetime="2026-11-23T09:15:00Z">');
    // Unpaid once those ten minutes are over: the checkout takes nothing, the time is free again.
    t.clock.advance({ minutes: 11 });
    const late = await t.app.inject({ method: 'POST', url: `${checkout}/pay`, headers: FORM });
    expect(late.statusCode, late.body).toBe(409);
    expect(json(await hold()).data.status).toBe('expired');
    expect(await tuesdayStarts()).toContain(`${TUESDAY}T13:00:00+00:00`);
  });

  it('holds a claimed offer for its deposit until its start at the latest', async () => {
    // Offered on Tuesday at 08:00 for a day: until its start, 13:00.
    const { offer } = await deeOfferedColour({ waitlist_offer_minutes: 1440 }, `${TUESDAY}T08:00:00Z`);
    expect(offer.expires_at).toBe(`${TUESDAY}T13:00:00Z`);
    const page = await pageOf(offer.booking_reference);
    t.clock.set(`${TUESDAY}T12:50:00Z`);
    const claimed = await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM });
    expect(claimed.statusCode, claimed.body).toBe(303);
    const held = json(
      await t.request({ method: 'GET', url: `/v1/bookings/${offer.booking_reference}` }),
    ).data;
    expect(held).toMatchObject({ status: 'pending_confirmation', hold_expires_at: `${TUESDAY}T13:00:00Z` });
  });

  it('does not let go an offer claimed meanwhile (a "not this time" read before the claim)', async () => {
    const { id, offer } = await deeOfferedColour();
    const page = await pageOf(offer.booking_reference);
    expect((await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM })).statusCode).toBe(
      303,
    );
    // The other button, pressed on the page as it was before the claim went through.
    const booking = await t.database.db
      .selectFrom('bookings')
      .select(['id', 'organisation_id'])
      .where('reference', '=', offer.booking_reference)
      .executeTakeFirstOrThrow();
    const target = {
      organisationId: booking.organisation_id,
      bookingId: booking.id,
      reference: offer.booking_reference,
    };
    await expect(declineOffer(t.database.db, target, true, t.clock.nowMs())).rejects.toMatchObject({
      code: 'conflict',
    });
    const held = json(await t.request({ method: 'GET', url: `/v1/bookings/${offer.booking_reference}` }));
    expect(held.data).toMatchObject({
      status: 'pending_confirmation',
      pending_confirmation: { requirements: ['deposit'] },
    });
    expect(await entry(id)).toMatchObject({ status: 'waiting' });
  });

  it('takes no deposit on the payment link of an offer not claimed yet', async () => {
    const { offer } = await deeOfferedColour();
    const hold = async () =>
      json(await t.request({ method: 'GET', url: `/v1/bookings/${offer.booking_reference}` })).data;
    // The booking's payment_url (an integrator's, a link staff forward) leads to its checkout.
    const checkout = new URL((await hold()).payment_url).pathname;
    // Nor is its page shown (with Stripe, the link would lead on to Stripe's, whose payment is kept).
    const shown = await t.app.inject({ method: 'GET', url: checkout });
    expect(shown.statusCode).toBe(409);
    expect(shown.body).toContain('This time is offered, not booked yet');
    const paid = await t.app.inject({ method: 'POST', url: `${checkout}/pay`, headers: FORM });
    expect(paid.statusCode, paid.body).toBe(409);
    expect(paid.headers['content-type']).toMatch(/^text\/html/);
    expect(await hold()).toMatchObject({
      deposit_status: 'pending',
      pending_confirmation: { requirements: ['waitlist_claim', 'deposit'] },
    });
    // Claimed, it is paid there.
    const page = await pageOf(offer.booking_reference);
    await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM });
    expect((await t.app.inject({ method: 'GET', url: checkout })).statusCode).toBe(200);
    const after = await t.app.inject({ method: 'POST', url: `${checkout}/pay`, headers: FORM });
    expect(after.statusCode, after.body).toBe(303);
    expect(await hold()).toMatchObject({ status: 'confirmed', deposit_status: 'paid' });
  });

  it('offers time freed by a booking moved away and by a closure taken out of the catalogue', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookAnaOnTuesday(t, ['12', '13', '14', '15', '16']);
    const ada = await join('Ada');
    // Jo's 14:00 moves to Monday: Tuesday 14:00 frees.
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${booked.get('14')}`,
      payload: { starts_at: '2026-11-23T14:00:00Z' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(await pass()).toBe(1);
    expect((await entry(ada.id)).offer).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });

    // Wednesday closed in the catalogue: Bo's Wednesday is nobody's; taken out, it is offered.
    const catalogue = smallCatalogue();
    const soho = catalogue.locations.find((location) => location.slug === 'soho')!;
    Object.assign(soho, { closures: [{ date: '2026-11-25', reason: 'Training' }] });
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    const ids = await catalogueIds(t.database.db);
    const waiting = (
      await joinWith({
        client_id: ids.jo,
        from_date: '2026-11-25',
        to_date: '2026-11-25',
      })
    ).id;
    expect(await pass()).toBe(0);
    Object.assign(soho, { closures: [] });
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    expect(await pass()).toBe(1);
    expect((await entry(waiting)).offer).toMatchObject({ starts_at: '2026-11-25T10:00:00+00:00' });
  });

  it('counts as let go the time an offer was moved to, not the time first offered', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesdayAfternoon();
    const ada = await join('Ada');
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel` });
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel` });
    expect(await pass()).toBe(1);
    const reference = (await entry(ada.id)).offer.booking_reference as string;
    expect((await entry(ada.id)).offer).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });
    // The desk moved the time held for her to 15:00; she then let it go.
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: `${TUESDAY}T15:00:00Z` },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const declined = await t.app.inject({
      method: 'POST',
      url: `${await pageOf(reference)}/decline`,
      headers: FORM,
    });
    expect(declined.statusCode).toBe(303);
    expect(await pass()).toBe(1);
    expect((await entry(ada.id)).offer).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });
  });

  it('tells the customer of an offer the desk moved as an offer, not as a booking of theirs that moved', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await fillTuesdayAfternoon();
    const ada = await join('Ada');
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('13')}/cancel` });
    await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel` });
    expect(await pass()).toBe(1);
    const reference = (await entry(ada.id)).offer.booking_reference as string;
    const ids = await catalogueIds(t.database.db);
    const delivery = {
      db: t.database.db,
      clock: t.clock,
      senders: { sms: null, email: null },
      links: customerLinks(localCheckout, 'https://book.example'),
    };
    await deliverAllDue(delivery);
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: `${TUESDAY}T15:00:00Z` },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    await deliverAllDue(delivery);
    const told = (await listOutbox(t.database.db, ids.organisation)).filter((m) => m.reference === reference);
    expect(told.map((m) => m.kind)).not.toContain('rescheduled');
    const last = JSON.parse(told.at(-1)!.body!).text as string;
    expect(last).toContain('A time has freed up for you: Cut with Ana on Tuesday 24 November at 15:00 GMT');
    expect(last).toContain('Held for you until');
  });

  it('tells the offer where its hold is now once the hold was moved, in the entry, and sends waitlist.claimed with the booked entry', async () => {
    await withWaitlistReceiver(['waitlist.claimed'], async (receiver, sender) => {
      const booked = await fillTuesdayAfternoon();
      const ada = await join('Ada');
      await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('13')}/cancel` });
      await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel` });
      expect(await pass()).toBe(1);
      const reference = (await entry(ada.id)).offer.booking_reference as string;
      // Ada rang the salon: 15:00 suits her better, and the desk moved the time held for her.
      const moved = await t.request({
        method: 'PATCH',
        url: `/v1/bookings/${reference}`,
        payload: { starts_at: `${TUESDAY}T15:00:00Z` },
      });
      expect(moved.statusCode, moved.body).toBe(200);
      expect((await entry(ada.id)).offer).toMatchObject({
        booking_reference: reference,
        starts_at: `${TUESDAY}T15:00:00+00:00`,
      });

      await t.app.inject({ method: 'POST', url: `${await pageOf(reference)}/claim`, headers: FORM });
      expect(json(await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).data).toMatchObject({
        status: 'confirmed',
        starts_at: `${TUESDAY}T15:00:00+00:00`,
      });
      await deliverAllDueWebhooks({ db: t.database.db, clock: t.clock, sender });
      expect(receiver.received.map((r) => r.json.type)).toEqual(['waitlist.claimed']);
      // The entry as it reads once booked; where the booking is now, its own events and GET tell.
      expect(receiver.received[0]!.json.data).toEqual(await entry(ada.id));
      expect(receiver.received[0]!.json.data).toMatchObject({ status: 'booked', offer: null });
    });
  });
});

describe('the waitlist of a location taken out of the catalogue', () => {
  it('is listed when asked by that location’s slug, as its entries are listed unasked', async () => {
    const catalogue = smallCatalogue();
    t = await startTestApp({ catalogues: [catalogue], now: NOW });
    const entry = await join('Dee');
    catalogue.locations[0]!.active = false;
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());

    const everything = await t.request({ method: 'GET', url: '/v1/waitlist' });
    expect(json(everything).data.map((e: { id: string }) => e.id)).toEqual([entry.id]);
    expect(json(everything).data[0].location_slug).toBe('soho');
    const atSoho = await t.request({ method: 'GET', url: '/v1/waitlist?location_slug=soho' });
    expect(atSoho.statusCode, atSoho.body).toBe(200);
    expect(json(atSoho).data.map((e: { id: string }) => e.id)).toEqual([entry.id]);
    const nowhere = await t.request({ method: 'GET', url: '/v1/waitlist?location_slug=nowhere' });
    expect(nowhere.statusCode).toBe(404);
  });
});
