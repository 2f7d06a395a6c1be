import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';
import { HostAuth, Jar, REDIRECT_URL, rawToolsList, startSignIn } from '../helpers/oauth-flow.ts';
import { onPostgres } from '../helpers/temp-database.ts';

/**
 * The consent form sent more than once for one sign-in (a double-click on Allow, a browser that sends
 * the form again): the first answer stands, and one connector is made, not one per submission.
 */
let server: ListeningApp;
let mcpUrl: URL;
const PASSWORD = 'correct horse battery';
const owner = { organisation: 'northside-hair', email: 'owner@northside.example', password: PASSWORD };

beforeAll(async () => {
  server = await startListeningApp();
  mcpUrl = new URL('/mcp', server.origin);
  await createUser(
    server.t.database.db,
    { organisationSlug: owner.organisation, email: owner.email, role: 'owner', password: PASSWORD },
    server.t.clock.nowMs(),
  );
});
afterAll(async () => {
  await server?.t.close();
});

/** The consent page of a new sign-in, opened in a browser: its form's address and the browser's jar. */
async function openConsentPage() {
  const auth = new HostAuth();
  const transport = await startSignIn(mcpUrl, auth);
  const jar = new Jar();
  let url = auth.authorizationUrl!;
  let response = await fetch(url, { redirect: 'manual' });
  jar.take(response);
  while (response.status >= 300 && response.status < 400) {
    url = new URL(response.headers.get('location')!, url);
    response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(response);
  }
  const page = await response.text();
  const action = new URL(/<form method="post" action="([^"]+)"/.exec(page)![1]!, url);
  return { auth, transport, jar, action };
}

/** The form sent with Allow by the owner, as the browser sends it; its answer, not followed. */
function postAllow(action: URL, jar: Jar, scope: string): Promise<Response> {
  return fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: jar.header(),
      origin: action.origin,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ ...owner, scope, decision: 'allow' }),
    // A request left unanswered fails here, not at the test's timeout.
    signal: AbortSignal.timeout(10_000),
  });
}

/**
 * The form sent with Allow, as the browser sends it, and the browser led on: to the host's callback,
 * or to the page it stopped at (its address and status).
 */
async function allow(action: URL, jar: Jar, scope: string): Promise<{ url: URL; status: number }> {
  let response = await postAllow(action, jar, scope);
  let url = action;
  while (response.status >= 300 && response.status < 400) {
    url = new URL(response.headers.get('location')!, url);
    if (url.href.startsWith(REDIRECT_URL)) return { url, status: response.status };
    response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
  }
  return { url, status: response.status };
}

const connectorsOf = (clientId: string) =>
  server.t.database.db.selectFrom('oauth_connectors').selectAll().where('client_id', '=', clientId).execute();

it('makes one connector when Allow is sent three times at once, answers each, and the host signs in', async () => {
  const { auth, transport, jar, action } = await openConsentPage();
  // Every answer leads the browser on: one to the host with the code, the others to the page saying
  // the sign-in has ended (once the first went on) or after the first.
  const answers = await Promise.all([
    allow(action, jar, 'bookings:write'),
    allow(action, jar, 'bookings:write'),
    allow(action, jar, 'bookings:write'),
  ]);
  const withCode = answers.map((answer) => answer.url).filter((url) => url.searchParams.has('code'));
  expect(withCode.length).toBeGreaterThan(0);
  // Each of the others reached the host too (an error for the code already given) or a page saying so.
  for (const { url, status } of answers) {
    if (!url.href.startsWith(REDIRECT_URL)) expect(status).toBe(400);
  }
  const connectors = await connectorsOf(auth.info!.client_id);
  expect(connectors.map((c) => c.scope)).toEqual(['bookings:write']);
  await transport.finishAuth(withCode[0]!.searchParams);
  expect((await rawToolsList(mcpUrl, auth.savedTokens!.access_token)).status).toBe(200);
});

it('keeps the first answer when the form comes again before the browser went on', async () => {
  const { auth, transport, jar, action } = await openConsentPage();
  const first = await postAllow(action, jar, 'bookings:read');
  const again = await postAllow(action, jar, 'bookings:write');
  expect(first.status).toBe(303);
  expect(again.status).toBe(303);
  expect(again.headers.get('location')).toBe(first.headers.get('location'));
  const resumed = await fetch(new URL(first.headers.get('location')!, action), {
    redirect: 'manual',
    headers: { cookie: jar.header() },
  });
  const callback = new URL(resumed.headers.get('location')!);
  expect(callback.href.startsWith(REDIRECT_URL)).toBe(true);
  await transport.finishAuth(callback.searchParams);
  expect(auth.savedTokens!.scope).toBe('bookings:read');
  expect((await connectorsOf(auth.info!.client_id)).map((c) => c.scope)).toEqual(['bookings:read']);
});

// The sign-in ending between the password check and the answer (its 15 minutes up, or another answer
// that won): a trigger ends it as the connector is recorded, the moment in between.
it('takes back the connector and grant of an answer whose sign-in ended meanwhile, and says it ended', async () => {
  const { auth, jar, action } = await openConsentPage();
  const db = server.t.database.db;
  if (onPostgres) {
    await sql`CREATE FUNCTION end_sign_in() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN DELETE FROM oauth_records WHERE kind = 'Interaction'; RETURN NEW; END $$`.execute(db);
    await sql`CREATE TRIGGER end_sign_in AFTER INSERT ON oauth_connectors
      FOR EACH ROW EXECUTE FUNCTION end_sign_in()`.execute(db);
  } else {
    await sql`CREATE TRIGGER end_sign_in AFTER INSERT ON oauth_connectors
      BEGIN DELETE FROM oauth_records WHERE kind = 'Interaction'; END`.execute(db);
  }
  try {
    const answer = await allow(action, jar, 'bookings:write');
    expect(answer.status).toBe(400);
    expect(await connectorsOf(auth.info!.client_id)).toEqual([]);
    const grants = await db
      .selectFrom('oauth_records')
      .select('kind')
      .where('kind', '=', 'Grant')
      .where('client_id', '=', auth.info!.client_id)
      .execute();
    expect(grants).toEqual([]);
  } finally {
    await sql`DROP TRIGGER end_sign_in${onPostgres ? sql` ON oauth_connectors` : sql``}`.execute(db);
  }
});
