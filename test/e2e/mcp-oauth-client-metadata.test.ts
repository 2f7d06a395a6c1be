import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { openDatabase } from '../../src/data/database.ts';
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
