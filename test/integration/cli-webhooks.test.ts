import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliverAllDueWebhooks } from '../../src/app/webhooks/delivery.ts';
import { httpSender } from '../../src/app/webhooks/sender.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * `booking webhooks create|list|delete` as an operator runs them: child processes on the test app's
 * database, checked against what the REST API reads back and against real deliveries (the secret the
 * command prints must verify the signature; the status it lists must be what delivery made of the
 * endpoint). Two organisations, so that each command sees only its own.
 */
const LOOPBACK_ALLOWED = { allowInsecure: true, allowPrivateNetworks: false };
/** A test here runs up to seven processes, each loading the whole command: slow on a busy machine. */
const CLI_TIMEOUT = 90_000;

let t: TestApp;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
const sender = httpSender(LOOPBACK_ALLOWED, 2_000);
/** The settings `booking serve` would run with in the tests: plain http to loopback allowed. */
let insecure: Record<string, string>;
/** The same database with the strict default policy (the variables set empty, whatever the shell has). */
let strict: Record<string, string>;
let otherKey: string;

beforeAll(async () => {
  t = await startTestApp({
    catalogues: [smallCatalogue(), smallCatalogue({ slug: 'other-hair', prefix: 'OT' })],
    webhookDestinations: LOOPBACK_ALLOWED,
  });
  otherKey = await t.keyFor('other-hair');
  receiver = await startWebhookReceiver({ nowSeconds: () => Math.floor(t.clock.nowMs() / 1000) });
  strict = {
    DATABASE_URL: t.database.url,
    WEBHOOK_ALLOW_INSECURE: '',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: '',
  };
  insecure = { ...strict, WEBHOOK_ALLOW_INSECURE: '1' };
});
afterAll(async () => {
  sender.close();
  await receiver.close();
  await t.close();
});
beforeEach(() => {
  t.clock.set(TEST_START);
  receiver.received.length = 0;
  receiver.state.answers = [];
  receiver.state.fallback = 200;
});
afterEach(async () => {
  // Over REST, which is quicker than a process per endpoint; the commands are what the tests try.
  for (const key of [t.keys.readWrite, otherKey]) {
    const listed = await t.request({ method: 'GET', url: '/v1/webhook-endpoints', key });
    for (const endpoint of listed.json().data as { id: string }[]) {
      await t.request({ method: 'DELETE', url: `/v1/webhook-endpoints/${endpoint.id}`, key });
    }
  }
});

const deliver = () => deliverAllDueWebhooks({ db: t.database.db, clock: t.clock, sender });

/** Queues a webhook.test event to the endpoint over REST (acme-hair's key). */
async function sendTest(id: string): Promise<string> {
  const sent = await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${id}/test` });
  expect(sent.statusCode, sent.body).toBe(202);
  return sent.json().data.event_id;
}

async function createJson(args: string[], env = insecure) {
  const created = await runCliAsync(['webhooks', 'create', '--json', ...args], env);
  expect(created.status, created.stderr).toBe(0);
  return JSON.parse(created.stdout) as Record<string, unknown> & { id: string; secret: string };
}

/** An endpoint made over REST, for the tests of list and delete (a process costs a second or two). */
async function subscribe(
  payload: { url: string; events: string[]; description?: string },
  key = t.keys.readWrite,
): Promise<{ id: string; secret: string }> {
  const created = await t.request({ method: 'POST', url: '/v1/webhook-endpoints', payload, key });
  expect(created.statusCode, created.body).toBe(201);
  return created.json().data;
}

describe('booking webhooks create', { timeout: CLI_TIMEOUT }, () => {
  it('prints the endpoint and its secret once, and the secret is the one deliveries are signed with', async () => {
    const created = await runCliAsync(
      [
        'webhooks',
        'create',
        '--org',
        'acme-hair',
        '--url',
        receiver.url,
        '--events',
        'booking.created, booking.cancelled',
        '--description',
        'Front desk CRM',
      ],
      insecure,
    );
    expect(created.status, created.stderr).toBe(0);
    const lines = created.stdout.trimEnd().split('\n');
    const id = /^Created webhook endpoint ([0-9a-f-]{36}) for (\S+)\.$/.exec(lines[0]!);
    expect(id?.[2]).toBe(receiver.url);
    expect(lines[1]).toBe('Events: booking.created, booking.cancelled');
    const secret = /^Signing secret \(shown only once; it cannot be shown again\): (whsec_\S+)$/.exec(
      lines[2]!,
    );
    expect(secret).not.toBeNull();
    expect(lines).toHaveLength(3);
    expect(created.stderr).toBe('');

    // The REST API reads the same endpoint back, without the secret.
    const got = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${id![1]}` });
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json().data).toMatchObject({
      url: receiver.url,
      description: 'Front desk CRM',
      events: ['booking.created', 'booking.cancelled'],
      status: 'enabled',
    });
    expect(got.body).not.toContain(secret![1]);

    receiver.state.secret = secret![1]!;
    const eventId = await sendTest(id![1]!);
    expect(await deliver()).toMatchObject({ succeeded: 1 });
    expect(receiver.received.map((r) => [r.json.id, r.signed])).toEqual([[eventId, true]]);
  });

  it('answers --json as the REST API does, the secret included', async () => {
    const created = await createJson([
      '--org',
      'acme-hair',
      '--url',
      receiver.url,
      '--events',
      'client.created',
    ]);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    const got = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${created.id}` });
    const { secret, ...rest } = created;
    expect(rest).toEqual(got.json().data);
    expect(rest).toMatchObject({ description: null, status: 'enabled', failing_since: null });
  });

  it('subscribes to the events of every --events given, not only the last one', async () => {
    const created = await createJson([
      '--org',
      'acme-hair',
      '--url',
      receiver.url,
      '--events',
      'booking.created,booking.cancelled',
      '--events',
      'client.created',
    ]);
    expect(created.events).toEqual(['booking.created', 'booking.cancelled', 'client.created']);
    const got = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${created.id}` });
    expect(got.json().data.events).toEqual(['booking.created', 'booking.cancelled', 'client.created']);
  });

  it('takes events separated by spaces after one --events too, with the options after them read as options', async () => {
    const created = await createJson([
      '--org',
      'acme-hair',
      '--events',
      'booking.created',
      'booking.cancelled,client.created',
      '--url',
      receiver.url,
    ]);
    expect(created.events).toEqual(['booking.created', 'booking.cancelled', 'client.created']);
    expect(created.url).toBe(receiver.url);
  });

  it('applies the URL policy of the environment, as `booking serve` does', async () => {
    const run = (url: string, env: Record<string, string>) =>
      runCliAsync(
        ['webhooks', 'create', '--org', 'acme-hair', '--url', url, '--events', 'booking.created'],
        env,
      );
    const [plain, plainAllowed, secure, privateRefused, privateAllowed, metadata] = await Promise.all([
      run(receiver.url, strict),
      run(receiver.url, insecure),
      run('https://127.0.0.1:9/hooks', strict),
      run('https://10.1.2.3/hooks', insecure),
      run('https://10.1.2.3/hooks', { ...strict, WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' }),
      run('https://169.254.169.254/latest', {
        ...strict,
        WEBHOOK_ALLOW_INSECURE: '1',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
      }),
    ]);
    expect(plain).toMatchObject({ status: 1, stdout: '' });
    expect(plain.stderr).toBe(
      'error: url must be https (plain http only to loopback, with WEBHOOK_ALLOW_INSECURE=1).\n',
    );
    expect(plainAllowed.status, plainAllowed.stderr).toBe(0);
    expect(secure).toMatchObject({ status: 1, stdout: '' });
    expect(secure.stderr).toContain('loopback address (allowed only with WEBHOOK_ALLOW_INSECURE=1)');
    expect(privateRefused.status).toBe(1);
    expect(privateRefused.stderr).toContain('WEBHOOK_ALLOW_PRIVATE_NETWORKS=1');
    expect(privateAllowed.status, privateAllowed.stderr).toBe(0);
    expect(metadata.status).toBe(1);
    expect(metadata.stderr).toContain('never allowed');
    for (const refused of [plain, secure, privateRefused, metadata]) {
      expect(refused.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    }
    // Only the two accepted were saved.
    const listed = await runCliAsync(['webhooks', 'list', '--org', 'acme-hair', '--json'], strict);
    expect((JSON.parse(listed.stdout) as { url: string }[]).map((e) => e.url).sort()).toEqual([
      receiver.url,
      'https://10.1.2.3/hooks',
    ]);
  });

  it('refuses an unknown organisation, an unknown event or no event with one line each', async () => {
    const base = ['webhooks', 'create', '--url', receiver.url];
    const [org, event, none] = await Promise.all([
      runCliAsync([...base, '--org', 'nobody', '--events', 'booking.created'], insecure),
      runCliAsync([...base, '--org', 'acme-hair', '--events', 'booking.created,booking.updated'], insecure),
      runCliAsync([...base, '--org', 'acme-hair', '--events', ' , '], insecure),
    ]);
    expect(org).toMatchObject({
      status: 1,
      stdout: '',
      stderr: 'error: No organisation has the slug "nobody".\n',
    });
    expect(event).toMatchObject({ status: 1, stdout: '' });
    expect(event.stderr).toMatch(
      /^error: events must name one or more of booking\.created, .*\(not "booking\.updated"\)\.\n$/,
    );
    expect(none).toMatchObject({ status: 1, stdout: '' });
    expect(none.stderr).toMatch(/^error: events must name one or more of .*waitlist\.claimed\.\n$/);
  });
});

describe('booking webhooks list', { timeout: CLI_TIMEOUT }, () => {
  it('lists the REST resources as --json and the status, failures and reasons as text, never a secret', async () => {
    const failing = await subscribe({ url: `${receiver.url}/failing`, events: ['booking.created'] });
    const gone = await subscribe({ url: `${receiver.url}/gone`, events: ['booking.no_show'] });
    const fine = await subscribe({
      url: receiver.url,
      events: ['message.created', 'client.created'],
      description: 'CRM sync',
    });
    const other = await subscribe({ url: receiver.url, events: ['booking.created'] }, otherKey);

    // One attempt each: 500 leaves `failing` failing (retried later), 410 disables `gone` at once.
    receiver.state.answers = [500];
    await sendTest(failing.id);
    expect(await deliver()).toMatchObject({ retried: 1 });
    receiver.state.answers = [410];
    await sendTest(gone.id);
    // Before the failed delivery's retry falls due, so that only `gone` is tried here.
    t.clock.advance({ seconds: 30 });
    expect(await deliver()).toMatchObject({ failed: 1 });

    const [json, text] = await Promise.all([
      runCliAsync(['webhooks', 'list', '--org', 'acme-hair', '--json'], strict),
      runCliAsync(['webhooks', 'list', '--org', 'acme-hair'], strict),
    ]);
    expect(json.status, json.stderr).toBe(0);
    const rest = await t.request({ method: 'GET', url: '/v1/webhook-endpoints' });
    expect(JSON.parse(json.stdout)).toEqual(rest.json().data);
    expect(
      JSON.parse(json.stdout)
        .map((e: { id: string }) => e.id)
        .sort(),
    ).toEqual([failing.id, gone.id, fine.id].sort());

    expect(text.status, text.stderr).toBe(0);
    const lineOf = (id: string) => text.stdout.split('\n').find((line) => line.startsWith(id));
    expect(lineOf(fine.id)).toBe(
      `${fine.id}  enabled  ${receiver.url}  message.created,client.created  CRM sync`,
    );
    expect(lineOf(failing.id)).toBe(
      `${failing.id}  enabled  ${receiver.url}/failing  booking.created  failing since 2026-11-23T09:00:00Z`,
    );
    expect(lineOf(gone.id)).toBe(
      `${gone.id}  disabled 2026-11-23T09:00:30Z (it answered 410 Gone)  ${receiver.url}/gone  booking.no_show`,
    );
    expect(text.stdout.trimEnd().split('\n')).toHaveLength(3);

    for (const out of [json.stdout, text.stdout]) {
      expect(out).not.toContain(other.id);
      for (const secret of [failing, gone, fine].map((e) => e.secret)) expect(out).not.toContain(secret);
      expect(out).not.toContain('whsec_');
    }
  });

  // A description is an integrator's text (any read_write key may set it over REST): escape sequences in
  // it would retitle the operator's terminal, erase the line or overwrite it (CR) with a line of its own.
  it("shows an integrator's control characters escaped, never to the terminal as they are", async () => {
    const description = 'CRM\u001b]0;owned\u0007\u001b[2K\rFAKE\u007f\u009b31m';
    const endpoint = await subscribe({ url: receiver.url, events: ['booking.created'], description });
    const [json, text] = await Promise.all([
      runCliAsync(['webhooks', 'list', '--org', 'acme-hair', '--json'], strict),
      runCliAsync(['webhooks', 'list', '--org', 'acme-hair'], strict),
    ]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toBe(
      `${endpoint.id}  enabled  ${receiver.url}  booking.created  ` +
        'CRM\\u001b]0;owned\\u0007\\u001b[2K\\u000dFAKE\\u007f\\u009b31m\n',
    );
    expect(json.status, json.stderr).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
    expect(json.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(JSON.parse(json.stdout)[0].description).toBe(description);
  });

  it('says when there are none, and refuses an unknown organisation', async () => {
    const [none, unknown] = await Promise.all([
      runCliAsync(['webhooks', 'list', '--org', 'acme-hair'], strict),
      runCliAsync(['webhooks', 'list', '--org', 'nobody', '--json'], strict),
    ]);
    expect(none).toMatchObject({ status: 0, stdout: 'No webhook endpoints.\n' });
    expect(unknown).toMatchObject({
      status: 1,
      stdout: '',
      stderr: 'error: No organisation has the slug "nobody".\n',
    });
  });
});

describe('booking webhooks delete', { timeout: CLI_TIMEOUT }, () => {
  it("deletes an endpoint of the organisation, and refuses another's id or an unknown one", async () => {
    const mine = await subscribe({ url: receiver.url, events: ['booking.created'] });
    const theirs = await subscribe({ url: receiver.url, events: ['booking.created'] }, otherKey);

    const [across, unknown, noOrg] = await Promise.all([
      runCliAsync(['webhooks', 'delete', '--org', 'acme-hair', theirs.id], strict),
      runCliAsync(['webhooks', 'delete', '--org', 'acme-hair', 'not-an-endpoint'], strict),
      runCliAsync(['webhooks', 'delete', '--org', 'nobody', mine.id], strict),
    ]);
    expect(across).toMatchObject({
      status: 1,
      stdout: '',
      stderr: `error: No webhook endpoint of acme-hair has the id "${theirs.id}".\n`,
    });
    expect(unknown).toMatchObject({
      status: 1,
      stderr: 'error: No webhook endpoint of acme-hair has the id "not-an-endpoint".\n',
    });
    expect(noOrg).toMatchObject({ status: 1, stderr: 'error: No organisation has the slug "nobody".\n' });

    // An id is read whatever its case, as REST reads it.
    const deleted = await runCliAsync(
      ['webhooks', 'delete', '--org', 'acme-hair', mine.id.toUpperCase()],
      strict,
    );
    expect(deleted).toMatchObject({ status: 0, stdout: `Deleted webhook endpoint ${mine.id}.\n` });
    const gone = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${mine.id}` });
    expect(gone.statusCode).toBe(404);
    // The other organisation's endpoint is untouched.
    const still = await runCliAsync(['webhooks', 'list', '--org', 'other-hair', '--json'], strict);
    expect(JSON.parse(still.stdout).map((e: { id: string }) => e.id)).toEqual([theirs.id]);
  });
});
