import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { expectNamedControls, type SignedIn, signInToConsole } from '../helpers/console-session.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The console's API keys page as an owner uses it in a browser: a key's form sent twice (the answer
 * reloaded, which a browser does by posting the form again; a double click) issues one key, and
 * revoking a key asks first, on a page of its own.
 */
const PASSWORD = 'correct horse battery';
let t: TestApp;
let owner: SignedIn;

beforeAll(async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
  await createUser(
    t.database.db,
    { organisationSlug: 'northside-hair', email: 'owner@northside.test', role: 'owner', password: PASSWORD },
    t.clock.nowMs(),
  );
  owner = await signInToConsole(t, 'northside-hair', 'owner@northside.test', PASSWORD);
});
afterAll(async () => {
  await t.close();
});

const keysLabelled = async (label: string) =>
  t.database.db.selectFrom('api_keys').select(['id', 'revoked_at']).where('label', '=', label).execute();

/** The hidden fields of the page's key form, as a browser sends them with what the owner typed. */
function keyForm(html: string, typed: Record<string, string>): Record<string, string> {
  const form = /<form method="post" action="\/console\/keys"[^>]*>([\s\S]*?)<\/form>/.exec(html)![1]!;
  const hidden = Object.fromEntries(
    [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
  );
  delete hidden._csrf;
  return { ...hidden, ...typed };
}

it('issues one key when the form is sent again, and says where that key is', async () => {
  const page = await owner.get('/console/keys');
  const form = keyForm(page.body, { label: 'Reloaded tablet', scope: 'read_write' });
  const first = await owner.post('/console/keys', form);
  expect(first.statusCode).toBe(201);
  expect(first.body).toMatch(/bk_[0-9A-Za-z]{40}/);

  const again = await owner.post('/console/keys', form);
  expect(again.statusCode).toBe(303);
  expect(await keysLabelled('Reloaded tablet')).toHaveLength(1);
  const shown = await owner.get(String(again.headers.location));
  expect(shown.statusCode).toBe(200);
  expect(shown.body).not.toMatch(/bk_[0-9A-Za-z]{40}/);
  expect(shown.body).toContain('already sent');

  // The answer's own form is a fresh one: another key can be issued from it.
  const next = await owner.post(
    '/console/keys',
    keyForm(first.body, { label: 'Second tablet', scope: 'read' }),
  );
  expect(next.statusCode).toBe(201);
  expect(await keysLabelled('Second tablet')).toHaveLength(1);
});
it('asks before revoking a key, and revokes it only when confirmed', async () => {
  const created = await owner.post('/console/keys', { label: 'Old kiosk', scope: 'read' });
  expect(created.statusCode).toBe(201);
  const [key] = await keysLabelled('Old kiosk');
  // The list offers no one-click revoke: it links to a page that asks.
  const list = await owner.get('/console/keys');
  expect(list.body).not.toContain(`action="/console/keys/${key!.id}/revoke"`);
  expect(list.body).toContain(`href="/console/keys/${key!.id}/revoke"`);

  const ask = await owner.get(`/console/keys/${key!.id}/revoke`);
  expect(ask.statusCode).toBe(200);
  expect(ask.body).toContain('Revoke the key "Old kiosk"?');
  expect(ask.body).toContain(`action="/console/keys/${key!.id}/revoke"`);
  expect(ask.body).toContain('href="/console/keys"');
  expectNamedControls(ask.body);
  expect((await keysLabelled('Old kiosk'))[0]!.revoked_at).toBeNull();

  expect((await owner.post(`/console/keys/${key!.id}/revoke`)).statusCode).toBe(303);
  expect((await keysLabelled('Old kiosk'))[0]!.revoked_at).not.toBeNull();
  // A key already revoked, or none at all, has nothing to ask about.
  expect((await owner.get(`/console/keys/${key!.id}/revoke`)).statusCode).toBe(404);
  expect((await owner.get('/console/keys/not-a-key/revoke')).statusCode).toBe(404);
});
it('says a refused label or scope on the form, the typed values kept, and issues nothing', async () => {
  const blank = await owner.post('/console/keys', { label: '   ', scope: 'read_write' });
  expect(blank.statusCode).toBe(400);
  // The keys page again, not an error page with no way on: the reason beside the label, the form there.
  expect(blank.body).toContain('<h1>API keys</h1>');
  expect(blank.body).toMatch(
    /<p class="error" role="alert" id="key-error">A key label is 1 to 100 characters\.<\/p>/,
  );
  expect(blank.body).toMatch(/<input id="label" name="label"[^>]*aria-invalid="true"/);
  expect(blank.body).toMatch(/<option value="read_write" selected>/);
  expectNamedControls(blank.body);

  // A scope no key has (a tampered form) is refused, not quietly issued read-only.
  const tampered = await owner.post('/console/keys', { label: 'Front desk', scope: 'admin' });
  expect(tampered.statusCode).toBe(400);
  expect(tampered.body).toContain('Scope is read and write or read only.');
  expect(tampered.body).toMatch(/<input id="label" name="label"[^>]*value="Front desk"/);
  expect(await keysLabelled('Front desk')).toHaveLength(0);

  const fine = await owner.post('/console/keys', { label: 'Front desk', scope: 'read' });
  expect(fine.statusCode).toBe(201);
  expect(await keysLabelled('Front desk')).toHaveLength(1);
});
it('says plainly when the organisation has no API keys yet, instead of an empty table', async () => {
  // The test app issues its keys to the first catalogue's organisation: northside-hair here has none.
  const bare = await startTestApp({
    catalogues: [smallCatalogue(), demoCatalogue()],
    now: '2026-11-23T09:00:00Z',
  });
  try {
    await createUser(
      bare.database.db,
      {
        organisationSlug: 'northside-hair',
        email: 'owner@northside.test',
        role: 'owner',
        password: PASSWORD,
      },
      bare.clock.nowMs(),
    );
    const signedIn = await signInToConsole(bare, 'northside-hair', 'owner@northside.test', PASSWORD);
    const page = await signedIn.get('/console/keys');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<p>No API keys yet.</p>');
    expect(page.body).not.toContain('<th>Label</th>');
    // The form to issue the first one is still there.
    expect(page.body).toContain('action="/console/keys"');
    // Once a key exists, the table lists it and the empty state is gone.
    expect((await signedIn.post('/console/keys', { label: 'First key', scope: 'read' })).statusCode).toBe(
      201,
    );
    const listed = await signedIn.get('/console/keys');
    expect(listed.body).not.toContain('No API keys yet.');
    expect(listed.body).toContain('<td>First key</td>');
  } finally {
    await bare.close();
  }
});
