import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { deliverAllDueWebhooks } from '../../src/app/webhooks/delivery.ts';
import { httpSender } from '../../src/app/webhooks/sender.ts';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks.ts';
import { postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { expectNamedControls, type SignedIn, signInToConsole } from '../helpers/console-session.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * The console's webhooks pages through HTTP (design.md 9.2, "the same in the console (owner/admin)"):
 * an owner adds an endpoint pointing at a local receiver, sees its secret once, sends a test event that
 * the delivery worker's function POSTs to the receiver, reads the delivery in the log, and deletes the
 * endpoint after a confirmation page; refusals are said on the form; staff are refused; another
 * organisation sees none of it. Loopback receivers are allowed, private networks are not.
 */
const PASSWORD = 'correct horse battery';
const LOOPBACK_ALLOWED = { allowInsecure: true, allowPrivateNetworks: false };
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

let t: TestApp;
/** acme-hair's cut and its client Jo (beta-barbers has rows with the same refs). */
let acme: { cut: string; jo: string };
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
const sender = httpSender(LOOPBACK_ALLOWED, 2_000);
const deliver = () => deliverAllDueWebhooks({ db: t.database.db, clock: t.clock, sender });

beforeAll(async () => {
  t = await startTestApp({
    catalogues: [smallCatalogue(), smallCatalogue({ slug: 'beta-barbers', prefix: 'BB' })],
    limits: { requestsPerMinute: 100_000 },
    webhookDestinations: LOOPBACK_ALLOWED,
  });
  const db = t.database.db;
  const { id: organisation } = await db
    .selectFrom('organisations')
    .select('id')
    .where('slug', '=', 'acme-hair')
    .executeTakeFirstOrThrow();
  const refOf = async (table: 'services' | 'clients', ref: string) =>
    (
      await db
        .selectFrom(table)
        .select('id')
        .where('organisation_id', '=', organisation)
        .where('ref', '=', ref)
        .executeTakeFirstOrThrow()
    ).id;
  acme = { cut: await refOf('services', 'cut'), jo: await refOf('clients', 'jo') };
  const now = t.clock.nowMs();
  for (const [organisationSlug, email, role] of [
    ['acme-hair', 'owner@acme.test', 'owner'],
    ['acme-hair', 'admin@acme.test', 'admin'],
    ['acme-hair', 'desk@acme.test', 'staff'],
    ['beta-barbers', 'owner@beta.test', 'owner'],
  ] as const) {
    await createUser(t.database.db, { organisationSlug, email, role, password: PASSWORD }, now);
  }
  receiver = await startWebhookReceiver({ nowSeconds: () => Math.floor(t.clock.nowMs() / 1000) });
});
afterAll(async () => {
  sender.close();
  await receiver?.close();
  await t?.close();
});
beforeEach(async () => {
  t.clock.set(TEST_START);
  receiver.received.length = 0;
  receiver.state.answers = [];
  receiver.state.fallback = 200;
  // Each test starts with no endpoints (deleted over REST: the console's own delete is under test).
  const list = await t.request({ method: 'GET', url: '/v1/webhook-endpoints' });
  for (const endpoint of list.json().data) {
    await t.request({ method: 'DELETE', url: `/v1/webhook-endpoints/${endpoint.id}` });
  }
});

type Signed = SignedIn;

const signIn = (organisation: string, email: string) => signInToConsole(t, organisation, email, PASSWORD);

/** Adds an endpoint through the console's form; its id and secret as the answer showed them. */
async function addEndpoint(me: Signed, events: string[], description = '') {
  const added = await me.post('/console/webhooks', { url: receiver.url, events, description });
  expect(added.statusCode, added.body).toBe(201);
  const secret = /aria-label="Signing secret">(whsec_[^<]+)</.exec(added.body)![1]!;
  const id = new RegExp(`/console/webhooks/(${UUID})/deliveries`).exec(added.body)![1]!;
  return { id, secret, body: added.body };
}

/** A booking at acme-hair over REST: a booking.created event for whoever subscribes. */
async function book(startsAt: string): Promise<void> {
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [acme.cut],
    client_id: acme.jo,
    starts_at: startsAt,
  });
  expect(response.statusCode, response.body).toBe(201);
}

/** The rows of a page's table body, each as its cells' text (tags dropped, entities left). */
function rowsOf(html: string): string[][] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((cell) =>
      cell[1]!
        .replace(/<span class="visually-hidden">[\s\S]*?<\/span>/g, '')
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );
}

describe('webhooks in the console', () => {
  it('adds an endpoint showing its secret once, sends a test event, logs its delivery and deletes it', async () => {
    const owner = await signIn('acme-hair', 'owner@acme.test');
    const empty = await owner.get('/console/webhooks');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('<a href="/console/webhooks" aria-current="page">Webhooks</a>');
    expect(empty.body).toContain('No endpoints yet.');
    // A checkbox per event type, each named by its label.
    for (const type of WEBHOOK_EVENT_TYPES) {
      expect(empty.body).toMatch(
        new RegExp(
          `<label class="check"><input type="checkbox" name="events" value="${type.replace('.', '\\.')}">`,
        ),
      );
    }
    expectNamedControls(empty.body);

    const added = await addEndpoint(owner, ['booking.created', 'booking.cancelled'], 'Till sync');
    expect(added.secret).toMatch(/^whsec_/);
    expect(added.body).toContain('it is shown only once and cannot be shown again');
    receiver.state.secret = added.secret;
    const listed = await owner.get('/console/webhooks');
    expect(listed.body).not.toContain(added.secret);
    expect(listed.body).not.toContain('whsec_');
    expect(rowsOf(listed.body)).toEqual([
      [
        receiver.url,
        'Till sync',
        'booking.created booking.cancelled',
        'Enabled',
        '–',
        'Deliveries Send test event Delete…',
      ],
    ]);
    expectNamedControls(listed.body);
    // The row's buttons name their endpoint for a screen reader.
    expect(listed.body).toContain(
      `Send test event<span class="visually-hidden"> to ${receiver.url}</span></button>`,
    );

    const sent = await owner.post(`/console/webhooks/${added.id}/test`);
    expect(sent.statusCode, sent.body).toBe(303);
    expect(sent.headers.location).toBe(`/console/webhooks/${added.id}/deliveries?done=test_sent`);
    const queued = await owner.get(sent.headers.location as string);
    expect(queued.body).toContain('Test event queued');
    expect(rowsOf(queued.body)).toEqual([
      [expect.any(String), expect.any(String), 'Pending', '0', '–', '–', '–', expect.stringMatching(/\S/)],
    ]);

    expect(await deliver()).toMatchObject({ succeeded: 1, retried: 0, failed: 0 });
    expect(receiver.received.map((r) => [r.json.type, r.signed])).toEqual([['webhook.test', true]]);
    const eventId = receiver.received[0]!.json.id;
    const log = await owner.get(`/console/webhooks/${added.id}/deliveries`);
    expect(log.statusCode).toBe(200);
    expect(rowsOf(log.body)).toEqual([
      ['webhook.test', eventId, 'Succeeded', '1', '200', '–', expect.stringMatching(/\S/), '–'],
    ]);
    expect(log.body).not.toContain('Test event queued');
    expectNamedControls(log.body);

    // Deleting is stated first; the endpoint stays until the confirmation's button is pressed.
    const confirm = await owner.get(`/console/webhooks/${added.id}/delete`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Delete this webhook endpoint?');
    expect(confirm.body).toContain(`action="/console/webhooks/${added.id}/delete"`);
    expectNamedControls(confirm.body);
    expect((await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${added.id}` })).statusCode).toBe(
      200,
    );
    const deleted = await owner.post(`/console/webhooks/${added.id}/delete`);
    expect(deleted.statusCode).toBe(303);
    expect(deleted.headers.location).toBe('/console/webhooks?done=deleted');
    const after = await owner.get(deleted.headers.location as string);
    expect(after.body).toContain('Endpoint deleted: nothing more is sent to it.');
    expect(after.body).toContain('No endpoints yet.');
    expect((await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${added.id}` })).statusCode).toBe(
      404,
    );
    expect((await owner.get(`/console/webhooks/${added.id}/deliveries`)).statusCode).toBe(404);
    // Nothing more goes to it: a booking now is no delivery.
    await book('2026-11-24T10:00:00+00:00');
    expect(await deliver()).toMatchObject({ succeeded: 0 });
    expect(receiver.received).toHaveLength(1);
  });

  it.each([
    [
      'a private address',
      'https://10.1.2.3/in',
      ['booking.created'],
      'url reaches a private or link-local address',
    ],
    ['plain http to a public host', 'http://hooks.example.com/in', ['booking.created'], 'url must be https'],
    ['not a URL', 'hooks.example.com', ['booking.created'], 'url is not a valid URL.'],
    ['no events', 'https://hooks.example.com/in', [], 'events must name one or more of booking.created'],
    [
      'an unknown event',
      'https://hooks.example.com/in',
      ['booking.updated'],
      '(not &quot;booking.updated&quot;)',
    ],
  ])('says on the form why it refuses %s, keeping what was typed', async (_what, url, events, reason) => {
    const owner = await signIn('acme-hair', 'owner@acme.test');
    const refused = await owner.post('/console/webhooks', { url, events, description: 'Till <sync>' });
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.body).toMatch(/<p class="error" role="alert" id="endpoint-error">[^<]*/);
    expect(/<p class="error" role="alert" id="endpoint-error">([^<]*)<\/p>/.exec(refused.body)![1]).toContain(
      reason,
    );
    expect(refused.body).toContain(`value="${url}"`);
    expect(refused.body).toContain('value="Till &lt;sync&gt;"');
    for (const event of events.filter((e) => e !== 'booking.updated')) {
      expect(refused.body).toContain(`value="${event}" checked>`);
    }
    // The field at fault is marked for assistive technology.
    const field = events.length === 0 || events[0] === 'booking.updated' ? '<fieldset' : '<input id="url"';
    expect(refused.body).toMatch(
      new RegExp(`${field}[^>]*aria-invalid="true" aria-describedby="endpoint-error"`),
    );
    expect(refused.body).not.toContain('whsec_');
    expect((await t.request({ method: 'GET', url: '/v1/webhook-endpoints' })).json().data).toEqual([]);
  });

  it('adds one endpoint when its form is sent again (the answer reloaded), and says where it is', async () => {
    const owner = await signIn('acme-hair', 'owner@acme.test');
    const page = await owner.get('/console/webhooks');
    const form = /<form method="post" action="\/console\/webhooks"[^>]*>([\s\S]*?)<\/form>/.exec(
      page.body,
    )![1]!;
    const formId = /<input type="hidden" name="form_id" value="([^"]+)">/.exec(form)?.[1];
    expect(formId, 'the form carries a one-time id').toBeDefined();
    const typed = { form_id: formId!, url: receiver.url, events: ['booking.created'], description: 'Till' };
    const first = await owner.post('/console/webhooks', typed);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.body).toMatch(/aria-label="Signing secret">whsec_/);

    const again = await owner.post('/console/webhooks', typed);
    expect(again.statusCode).toBe(303);
    const listed = await t.request({ method: 'GET', url: '/v1/webhook-endpoints' });
    expect(listed.json().data).toHaveLength(1);
    const shown = await owner.get(String(again.headers.location));
    expect(shown.statusCode).toBe(200);
    expect(shown.body).not.toMatch(/whsec_/);
    expect(shown.body).toContain('already sent');
  });

  it('refuses a url sent twice rather than gluing the two together', async () => {
    const owner = await signIn('acme-hair', 'owner@acme.test');
    const refused = await owner.post('/console/webhooks', {
      url: [receiver.url, 'https://hooks.example.com/in'],
      events: ['booking.created'],
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('url must be one address.');
    expect((await t.request({ method: 'GET', url: '/v1/webhook-endpoints' })).json().data).toEqual([]);
  });

  it('shows an endpoint failing, then disabled by 410 Gone, and sends no test event to it', async () => {
    const owner = await signIn('acme-hair', 'owner@acme.test');
    const { id, secret } = await addEndpoint(owner, ['booking.created']);
    receiver.state.secret = secret;
    receiver.state.answers = [500, 410];
    await book('2026-11-24T11:00:00+00:00');
    expect(await deliver()).toMatchObject({ retried: 1 });
    const failing = await owner.get('/console/webhooks');
    const [row] = rowsOf(failing.body);
    expect(row![3]).toBe('Enabled');
    expect(row![4]).not.toBe('–');
    expect(failing.body).toContain(`<time datetime="2026-11-23T09:00:00Z">`);
    const retrying = rowsOf((await owner.get(`/console/webhooks/${id}/deliveries`)).body);
    expect(retrying).toEqual([
      [
        'booking.created',
        expect.any(String),
        'Pending',
        '1',
        '500',
        expect.any(String),
        expect.stringMatching(/\S/),
        expect.stringMatching(/\S/),
      ],
    ]);

    t.clock.advance({ minutes: 1 });
    expect(await deliver()).toMatchObject({ failed: 1 });
    const disabled = await owner.get('/console/webhooks');
    expect(rowsOf(disabled.body)[0]![3]).toMatch(/^Disabled on .+: it answered 410 Gone \(gone\)$/);
    expect(disabled.body).not.toContain('Send test event');
    const test = await owner.post(`/console/webhooks/${id}/test`);
    expect(test.statusCode).toBe(409);
    expect(test.body).toContain('This endpoint is disabled: nothing is sent to it.');
    const log = rowsOf((await owner.get(`/console/webhooks/${id}/deliveries`)).body);
    expect(log).toEqual([
      [
        'booking.created',
        expect.any(String),
        'Failed (given up)',
        '2',
        '410',
        expect.any(String),
        expect.stringMatching(/\S/),
        '–',
      ],
    ]);
  });

  it('pages the deliveries, the latest first, with Older and Latest links', async () => {
    const admin = await signIn('acme-hair', 'admin@acme.test');
    const { id } = await addEndpoint(admin, ['client.created']);
    for (let i = 0; i < 27; i++) {
      expect((await admin.post(`/console/webhooks/${id}/test`)).statusCode).toBe(303);
      t.clock.advance({ seconds: 1 });
    }
    const rest = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${id}/deliveries?limit=100` });
    const latestFirst: string[] = rest.json().data.map((d: { event_id: string }) => d.event_id);
    expect(latestFirst).toHaveLength(27);

    const first = await admin.get(`/console/webhooks/${id}/deliveries`);
    expect(rowsOf(first.body).map((cells) => cells[1])).toEqual(latestFirst.slice(0, 25));
    expect(first.body).not.toContain('Latest deliveries');
    const older = new RegExp(
      `href="(/console/webhooks/${id}/deliveries\\?before=[\\w.%-]+)">Older deliveries`,
    ).exec(first.body)![1]!;
    const second = await admin.get(older);
    expect(rowsOf(second.body).map((cells) => cells[1])).toEqual(latestFirst.slice(25));
    expect(second.body).toContain('Latest deliveries');
    expect(second.body).not.toContain('Older deliveries');
    expectNamedControls(second.body);

    // The link's cursor is sealed: not the log's sequence, which every organisation's deliveries share.
    const cursor = decodeURIComponent(older.split('before=')[1]!);
    const position = JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()).k;
    expect(String(position)).not.toMatch(/^\d+$/);
    // Signed by the organisation's cursor secret for this endpoint's log: not another endpoint's.
    const { id: otherEndpoint } = await addEndpoint(admin, ['booking.created']);
    const foreign = await admin.get(`/console/webhooks/${otherEndpoint}/deliveries?before=${cursor}`);
    expect(foreign.statusCode).toBe(400);

    for (const before of ['0', '-1', 'abc', '1e3', '1', '99999999999999999999']) {
      const bad = await admin.get(`/console/webhooks/${id}/deliveries?before=${before}`);
      expect(bad.statusCode, before).toBe(400);
      expect(bad.body).toContain('This page of deliveries does not exist');
    }
    t.clock.advance({ hours: 1 });
    const later = await signIn('acme-hair', 'admin@acme.test');
    expect((await later.get(older)).body).toContain('the link is over an hour old');
  });

  it('refuses staff, as the other owner and admin pages do, and hides the link', async () => {
    const owner = await signIn('acme-hair', 'owner@acme.test');
    const { id } = await addEndpoint(owner, ['booking.created']);
    const staff = await signIn('acme-hair', 'desk@acme.test');
    expect((await staff.get('/console/diary')).body).not.toContain('/console/webhooks');
    const attempts = [
      await staff.get('/console/webhooks'),
      await staff.post('/console/webhooks', { url: receiver.url, events: ['booking.created'] }),
      await staff.get(`/console/webhooks/${id}/deliveries`),
      await staff.get(`/console/webhooks/${id}/delete`),
      await staff.post(`/console/webhooks/${id}/test`),
      await staff.post(`/console/webhooks/${id}/delete`),
    ];
    for (const refused of attempts) {
      expect(refused.statusCode).toBe(403);
      expect(refused.body).toContain('Only owners and admins manage webhooks.');
    }
    const list = await t.request({ method: 'GET', url: '/v1/webhook-endpoints' });
    expect(list.json().data.map((e: { id: string }) => e.id)).toEqual([id]);
    expect((await staff.get('/console/keys')).statusCode).toBe(403);
    expect((await (await signIn('acme-hair', 'admin@acme.test')).get('/console/webhooks')).body).toContain(
      receiver.url,
    );
  });

  it("shows and changes no other organisation's endpoints, and takes only ids for one", async () => {
    const acme = await signIn('acme-hair', 'owner@acme.test');
    const { id } = await addEndpoint(acme, ['booking.created']);
    const beta = await signIn('beta-barbers', 'owner@beta.test');
    expect((await beta.get('/console/webhooks')).body).not.toContain(receiver.url);
    for (const response of [
      await beta.get(`/console/webhooks/${id}/deliveries`),
      await beta.get(`/console/webhooks/${id}/delete`),
      await beta.post(`/console/webhooks/${id}/test`),
      await beta.post(`/console/webhooks/${id}/delete`),
      await acme.get('/console/webhooks/not-an-id/deliveries'),
      await acme.post(`/console/webhooks/${encodeURIComponent("' OR ''='")}/delete`),
    ]) {
      expect(response.statusCode).toBe(404);
      expect(response.body).toContain('No webhook endpoint has this id.');
    }
    const list = await t.request({ method: 'GET', url: '/v1/webhook-endpoints' });
    expect(list.json().data.map((e: { id: string }) => e.id)).toEqual([id]);
  });
});
