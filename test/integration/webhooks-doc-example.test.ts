import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverAllDueWebhooks } from '../../src/app/webhooks/delivery.ts';
import { httpSender, type WebhookSender } from '../../src/app/webhooks/sender.ts';
import { signatureHeader } from '../../src/app/webhooks/signature.ts';
import { REPO_ROOT } from '../helpers/cli.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The receiver example of docs/webhooks.md, taken from the page as it is and run as a user would run
 * it (node receiver.mjs), fed real deliveries: it must accept the genuine one, and refuse one whose
 * body was changed on the way or whose signature is too old. The app's clock starts at the real time,
 * as the example checks the signature's timestamp against its own clock.
 */
const LOOPBACK_ALLOWED = { allowInsecure: true, allowPrivateNetworks: false };

/** The page's receiver: the ```js block that starts `// receiver.mjs`. */
function receiverExample(markdown: string): string {
  const blocks = [...markdown.matchAll(/^```js\n(\/\/ receiver\.mjs[^\n]*\n[\s\S]*?)^```$/gm)];
  if (blocks.length !== 1) throw new Error(`expected one receiver example, found ${blocks.length}`);
  return blocks[0]![1]!;
}

let t: TestApp;
let dir: string;
let child: ChildProcess;
let stdout = '';
let stderr = '';
let url: string;
let endpointId: string;
const real = httpSender(LOOPBACK_ALLOWED, 5_000);

/** A port nobody listens on now, for the example to listen on (it is started before the endpoint exists). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${stdout}\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  t = await startTestApp({
    now: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString(),
    webhookDestinations: LOOPBACK_ALLOWED,
  });
  const port = await freePort();
  url = `http://127.0.0.1:${port}/webhooks`;
  const created = await t.request({
    method: 'POST',
    url: '/v1/webhook-endpoints',
    payload: { url, events: ['booking.created'] },
  });
  expect(created.statusCode, created.body).toBe(201);
  endpointId = created.json().data.id;

  dir = mkdtempSync(path.join(tmpdir(), 'webhook-receiver-'));
  const file = path.join(dir, 'receiver.mjs');
  writeFileSync(file, receiverExample(readFileSync(path.join(REPO_ROOT, 'docs/webhooks.md'), 'utf8')));
  child = spawn(process.execPath, [file], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: created.json().data.secret, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  await until(() => stdout.includes(`listening on port ${port}`), 'the example to listen');
});
afterAll(async () => {
  real.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill();
    await exited;
  }
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Queues a webhook.test event to the endpoint; its id. */
async function queueTestEvent(): Promise<string> {
  const sent = await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${endpointId}/test` });
  expect(sent.statusCode, sent.body).toBe(202);
  return sent.json().data.event_id;
}

const deliver = (sender: WebhookSender) =>
  deliverAllDueWebhooks({ db: t.database.db, clock: t.clock, sender });

async function latestDelivery() {
  const log = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpointId}/deliveries` });
  return log.json().data[0] as { event_id: string; status: string; attempt: number; response_code: number };
}

/** The lines the example printed for an event. */
const linesFor = (eventId: string) => stdout.split('\n').filter((line) => line.includes(eventId));

/** Waits for the example to print that it handled the event (its stdout comes through a pipe, a little late). */
const handled = (eventId: string) => until(() => linesFor(eventId).length > 0, `event ${eventId}`);

describe('the receiver example of docs/webhooks.md', () => {
  it('accepts a genuine delivery once, however often it comes', async () => {
    let recorded: { headers: Record<string, string>; body: string } | undefined;
    const recording: WebhookSender = {
      post(to, headers, body) {
        recorded = { headers, body };
        return real.post(to, headers, body);
      },
      close() {},
    };
    const eventId = await queueTestEvent();
    expect(await deliver(recording)).toMatchObject({ succeeded: 1, retried: 0 });
    await handled(eventId);
    expect(linesFor(eventId)).toEqual([`received webhook.test ${eventId}`]);
    expect(await latestDelivery()).toMatchObject({ event_id: eventId, status: 'succeeded', attempt: 1 });

    // The same delivery again (a retry after a lost answer): accepted, not handled twice.
    const again = await fetch(url, { method: 'POST', headers: recorded!.headers, body: recorded!.body });
    expect(again.status).toBeGreaterThanOrEqual(200);
    expect(again.status).toBeLessThan(300);
    // A later event's line comes after anything the repeat printed.
    const next = await queueTestEvent();
    expect(await deliver(real)).toMatchObject({ succeeded: 1 });
    await handled(next);
    expect(linesFor(eventId)).toHaveLength(1);
  });

  it('refuses a body changed on the way, and takes the retry that comes unchanged', async () => {
    const tampering: WebhookSender = {
      post: (to, headers, body) =>
        real.post(to, headers, body.replace('"webhook.test"', '"booking.created"')),
      close() {},
    };
    const eventId = await queueTestEvent();
    expect(await deliver(tampering)).toMatchObject({ succeeded: 0, retried: 1 });
    const refused = await latestDelivery();
    expect(refused).toMatchObject({ event_id: eventId, status: 'pending', attempt: 1, response_code: 400 });

    t.clock.advance({ minutes: 1 });
    expect(await deliver(real)).toMatchObject({ succeeded: 1 });
    await handled(eventId);
    // Once: the changed body was not handled.
    expect(linesFor(eventId)).toEqual([`received webhook.test ${eventId}`]);
    expect(await latestDelivery()).toMatchObject({ event_id: eventId, status: 'succeeded', attempt: 2 });
  });

  it('refuses a signature made more than five minutes ago (a replay)', async () => {
    t.clock.set(new Date(Date.now() - 10 * 60_000).toISOString());
    const eventId = await queueTestEvent();
    expect(await deliver(real)).toMatchObject({ succeeded: 0, retried: 1 });
    expect(await latestDelivery()).toMatchObject({
      event_id: eventId,
      status: 'pending',
      response_code: 400,
    });

    // Its retry, signed now, is taken; the stale attempt was not handled.
    t.clock.set(new Date().toISOString());
    expect(await deliver(real)).toMatchObject({ succeeded: 1 });
    await handled(eventId);
    expect(linesFor(eventId)).toHaveLength(1);
    expect(stderr).toBe('');
  });
});

/** The worked signature of docs/webhooks.md: its ```sh block, and the header shown above it. */
function signatureExample(markdown: string) {
  const block = /^```sh\n(secret='[^\n]*\n[\s\S]*?)^```$/m.exec(markdown)?.[1];
  if (!block) throw new Error('no signature example');
  const value = (name: string) => new RegExp(`^${name}='?([^'\\n]*)'?$`, 'm').exec(block)?.[1] ?? '';
  const shown = /^```text\n(t=\d+,v1=[0-9a-f]{64})\n```$/m.exec(markdown)?.[1];
  const printed = /^# SHA2-256\(stdin\)= ([0-9a-f]{64})$/m.exec(block)?.[1];
  return { block, secret: value('secret'), t: Number(value('t')), body: value('body'), shown, printed };
}

describe('the worked signature of docs/webhooks.md', () => {
  const example = signatureExample(readFileSync(path.join(REPO_ROOT, 'docs/webhooks.md'), 'utf8'));

  it('is the header the server signs that body with, and its body is one as sent', async () => {
    expect(example.secret).toMatch(/^whsec_/);
    expect(signatureHeader(example.secret, example.body, example.t)).toBe(example.shown);
    expect(example.shown).toBe(`t=${example.t},v1=${example.printed}`);
    const event = JSON.parse(example.body);
    // Compact, on one line, as the server writes it.
    expect(JSON.stringify(event)).toBe(example.body);
    // Its data a Client with the fields, in the order, that the REST API answers.
    const client = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Jo', last_name: 'Bloggs', email: 'jo.bloggs@example.com' },
    });
    expect(Object.keys(event.data)).toEqual(Object.keys(client.json().data));
  });

  it.skipIf(spawnSync('openssl', ['version']).status !== 0)('prints with openssl what it says', () => {
    const run = spawnSync('bash', ['-c', example.block], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe(`SHA2-256(stdin)= ${example.printed}`);
  });
});
