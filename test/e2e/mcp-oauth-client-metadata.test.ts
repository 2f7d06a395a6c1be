import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { openDatabase } from '../../src/data/database.ts';
import { CLIENT_METADATA_FETCHES_PER_MINUTE } from '../../src/http/oauth/authorization-server.ts';
import { startServer } from '../helpers/cli.ts';
import { connectWith, consent, HostAuth, REDIRECT_URL, startSignIn } from '../helpers/oauth-flow.ts';
import { eachTestServes, prepareDatabase } from '../helpers/served-database.ts';

/**
 * Client ID Metadata Documents (design.md 9.3), end to end: the SDK 2.x client names the https URL of
 * its metadata document as its client_id (no registration), and `booking serve` fetches that document.
 * The document is served on this machine over TLS with a certificate made here, which the server
 * trusts through NODE_EXTRA_CA_CERTS; a document on loopback is fetched only with
 * OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK=1 (by default the library's guard refuses private addresses).
 */
const served = eachTestServes('booking-cimd-');
let dir: string;
let documentServer: Server;
let clientId: string;
/** What the document server was asked for, in order. */
const requested: string[] = [];
/** The key of a client that authenticates with a signed assertion (private_key_jwt). */
const assertionKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
/** An extra member that makes a document far larger than any real one (about 2 MB). */
const PADDING = 'x'.repeat(2_000_000);
const PASSWORD = 'correct horse battery';
const owner = { organisation: 'acme-hair', email: 'owner@acme.example', password: PASSWORD };

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'booking-cimd-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  documentServer = createServer(
    { cert: readFileSync(path.join(dir, 'cert.pem')), key: readFileSync(path.join(dir, 'key.pem')) },
    (request, response) => {
      requested.push(request.url ?? '');
      // A sector identifier list, and a key set of one real key, each padded to megabytes.
      if (request.url === '/oauth/sector.json') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(['https://app.example/callback', PADDING]));
        return;
      }
      if (request.url === '/oauth/jwks.json') {
        const jwk = { ...assertionKey.publicKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig' };
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ keys: [jwk], padding: PADDING }));
        return;
      }
      // A desktop host's document names its loopback redirect URI without a port (it listens on one of
      // the moment) and, as most do, no application_type.
      const desktop = request.url === '/oauth/desktop.json';
      if (request.url !== '/oauth/client.json' && !desktop) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          client_id: desktop ? clientId.replace('client.json', 'desktop.json') : clientId,
          client_name: 'Metadata host',
          redirect_uris: [desktop ? 'http://127.0.0.1/callback' : REDIRECT_URL],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        }),
      );
    },
  );
  await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
  clientId = `https://localhost:${(documentServer.address() as AddressInfo).port}/oauth/client.json`;
});
afterAll(async () => {
  await new Promise((resolve) => documentServer?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function serve(env: Record<string, string>) {
  await prepareDatabase(served.env.DATABASE_URL!, { keys: [] });
  const handle = openDatabase(served.env.DATABASE_URL!);
  await createUser(
    handle.db,
    { organisationSlug: 'acme-hair', email: owner.email, role: 'owner', password: PASSWORD },
    Date.now(),
  );
  await handle.close();
  served.server = await startServer(['--port', '0'], {
    ...served.env,
    NODE_EXTRA_CA_CERTS: path.join(dir, 'cert.pem'),
    ...env,
  });
  return new URL('/mcp', served.server.url);
}

it('signs in a client named by its metadata document, without registering it', async () => {
  const mcpUrl = await serve({ OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK: '1' });
  const auth = new HostAuth({ clientMetadataUrl: clientId });
  const transport = await startSignIn(mcpUrl, auth);
  // The SDK names its document instead of registering: the metadata says the server takes them.
  expect(auth.info?.client_id).toBe(clientId);
  expect(auth.authorizationUrl!.searchParams.get('client_id')).toBe(clientId);
  const outcome = await consent(auth.authorizationUrl!, { ...owner, scope: 'bookings:read' });
  // The consent page names the client as its document does, and by the URL that vouches for it.
  expect(outcome.page).toContain('Metadata host');
  expect(outcome.page).toContain(clientId);
  await transport.finishAuth(outcome.callback.searchParams);
  const client = await connectWith(mcpUrl, auth);
  try {
    const result = await client.callTool({ name: 'list_locations', arguments: {} });
    expect(result.isError).toBeFalsy();
  } finally {
    await client.close();
  }
  // Standard output carries the listening line alone: the OAuth library printed notices about its
  // experimental features there at the first sign-in, where scripts read the server's URL.
  expect(served.server!.stdout().trim().split('\n')).toEqual([`listening on ${served.server!.url}`]);
});

it('sends a desktop host back to its loopback redirect URI on the port it listens on (RFC 8252)', async () => {
  const mcpUrl = await serve({ OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK: '1' });
  const auth = new HostAuth({ clientMetadataUrl: clientId.replace('client.json', 'desktop.json') });
  const transport = await startSignIn(mcpUrl, auth);
  expect(auth.authorizationUrl!.searchParams.get('redirect_uri')).toBe(REDIRECT_URL);
  const outcome = await consent(auth.authorizationUrl!, owner);
  await transport.finishAuth(outcome.callback.searchParams);
  const client = await connectWith(mcpUrl, auth);
  await client.close();
});

it('does not fetch a metadata document from this machine unless the setting allows it', async () => {
  const mcpUrl = await serve({});
  const auth = new HostAuth({ clientMetadataUrl: clientId });
  await startSignIn(mcpUrl, auth);
  const response = await fetch(auth.authorizationUrl!, { redirect: 'manual' });
  expect(response.status).toBe(400);
  expect(await response.text()).toContain('client_id metadata document fetch not allowed');
});

it('leaves standard output to the listening line through a browser client’s sign-in, an ID token and a revocation', async () => {
  const mcpUrl = await serve({});
  const registered = await register(mcpUrl, {
    redirect_uris: [REDIRECT_URL],
    token_endpoint_auth_method: 'none',
    scope: 'openid bookings:read',
  });
  const id = registered.body.client_id!;
  const verifier = 'v'.repeat(43);
  const authorization = new URL('/oauth/authorize', mcpUrl);
  authorization.search = new URLSearchParams({
    client_id: id,
    response_type: 'code',
    redirect_uri: REDIRECT_URL,
    scope: 'openid bookings:read',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'page-state',
  }).toString();
  const outcome = await consent(authorization, { ...owner, scope: 'bookings:read' });
  // A page on the host's origin exchanges the code and, at disconnect, revokes its refresh token.
  const fromPage = { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://127.0.0.1:9' };
  const token = await fetch(new URL('/oauth/token', mcpUrl), {
    method: 'POST',
    headers: fromPage,
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: outcome.callback.searchParams.get('code')!,
      redirect_uri: REDIRECT_URL,
      code_verifier: verifier,
      client_id: id,
    }),
  });
  expect(token.status).toBe(200);
  expect(token.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:9');
  const tokens = (await token.json()) as Record<string, string>;
  expect(tokens.id_token).toBeDefined();
  const revoked = await fetch(new URL('/oauth/revoke', mcpUrl), {
    method: 'POST',
    headers: fromPage,
    body: new URLSearchParams({ token: tokens.refresh_token!, client_id: id }),
  });
  expect(revoked.status).toBe(200);
  // The library printed a notice there for each of its defaults first used: who may call from a page
  // (CORS), who may revoke a token, and how long an ID token lasts.
  expect(served.server!.stdout().trim().split('\n')).toEqual([`listening on ${served.server!.url}`]);
});

it('fetches a metadata document once per sign-in request, and a bounded number a minute for one address', async () => {
  const mcpUrl = await serve({ OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK: '1' });
  // The limit's windows are whole minutes of the clock: the requests are all sent within one.
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 30_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
  requested.length = 0;
  // Anonymous requests naming documents that cannot be read (404), each another one, as a flood would;
  // without a scope, so the server looks the client up before the library does.
  const statuses: number[] = [];
  const pages: string[] = [];
  for (let i = 0; i < CLIENT_METADATA_FETCHES_PER_MINUTE + 3; i++) {
    const authorization = new URL('/oauth/authorize', mcpUrl);
    authorization.search = new URLSearchParams({
      client_id: clientId.replace('client.json', `missing-${i}.json`),
      response_type: 'code',
      redirect_uri: REDIRECT_URL,
      code_challenge: 'c'.repeat(43),
      code_challenge_method: 'S256',
      state: `s${i}`,
    }).toString();
    const response = await fetch(authorization, { redirect: 'manual' });
    statuses.push(response.status);
    pages.push(await response.text());
    if (i >= CLIENT_METADATA_FETCHES_PER_MINUTE) {
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }
  const admitted = CLIENT_METADATA_FETCHES_PER_MINUTE;
  // Each request within the limit fetched its document once (not once per lookup), and was refused
  // for it; past the limit nothing more was fetched, and the page says why, with no server error.
  expect(requested).toEqual(Array.from({ length: admitted }, (_, i) => `/oauth/missing-${i}.json`));
  expect(statuses.slice(0, admitted)).toEqual(Array(admitted).fill(400));
  expect(pages[0]).toContain('client_id metadata document fetch failed');
  expect(statuses.slice(admitted)).toEqual([429, 429, 429]);
  for (const refused of pages.slice(admitted)) {
    expect(refused).toContain('Sign-in failed');
    expect(refused).toContain('rate_limited');
    expect(refused).toContain('Wait a minute');
  }
  expect(served.server!.stderr()).not.toContain('OAuth server failed');
});

/** A dynamic registration (RFC 7591) at the server, as anyone may send one. */
async function register(mcpUrl: URL, metadata: Record<string, unknown>) {
  const response = await fetch(new URL('/oauth/register', mcpUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: ['https://app.example/callback'], ...metadata }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

describe('what an anonymous registration can make the server fetch', () => {
  it('does not fetch a sector_identifier_uri it has no use for (its subjects are never pairwise)', async () => {
    const mcpUrl = await serve({ OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK: '1' });
    requested.length = 0;
    const sector = clientId.replace('client.json', 'sector.json');
    const registered = await register(mcpUrl, { sector_identifier_uri: sector });
    expect(registered.status).toBe(201);
    expect(requested).toEqual([]);
  });

  it('reads a client’s key set (jwks_uri) only up to a bounded size', async () => {
    const mcpUrl = await serve({ OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK: '1' });
    const registered = await register(mcpUrl, {
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      jwks_uri: clientId.replace('client.json', 'jwks.json'),
    });
    expect(registered.status).toBe(201);
    const id = registered.body.client_id!;
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const signed = `${part({ alg: 'ES256' })}.${part({ iss: id, sub: id, aud: new URL('/oauth/token', mcpUrl).href, jti: randomUUID(), iat: now, exp: now + 60 })}`;
    const signature = sign('sha256', Buffer.from(signed), {
      key: assertionKey.privateKey,
      dsaEncoding: 'ieee-p1363',
    }).toString('base64url');
    requested.length = 0;
    const response = await fetch(new URL('/oauth/token', mcpUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'no-such-code',
        redirect_uri: 'https://app.example/callback',
        code_verifier: 'v'.repeat(43),
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: `${signed}.${signature}`,
      }),
    });
    // The key set was asked for, and its megabytes refused: the client is not authenticated by it
    // (invalid_client), rather than read whole into memory and taken (then invalid_grant for the code).
    expect(requested).toContain('/oauth/jwks.json');
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });
});
