import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/app/api-key-service.ts';
import { hashOf, sweepOauthRecords } from '../../src/app/oauth-records.ts';
import { createUser } from '../../src/app/staff-account-service.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { runCli } from '../helpers/cli.ts';
import { demoCatalogue, type Era, errorText, type Json, READ_TOOL_NAMES } from '../helpers/mcp-harness.ts';
import { connectStreamableHttp, type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';
import {
  connectWith,
  consent,
  HostAuth,
  Jar,
  type Person,
  REDIRECT_URL,
  rawToolsList,
  revokeRefreshToken,
  signInAndConnect,
  startSignIn,
} from '../helpers/oauth-flow.ts';
import { startPrefixProxy } from '../helpers/prefix-proxy.ts';
import { startTestApp } from '../helpers/test-app.ts';

/**
 * OAuth sign-in for hosted MCP connectors (design.md 9.3), end to end: the official SDK 2.x client's
 * OAuth support (discovery from the 401, dynamic registration, PKCE, the code exchange, refresh)
 * against the server on a real port, on both protocol generations; the consent page filled over real
 * HTTP as a browser would (cookies, the form, the redirects); revocation from the console.
 */
let server: ListeningApp;
let mcpUrl: URL;
const PASSWORD = 'correct horse battery';
const SLUG = 'northside-hair';
const owner: Person = { organisation: SLUG, email: 'owner@northside.example', password: PASSWORD };
const staff: Person = { organisation: SLUG, email: 'staff@northside.example', password: PASSWORD };
const MESSAGE = { caller_name: 'Jo Bloggs', message: 'Please call back about Friday.', location: 'camden' };
const scopeRefusal = ERROR_CATALOGUE.insufficient_scope.hint;

beforeAll(async () => {
  server = await startListeningApp();
  mcpUrl = new URL('/mcp', server.origin);
  const now = server.t.clock.nowMs();
  const db = server.t.database.db;
  await createUser(
    db,
    { organisationSlug: SLUG, email: owner.email, role: 'owner', password: PASSWORD },
    now,
  );
  await createUser(
    db,
    { organisationSlug: SLUG, email: staff.email, role: 'staff', password: PASSWORD },
    now,
  );
});
afterAll(async () => {
  await server?.t.close();
});

/**
 * A new account of northside-hair, `email` as `role`, that signs in through a host (the modern SDK
 * client) and connects: the account, the host's tokens and its client.
 */
async function newAccountConnected(email: string, role: 'owner' | 'admin') {
  const person: Person = { organisation: SLUG, email, password: PASSWORD };
  await createUser(
    server.t.database.db,
    { organisationSlug: SLUG, email, role, password: PASSWORD },
    server.t.clock.nowMs(),
  );
  const auth = new HostAuth();
  const client = await signInAndConnect(mcpUrl, auth, person, 'modern');
  return { person, auth, client };
}

/** The account marked disabled now, in the database alone (no grant revoked with it). */
async function markDisabled(person: Person) {
  await server.t.database.db
    .updateTable('users')
    .set({ disabled_at: server.t.clock.nowMs() })
    .where('email', '=', person.email)
    .execute();
}

describe('discovery', () => {
  it('answers /mcp without a credential with 401, the JSON-RPC error and where its metadata is', async () => {
    const response = await toolsListWithoutCredential(mcpUrl);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${server.origin}/.well-known/oauth-protected-resource/mcp", scope="bookings:read bookings:write", realm="booking"`,
    );
    expect(await response.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { data: { code: 'missing_api_key' } },
    });
    // Another scheme, or Bearer with nothing after it, sent no token: no error code (RFC 6750 3.1).
    for (const authorization of ['Basic Zm9vOmJhcg==', 'Bearer ']) {
      const other = await fetch(mcpUrl, {
        method: 'POST',
        headers: {
          authorization,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(other.status, authorization).toBe(401);
      expect(other.headers.get('www-authenticate'), authorization).toBe(
        response.headers.get('www-authenticate'),
      );
    }
  });

  it('takes /mcp/ (a trailing slash, as a person may paste the address) as /mcp: the challenge, the sign-in, the tools', async () => {
    const withSlash = new URL('/mcp/', server.origin);
    const refused = await toolsListWithoutCredential(withSlash);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain(
      `resource_metadata="${server.origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    const auth = new HostAuth();
    const client = await signInAndConnect(withSlash, auth, owner);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('find_slots');
    } finally {
      await client.close();
    }
  });

  it('serves the protected-resource metadata (RFC 9728) at both addresses, naming this server', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const answer = await fetch(new URL(path, server.origin));
      // Cached by the host it names (the Host asked for, without PUBLIC_BASE_URL).
      expect(answer.headers.get('vary')).toBe('Host');
      const metadata = await answer.json();
      expect(metadata).toMatchObject({
        resource: mcpUrl.href,
        authorization_servers: [server.origin],
        scopes_supported: ['bookings:read', 'bookings:write'],
        bearer_methods_supported: ['header'],
      });
    }
  });

  it('points resource_documentation at a page about connecting to /mcp, not at the REST API’s OpenAPI document', async () => {
    const metadata = (await (
      await fetch(new URL('/.well-known/oauth-protected-resource/mcp', server.origin))
    ).json()) as Json;
    // No page of the server documents the MCP tools; the console's connectors page is the one that
    // says how an app connects to /mcp (and lists the apps connected), for its owner or admin.
    expect(metadata.resource_documentation).toBe(`${server.origin}/console/connectors`);
    const page = await fetch(metadata.resource_documentation);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const console = await consoleSignIn(owner);
    expect(await console.get(new URL(metadata.resource_documentation).pathname)).toContain(
      "Connect one by giving it the address of this server's <code>/mcp</code>",
    );
  });

  it('serves the authorization server metadata (RFC 8414): PKCE S256, metadata documents, registration', async () => {
    const metadata = (await (
      await fetch(new URL('/.well-known/oauth-authorization-server', server.origin))
    ).json()) as Json;
    expect(metadata).toMatchObject({
      issuer: server.origin,
      authorization_endpoint: `${server.origin}/oauth/authorize`,
      token_endpoint: `${server.origin}/oauth/token`,
      registration_endpoint: `${server.origin}/oauth/register`,
      revocation_endpoint: `${server.origin}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      response_types_supported: ['code'],
    });
    expect(metadata.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'refresh_token']),
    );
    expect(metadata.grant_types_supported).not.toContain('implicit');
  });

  it('advertises only endpoints it serves and tokens /mcp takes (Bearer: no DPoP)', async () => {
    const metadata = (await (
      await fetch(new URL('/.well-known/oauth-authorization-server', server.origin))
    ).json()) as Json;
    const advertised = Object.entries(metadata).filter(
      ([name]) => name.endsWith('_endpoint') || name === 'jwks_uri',
    );
    for (const [name, url] of advertised) {
      const { pathname } = new URL(String(url));
      const served = ['GET', 'POST'].some((method) => server.t.app.hasRoute({ method, url: pathname }));
      expect(served, `${name} ${pathname}`).toBe(true);
    }
    // /mcp reads `Authorization: Bearer` and checks no proof of possession.
    expect(metadata).not.toHaveProperty('dpop_signing_alg_values_supported');
  });
});

describe('the issuer a deployment names', () => {
  it('names every endpoint under PUBLIC_BASE_URL, and under no Host a request sent', async () => {
    const behind = await startTestApp({
      catalogues: [demoCatalogue()],
      http: { publicBaseUrl: 'https://book.example' },
    });
    try {
      // As a proxy that passes its own upstream address as Host (nginx's default), and as a forged Host.
      for (const host of ['127.0.0.1:8080', 'evil.example']) {
        const answer = await behind.app.inject({
          method: 'GET',
          url: '/.well-known/oauth-authorization-server',
          headers: { host },
        });
        const metadata = answer.json() as Json;
        expect(metadata.issuer).toBe('https://book.example');
        for (const name of [
          'authorization_endpoint',
          'token_endpoint',
          'registration_endpoint',
          'jwks_uri',
        ]) {
          expect(metadata[name], `${name} with Host ${host}`).toMatch(/^https:\/\/book\.example\/oauth\//);
        }
      }
    } finally {
      await behind.close();
    }
  });
});

describe('under a path prefix: PUBLIC_BASE_URL with a path, behind a proxy that strips it', () => {
  it('signs in through the proxy: discovery, registration, consent, the code exchange and a tool call', async () => {
    const proxy = await startPrefixProxy('/booking');
    const behind = await startListeningApp({ publicBaseUrl: `${proxy.origin}/booking` });
    proxy.target = behind.port;
    try {
      await createUser(
        behind.t.database.db,
        { organisationSlug: SLUG, email: owner.email, role: 'owner', password: PASSWORD },
        behind.t.clock.nowMs(),
      );
      const issuer = `${proxy.origin}/booking`;
      // Both metadata addresses reachable through the prefix name every endpoint under it.
      for (const path of ['oauth-authorization-server', 'openid-configuration']) {
        const metadata = (await (await fetch(`${issuer}/.well-known/${path}`)).json()) as Json;
        expect(metadata.issuer).toBe(issuer);
        for (const name of [
          'authorization_endpoint',
          'token_endpoint',
          'registration_endpoint',
          'revocation_endpoint',
          'jwks_uri',
        ]) {
          expect(
            String(metadata[name]).startsWith(`${issuer}/oauth/`),
            `${name} of ${path}: ${metadata[name]}`,
          ).toBe(true);
        }
      }
      const client = await signInAndConnect(new URL(`${issuer}/mcp`), new HostAuth(), owner);
      try {
        const locations = await client.callTool({ name: 'list_locations', arguments: {} });
        expect(JSON.stringify(locations.structuredContent)).toContain('camden');
      } finally {
        await client.close();
      }
      // Outside the prefix the SDK asked only the path-suffixed metadata addresses (RFC 8414, then
      // OpenID's), which this proxy does not route; it then found /booking/.well-known/openid-configuration.
      expect(new Set(proxy.unrouted)).toEqual(
        new Set([
          '/.well-known/oauth-authorization-server/booking',
          '/.well-known/openid-configuration/booking',
        ]),
      );
      // Routed as docs/mcp.md says, the standard addresses of an issuer and a resource with a path work too.
      proxy.routes.set(
        '/.well-known/oauth-authorization-server/booking',
        '/.well-known/oauth-authorization-server',
      );
      proxy.routes.set(
        '/.well-known/oauth-protected-resource/booking/mcp',
        '/.well-known/oauth-protected-resource/mcp',
      );
      const rfc8414 = (await (
        await fetch(`${proxy.origin}/.well-known/oauth-authorization-server/booking`)
      ).json()) as Json;
      expect(rfc8414).toMatchObject({ issuer, token_endpoint: `${issuer}/oauth/token` });
      const rfc9728 = (await (
        await fetch(`${proxy.origin}/.well-known/oauth-protected-resource/booking/mcp`)
      ).json()) as Json;
      expect(rfc9728).toMatchObject({ resource: `${issuer}/mcp`, authorization_servers: [issuer] });
      // A browser sends the sign-in's cookies back through the proxy only if their paths are under it.
      expect(proxy.cookiePaths.length).toBeGreaterThan(0);
      for (const path of proxy.cookiePaths) expect(path).toMatch(/^\/booking(\/|$)/);
    } finally {
      await behind.t.close();
      await proxy.close();
    }
  });

  it('serves a consent page whose every address is under the prefix, and no script its policy would block', async () => {
    const proxy = await startPrefixProxy('/booking');
    const behind = await startListeningApp({ publicBaseUrl: `${proxy.origin}/booking` });
    proxy.target = behind.port;
    try {
      await createUser(
        behind.t.database.db,
        { organisationSlug: SLUG, email: owner.email, role: 'owner', password: PASSWORD },
        behind.t.clock.nowMs(),
      );
      const auth = new HostAuth();
      await startSignIn(new URL(`${proxy.origin}/booking/mcp`), auth);
      // The page as first shown, and as shown again with the refusal of a wrong password.
      const shown = await consent(auth.authorizationUrl!, { ...owner, password: 'not the password' });
      expect(shown.refusal?.status).toBe(401);
      for (const page of [shown.page, shown.refusal!.page]) {
        expect(page).toContain('<form method="post"');
        expect(page).not.toMatch(/<script/i);
        const paths = [...page.matchAll(/\s(?:href|src|action)="(\/[^"]*)"/g)].map((m) => m[1]!);
        for (const path of paths) expect(path).toMatch(/^\/booking\//);
      }
    } finally {
      await behind.t.close();
      await proxy.close();
    }
  });
});

describe('client registration', () => {
  const register = async (redirectUri: string) => {
    const response = await fetch(new URL('/oauth/register', server.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      }),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };

  it.each([
    ['plain http to another host', 'http://app.example/callback'],
    ['plain http to a private address', 'http://10.0.0.5/callback'],
    ['a user name and password', 'https://app.example:pw@evil.example/callback'],
  ])(
    'refuses a redirect URI with %s: a code never travels in the clear nor to a disguised host',
    async (_what, uri) => {
      const refused = await register(uri);
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error).toBe('invalid_redirect_uri');
    },
  );

  it.each([
    'https://app.example/callback',
    'http://127.0.0.1:9/callback',
    'http://localhost:33418/callback',
    'http://[::1]:33418/callback',
  ])('registers %s', async (uri) => {
    const registered = await register(uri);
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  });

  it('registers a desktop host that does not say it is native (as SDK 1.x hosts register): its own URI scheme, any loopback port', async () => {
    // RFC 7591 has no application_type; OpenID's registration defaults it to "web", which refused
    // every custom scheme and held a loopback redirect URI to its port (RFC 8252 7.3: any port).
    const scheme = await register('com.example.desktop-host:/oauth/callback');
    expect(scheme.status, JSON.stringify(scheme.body)).toBe(201);
    expect(scheme.body.application_type).toBe('native');
    const loopback = await register('http://127.0.0.1/callback');
    expect(loopback.status, JSON.stringify(loopback.body)).toBe(201);
    expect(loopback.body.application_type).toBe('native');
    // Back at a port of the moment (REDIRECT_URL's): the code arrives there.
    const auth = new HostAuth({ info: { client_id: String(loopback.body.client_id) } });
    const first = await startSignIn(mcpUrl, auth);
    expect(auth.authorizationUrl!.searchParams.get('redirect_uri')).toBe(REDIRECT_URL);
    const outcome = await consent(auth.authorizationUrl!, owner);
    await first.finishAuth(outcome.callback.searchParams);
    expect(auth.info!.client_id).toBe(loopback.body.client_id);
    const client = await connectWith(mcpUrl, auth);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
    // A host that says it is a web application is taken at its word.
    const web = await fetch(new URL('/oauth/register', server.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/callback'], application_type: 'web' }),
    });
    expect(((await web.json()) as Json).application_type).toBe('web');
  });

  it('registers a host that names scopes of its own, keeping only those it knows, and signs it in', async () => {
    const registerWith = async (scope: string) => {
      const response = await fetch(new URL('/oauth/register', server.origin), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        // As Claude.ai registers its custom connectors.
        body: JSON.stringify({
          client_name: 'claudeai',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          scope,
          redirect_uris: [REDIRECT_URL],
        }),
      });
      const body = (await response.json()) as Json;
      expect(response.status, JSON.stringify(body)).toBe(201);
      return body;
    };
    // The connector scopes it named, and OpenID's two, which change nothing here.
    expect((await registerWith('openid profile bookings:read')).scope).toBe(
      'bookings:read openid offline_access',
    );
    const claude = await registerWith('claudeai');
    // None known: it may ask for any, as a client that named none.
    expect(claude).not.toHaveProperty('scope');
    const auth = new HostAuth({ info: claude as never });
    const client = await signInAndConnect(mcpUrl, auth, { ...owner, scope: 'bookings:write' });
    try {
      const locations = await client.callTool({ name: 'list_locations', arguments: {} });
      expect(JSON.stringify(locations.structuredContent)).toContain('camden');
    } finally {
      await client.close();
    }
    expect(auth.savedTokens!.scope).toBe('bookings:write');
    // The tests after this one register many clients too: a fresh minute of registrations for them.
    server.t.clock.advance({ minutes: 1, seconds: 1 });
  });

  it('lets a host registered for the connector scopes ask for openid besides: it changes nothing here', async () => {
    const response = await fetch(new URL('/oauth/register', server.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // The scopes the resource metadata lists, as a host that reads scopes_supported registers them.
      body: JSON.stringify({
        client_name: 'OpenID-minded host',
        token_endpoint_auth_method: 'none',
        scope: 'bookings:read bookings:write',
        redirect_uris: [REDIRECT_URL],
      }),
    });
    const registered = (await response.json()) as Json;
    expect(response.status, JSON.stringify(registered)).toBe(201);
    const auth = new HostAuth({ info: registered as never });
    const first = await startSignIn(mcpUrl, auth);
    const url = new URL(auth.authorizationUrl!);
    url.searchParams.set('scope', `openid ${url.searchParams.get('scope')}`);
    const outcome = await consent(url, { ...owner, scope: 'bookings:read' });
    expect(outcome.callback.searchParams.get('error'), outcome.callback.href).toBeNull();
    await first.finishAuth(outcome.callback.searchParams);
    const client = await connectWith(mcpUrl, auth);
    try {
      const locations = await client.callTool({ name: 'list_locations', arguments: {} });
      expect(locations.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    expect(auth.savedTokens!.scope).toBe('bookings:read');
  });

  it('registers a host that names no token endpoint method as a public client: no secret, and it signs in with what it was given', async () => {
    const response = await fetch(new URL('/oauth/register', server.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // RFC 7591 2: a registration may leave the method out; it was answered "none" beside a
      // client_secret the token endpoint then refused, and a host that sent it never signed in.
      body: JSON.stringify({ client_name: 'Terse host', redirect_uris: [REDIRECT_URL] }),
    });
    const registered = (await response.json()) as Json;
    expect(response.status, JSON.stringify(registered)).toBe(201);
    expect(registered.token_endpoint_auth_method).toBe('none');
    expect(registered).not.toHaveProperty('client_secret');
    expect(registered).not.toHaveProperty('client_secret_expires_at');
    const auth = new HostAuth({ info: registered as never });
    const client = await signInAndConnect(mcpUrl, auth, { ...owner, scope: 'bookings:read' });
    expect((await client.callTool({ name: 'list_locations', arguments: {} })).isError).toBeFalsy();
    await client.close();
    expect(auth.savedTokens!.scope).toBe('bookings:read');
  });
});

describe('a method an OAuth endpoint does not serve', () => {
  const send = (method: string, path: string, headers: Record<string, string> = {}) =>
    fetch(new URL(path, server.origin), { method, headers });
  const expectOauthError = async (response: Response, allow: string) => {
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as Json;
    expect(body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    return body.error_description as string;
  };

  it('refuses to delete or update a client registration, known or not, in the JSON error form (RFC 7592: 405)', async () => {
    const registered = (await (await registerClient(server.origin)).json()) as Json;
    const own = { authorization: `Bearer ${registered.registration_access_token}` };
    for (const [path, headers] of [
      ['/oauth/register/no-such-client', {}],
      [new URL(registered.registration_client_uri).pathname, own],
    ] as const) {
      const deleted = await expectOauthError(await send('DELETE', path, headers), 'GET, HEAD, OPTIONS');
      expect(deleted).toMatch(/^A client registration cannot be deleted here: only read/);
      for (const method of ['PUT', 'PATCH']) {
        const updated = await expectOauthError(await send(method, path, headers), 'GET, HEAD, OPTIONS');
        expect(updated).toMatch(/^A client registration cannot be updated here/);
      }
    }
    // Reading it is what the registration access token is for, and still answered.
    const read = await send('GET', new URL(registered.registration_client_uri).pathname, own);
    expect(read.status).toBe(200);
    expect(((await read.json()) as Json).client_id).toBe(registered.client_id);
  });

  it('refuses a wrong method at the other endpoints so too, naming the one to use', async () => {
    expect(await expectOauthError(await send('GET', '/oauth/token'), 'POST, OPTIONS')).toBe(
      'GET is not allowed at this endpoint; use POST.',
    );
    await expectOauthError(await send('DELETE', '/oauth/register'), 'POST, OPTIONS');
    expect(await expectOauthError(await send('POST', '/oauth/jwks'), 'GET, HEAD, OPTIONS')).toBe(
      'POST is not allowed at this endpoint; use GET.',
    );
    await expectOauthError(await send('DELETE', '/oauth/authorize'), 'GET, HEAD, OPTIONS');
    await expectOauthError(await send('PUT', '/oauth/revoke'), 'POST, OPTIONS');
    expect(await expectOauthError(await send('PATCH', '/oauth/token'), 'POST, OPTIONS')).toBe(
      'PATCH is not allowed at this endpoint; use POST.',
    );
    // The server's metadata too: it is read only.
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      expect(await expectOauthError(await send('POST', path), 'GET, HEAD, OPTIONS')).toBe(
        'POST is not allowed at this endpoint; use GET.',
      );
    }
    // Methods fetch will not send: TRACE in the OAuth form; QUERY, whose body Fastify reads before any
    // route, in the API's, each with the endpoint's own Allow.
    const raw = (method: string, path: string) =>
      new Promise<{ status: number; allow: string | undefined; body: string }>((resolve, reject) => {
        const request = httpRequest(new URL(path, server.origin), { method }, (response) => {
          let body = '';
          response.on('data', (chunk) => {
            body += chunk;
          });
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, allow: response.headers.allow, body }),
          );
        });
        request.on('error', reject);
        request.end();
      });
    const trace = await raw('TRACE', '/oauth/token');
    expect(trace).toMatchObject({ status: 405, allow: 'POST, OPTIONS' });
    expect(JSON.parse(trace.body)).toMatchObject({ error: 'invalid_request' });
    for (const [path, allow] of [
      ['/.well-known/oauth-authorization-server', 'GET, HEAD, OPTIONS'],
      ['/oauth/token', 'POST, OPTIONS'],
    ] as const) {
      expect(await raw('QUERY', path), path).toMatchObject({ status: 405, allow });
    }
  });

  it('answers HEAD where it answers GET, as the provider does (RFC 9110), not 405', async () => {
    const head = await send('HEAD', '/oauth/jwks');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    expect(await head.text()).toBe('');
    // HEAD of what takes no GET is refused as GET would be; Allow lists HEAD wherever GET.
    const refused = await send('HEAD', '/oauth/token');
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('POST, OPTIONS');
    for (const path of ['/oauth/jwks', '/oauth/authorize', '/oauth/register/no-such-client']) {
      expect((await send('OPTIONS', path)).headers.get('allow'), path).toBe('GET, HEAD, OPTIONS');
    }
  });

  it('answers OPTIONS that is no CORS preflight with the methods it takes (RFC 9110), a preflight as before', async () => {
    for (const [path, allow] of [
      ['/oauth/token', 'POST, OPTIONS'],
      ['/oauth/revoke', 'POST, OPTIONS'],
      ['/oauth/jwks', 'GET, HEAD, OPTIONS'],
    ] as const) {
      // No Origin, and an Origin without Access-Control-Request-Method: neither is a preflight.
      for (const headers of [{}, { origin: 'https://host.example' }] as Record<string, string>[]) {
        const answer = await send('OPTIONS', path, headers);
        expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(204);
        expect(answer.headers.get('allow'), path).toBe(allow);
        expect(await answer.text(), path).toBe('');
      }
      const preflight = await send('OPTIONS', path, {
        origin: 'https://host.example',
        'access-control-request-method': allow.split(',')[0]!,
      });
      expect(preflight.status, path).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin'), path).toBe('https://host.example');
      expect(preflight.headers.get('access-control-allow-methods'), path).toBeTruthy();
    }
  });

  it('answers OPTIONS so at the endpoints that answer no CORS preflight too, a preflight granting nothing', async () => {
    // (Registration's preflight is granted: a browser-based client registers from its page.)
    for (const [path, allow] of [
      ['/oauth/register/no-such-client', 'GET, HEAD, OPTIONS'],
      ['/oauth/authorize', 'GET, HEAD, OPTIONS'],
      ['/oauth/authorize/no-such-interaction', 'GET, HEAD, OPTIONS'],
    ] as const) {
      for (const headers of [
        {},
        { origin: 'https://host.example' },
        { origin: 'https://host.example', 'access-control-request-method': allow.split(',')[0]! },
      ] as Record<string, string>[]) {
        const answer = await send('OPTIONS', path, headers);
        expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(204);
        expect(answer.headers.get('allow'), path).toBe(allow);
        expect(answer.headers.get('access-control-allow-origin'), path).toBeNull();
        expect(await answer.text(), path).toBe('');
      }
    }
  });
});

describe.each<Era>(['modern', 'legacy'])('the SDK client signs in with OAuth (%s protocol)', (era) => {
  it('registers, signs in on the consent page with bookings:write, and acts as the organisation', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, { ...owner, scope: 'bookings:write' }, era);
    try {
      const locations = await client.callTool({ name: 'list_locations', arguments: {} });
      expect(JSON.stringify(locations.structuredContent)).toContain('camden');
      // Writing is allowed: the token stands for a read_write principal.
      const message = await client.callTool({ name: 'take_message', arguments: MESSAGE });
      expect(message.isError, JSON.stringify(message.content)).toBeFalsy();
    } finally {
      await client.close();
    }
    // The token is opaque, bound to /mcp, and the database holds only its hash.
    const token = auth.savedTokens!.access_token;
    const rows = await server.t.database.db
      .selectFrom('oauth_records')
      .select(['payload', 'id_hash'])
      .execute();
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(JSON.stringify(rows)).not.toContain(auth.savedTokens!.refresh_token!);
  });

  it('grants bookings:read as a read-only principal: reads, and is refused a change', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, { ...owner, scope: 'bookings:read' }, era);
    try {
      const locations = await client.callTool({ name: 'list_locations', arguments: {} });
      expect(locations.isError).toBeFalsy();
      // It sees only the tools it can use, as a read key does.
      const listed = (await client.listTools()).tools.map((tool) => tool.name).sort();
      expect(listed).toEqual([...READ_TOOL_NAMES].sort());
      const refused = await client.callTool({ name: 'take_message', arguments: MESSAGE });
      expect(errorText(refused as never)).toBe(scopeRefusal);
      // A name no tool has is answered with the tools it is shown, not the write tools besides.
      const unknown = await client.callTool({ name: 'book_now', arguments: {} }).then(
        () => expect.unreachable('a tool no server has was run'),
        (error: Error) => error.message,
      );
      expect(/the tools are (.*)\.$/.exec(unknown)?.[1]?.split(', ').sort()).toEqual(listed);
    } finally {
      await client.close();
    }
    expect(auth.savedTokens!.scope).toBe('bookings:read');
  });

  it('refreshes an access token that is no longer accepted, with the refresh token', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, owner, era);
    const first = auth.savedTokens!;
    expect(first.refresh_token).toBeDefined();
    // The access token is gone (as when it expires): the next call is answered 401 and the SDK refreshes.
    await server.t.database.db.deleteFrom('oauth_records').where('kind', '=', 'AccessToken').execute();
    auth.authorizationUrl = undefined;
    try {
      const again = await connectWith(mcpUrl, auth, era);
      const result = await again.callTool({ name: 'list_locations', arguments: {} });
      expect(result.isError).toBeFalsy();
      await again.close();
    } finally {
      await client.close();
    }
    expect(auth.savedTokens!.access_token).not.toBe(first.access_token);
    // Refresh tokens rotate: the old one is spent.
    expect(auth.savedTokens!.refresh_token).not.toBe(first.refresh_token);
    // Without asking the person again.
    expect(auth.authorizationUrl).toBeUndefined();
  });

  it('stops working on the next call once revoked from the console, and cannot refresh', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, owner, era);
    try {
      expect((await client.callTool({ name: 'list_locations', arguments: {} })).isError).toBeFalsy();
      const console = await consoleSignIn(owner);
      const page = await console.get('/console/connectors');
      expect(page).toContain('Test host');
      const revoke = [...page.matchAll(/action="(\/console\/connectors\/[^"]+\/revoke)"/g)].map((m) => m[1]!);
      expect(revoke.length).toBeGreaterThan(0);
      for (const action of revoke) await console.post(action);
      expect(await console.get('/console/connectors')).not.toContain('/revoke"');
      // The SDK sees the 401 and tries its refresh token: refused (invalid_grant), revoked with the grant.
      await expect(client.callTool({ name: 'list_locations', arguments: {} })).rejects.toThrow(
        /grant request is invalid/,
      );
    } finally {
      await client.close();
    }
    const direct = await rawToolsList(mcpUrl, auth.savedTokens!.access_token);
    expect(direct.status).toBe(401);
  });
});

describe('a connector granted by an account that is disabled', () => {
  it('stops with `booking users disable`: refused at once, cannot refresh, shown revoked', async () => {
    const { person: leaver, auth, client } = await newAccountConnected('leaver@northside.example', 'admin');
    try {
      expect((await client.callTool({ name: 'list_locations', arguments: {} })).isError).toBeFalsy();
      const disabled = runCli(['users', 'disable', '--org', SLUG, '--email', leaver.email], {
        DATABASE_URL: server.t.database.url,
      });
      expect(disabled.status, disabled.stderr).toBe(0);
      // The SDK sees the 401 and tries its refresh token: refused, revoked with the grant.
      await expect(client.callTool({ name: 'list_locations', arguments: {} })).rejects.toThrow(
        /grant request is invalid/,
      );
    } finally {
      await client.close();
    }
    expect((await rawToolsList(mcpUrl, auth.savedTokens!.access_token)).status).toBe(401);
    const page = await (await consoleSignIn(owner)).get('/console/connectors');
    expect(page).not.toContain('/revoke"');
  });

  it('is refused when the account was disabled as it was granted (the account alone marked disabled)', async () => {
    const { person: late, auth, client } = await newAccountConnected('late@northside.example', 'owner');
    await client.close();
    const token = auth.savedTokens!.access_token;
    expect((await rawToolsList(mcpUrl, token)).status).toBe(200);
    await markDisabled(late);
    expect((await rawToolsList(mcpUrl, token)).status).toBe(401);
  });
});

describe('a connector granted by an account whose password is changed', () => {
  it('stops with `booking users set-password`: whoever connected with the old password is cut off too', async () => {
    const { person, auth, client } = await newAccountConnected('stolen@northside.example', 'admin');
    await client.close();
    const token = auth.savedTokens!.access_token;
    expect((await rawToolsList(mcpUrl, token)).status).toBe(200);
    const changed = runCli(
      ['users', 'set-password', '--org', SLUG, '--email', person.email],
      { DATABASE_URL: server.t.database.url },
      'a brand new long secret\n',
    );
    expect(changed.status, changed.stderr).toBe(0);
    expect(changed.stdout).toBe(
      `Changed the password of ${person.email}; its console sessions and the apps it connected were ended.\n`,
    );
    expect((await rawToolsList(mcpUrl, token)).status).toBe(401);
    const connector = await server.t.database.db
      .selectFrom('oauth_connectors')
      .select('revoked_at')
      .where('client_id', '=', auth.info!.client_id)
      .executeTakeFirstOrThrow();
    expect(connector.revoked_at).not.toBeNull();
  });
});

describe('revocation by the client (RFC 7009)', () => {
  it('ends the whole grant when the host revokes its refresh token: the console shows it revoked', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, owner);
    await client.close();
    const { access_token: access, refresh_token: refresh } = auth.savedTokens!;
    expect((await rawToolsList(mcpUrl, access)).status).toBe(200);
    const revoked = await revokeRefreshToken(server.origin, auth.info!.client_id, refresh!);
    expect(revoked.status).toBe(200);
    expect((await rawToolsList(mcpUrl, access)).status).toBe(401);
    const connector = await server.t.database.db
      .selectFrom('oauth_connectors')
      .select(['id', 'revoked_at'])
      .where('client_id', '=', auth.info!.client_id)
      .executeTakeFirstOrThrow();
    expect(connector.revoked_at).not.toBeNull();
    // Nothing of the grant is left, the grant itself included (its id is the connector's).
    const left = await server.t.database.db
      .selectFrom('oauth_records')
      .select('kind')
      .where('grant_id', '=', connector.id)
      .execute();
    expect(left).toEqual([]);
  });
});

describe('a connector in use', () => {
  it('ends the connection when a spent refresh token comes back, as only a copy of it would (docs/mcp.md)', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, owner);
    await client.close();
    const refresh = (token: string) => refreshAt(server.origin, auth.info!.client_id, token);
    const spent = auth.savedTokens!.refresh_token!;
    const rotated = await refresh(spent);
    const tokens = (await rotated.json()) as { access_token: string; refresh_token: string };
    expect(rotated.status).toBe(200);
    expect((await rawToolsList(mcpUrl, tokens.access_token)).status).toBe(200);

    // Past the half-minute in which a host's own concurrent refreshes are taken (docs/mcp.md).
    server.t.clock.advance({ seconds: 31 });
    const replayed = await refresh(spent);
    expect(replayed.status).toBe(400);
    expect(await replayed.json()).toMatchObject({ error: 'invalid_grant' });
    // The newer tokens went with it: the person connects the app again.
    expect((await rawToolsList(mcpUrl, tokens.access_token)).status).toBe(401);
    expect((await refresh(tokens.refresh_token)).status).toBe(400);
  });

  it('takes two refreshes with the same token at once, as a host whose calls all found their token expired sends them', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, owner);
    await client.close();
    const refresh = (token: string) => refreshAt(server.origin, auth.info!.client_id, token);
    const spent = auth.savedTokens!.refresh_token!;
    const answers = await Promise.all([refresh(spent), refresh(spent)]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const tokens = (await Promise.all(answers.map((answer) => answer.json()))) as {
      access_token: string;
      refresh_token: string;
    }[];
    // A moment later, the one that came back last: the host keeps whichever it saved; both work.
    server.t.clock.advance({ seconds: 5 });
    expect((await refresh(spent)).status).toBe(200);
    for (const { access_token, refresh_token } of tokens) {
      expect((await rawToolsList(mcpUrl, access_token)).status).toBe(200);
      expect((await refresh(refresh_token)).status).toBe(200);
    }
  });

  it('keeps the grant’s tools for a token refreshed naming openid alone, as a sign-in naming it alone gets them', async () => {
    await withOwnServer(async (own) => {
      const ownMcp = new URL('/mcp', own.origin);
      const auth = new HostAuth();
      // A host that asks for openid besides, and later refreshes naming it alone (RFC 6749 section 6).
      await signInAsking(ownMcp, auth, (asked) =>
        asked.searchParams.set('scope', `openid ${asked.searchParams.get('scope')}`),
      );
      const listed = await rawToolsList(ownMcp, await refreshSaving(own.origin, auth, { scope: 'openid' }));
      expect(listed.status).toBe(200);
      const { result } = (await listed.json()) as { result: { tools: { name: string }[] } };
      expect(result.tools.map((tool) => tool.name)).toContain('book');
    });
  });

  it('keeps the refresh token when a refresh is refused: one naming another resource spends nothing', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, owner);
    await client.close();
    const refresh = (extra: Record<string, string>) =>
      refreshAt(server.origin, auth.info!.client_id, auth.savedTokens!.refresh_token!, extra);
    for (const resource of ['https://elsewhere.example/mcp', `${mcpUrl.href}/`]) {
      const refused = await refresh({ resource });
      expect(refused.status, resource).toBe(400);
      expect(await refused.json(), resource).toMatchObject({ error: 'invalid_target' });
    }
    // The host's refresh token is as it was: it refreshes, and the connection goes on.
    const refreshed = await refresh({ resource: mcpUrl.href });
    const tokens = (await refreshed.json()) as { access_token: string };
    expect(refreshed.status, JSON.stringify(tokens)).toBe(200);
    expect((await rawToolsList(mcpUrl, tokens.access_token)).status).toBe(200);
    expect((await rawToolsList(mcpUrl, auth.savedTokens!.access_token)).status).toBe(200);
  });

  it('refreshes past the sign-in’s 15 minutes for a host that asked only for the connector’s scopes', async () => {
    await withOwnServer(async (own) => {
      const ownMcp = new URL('/mcp', own.origin);
      const auth = new HostAuth();
      // As the 401's challenge says to ask: its scopes alone, no offline_access, no prompt=consent.
      await signInAsking(ownMcp, auth, (asked) => {
        asked.searchParams.set('scope', 'bookings:read bookings:write');
        asked.searchParams.delete('prompt');
      });
      expect(auth.savedTokens!.refresh_token).toBeTruthy();
      // The consent page's sign-in (its session) lasts 15 minutes; the connector is to outlive it.
      own.t.clock.advance({ minutes: 16 });
      expect((await rawToolsList(ownMcp, await refreshSaving(own.origin, auth))).status).toBe(200);
    });
  });

  it('keeps refreshing past 30 days from its consent: each rotated refresh token lasts 30 days from its use', async () => {
    await withOwnServer(async (own) => {
      const auth = new HostAuth();
      const client = await signInAndConnect(new URL('/mcp', own.origin), auth, owner);
      await client.close();
      // Used every 20 days: never 30 days without a refresh, though 60 days since the consent.
      for (let i = 0; i < 3; i++) {
        own.t.clock.advance({ days: 20 });
        await refreshSaving(own.origin, auth);
      }
      expect(auth.savedTokens!.access_token).toBeTruthy();
    });
  });
});

describe('registered clients end', () => {
  // A server of its own for each test: the clock moves by days, and /mcp reads a token's expiry by the
  // library's clock, which does not move.
  let ended: ListeningApp;
  beforeEach(async () => {
    ended = await startListeningApp();
    await createUser(
      ended.t.database.db,
      { organisationSlug: SLUG, email: owner.email, role: 'owner', password: PASSWORD },
      ended.t.clock.nowMs(),
    );
  });
  afterEach(async () => {
    await ended?.t.close();
  });
  const sweep = () => sweepOauthRecords(ended.t.database.db, ended.t.clock.nowMs());
  /** What is stored of the client: its registration, and its registration access token. */
  const storedOf = async (clientId: string) => {
    const db = ended.t.database.db;
    const registration = await db
      .selectFrom('oauth_records')
      .select('kind')
      .where('kind', '=', 'Client')
      .where('id_hash', '=', hashOf(clientId))
      .execute();
    const rows = await db.selectFrom('oauth_records').select('payload').execute();
    return {
      registered: registration.length === 1,
      rows: rows.filter((row) => row.payload.includes(clientId)).length,
    };
  };
  const tokenRequest = (body: Record<string, string>) =>
    fetch(new URL('/oauth/token', ended.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    });

  it('removes a client never given consent a day after its registration; it is then an unknown client', async () => {
    const response = await registerClient(ended.origin);
    expect(response.status).toBe(201);
    const clientId = String(((await response.json()) as Json).client_id);
    ended.t.clock.advance({ hours: 23 });
    await sweep();
    expect((await storedOf(clientId)).registered).toBe(true);
    ended.t.clock.advance({ hours: 2 });
    await sweep();
    // Nothing of it is left: its registration access token went with it.
    expect(await storedOf(clientId)).toEqual({ registered: false, rows: 0 });

    const token = await tokenRequest({
      grant_type: 'authorization_code',
      code: 'x'.repeat(43),
      redirect_uri: REDIRECT_URL,
      code_verifier: 'v'.repeat(43),
      client_id: clientId,
    });
    expect(token.status).toBe(401);
    expect(await token.json()).toMatchObject({ error: 'invalid_client' });
    const authorize = authorizeUrl(ended.origin, clientId);
    const page = await fetch(authorize, { redirect: 'manual' });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('client is invalid');
  });

  it('keeps a client with a live grant, which still refreshes; removes it a day after the grant ends', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(new URL('/mcp', ended.origin), auth, owner);
    await client.close();
    const clientId = auth.info!.client_id;
    ended.t.clock.advance({ days: 20 });
    await sweep();
    expect((await storedOf(clientId)).registered).toBe(true);
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: auth.savedTokens!.refresh_token!,
      client_id: clientId,
    });
    const tokens = (await refreshed.json()) as Json;
    expect(refreshed.status, JSON.stringify(tokens)).toBe(200);

    // The host revokes its refresh token (RFC 7009): the grant ends; the client is kept a day more.
    const revoked = await fetch(new URL('/oauth/revoke', ended.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: String(tokens.refresh_token), client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    await sweep();
    ended.t.clock.advance({ hours: 23 });
    await sweep();
    expect((await storedOf(clientId)).registered).toBe(true);
    ended.t.clock.advance({ hours: 2 });
    await sweep();
    expect((await storedOf(clientId)).registered).toBe(false);
    const refused = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: String(tokens.refresh_token),
      client_id: clientId,
    });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('does not remove a client whose sign-in has begun: the sweep a sign-in runs counts it in use', async () => {
    const auth = new HostAuth();
    const first = await startSignIn(new URL('/mcp', ended.origin), auth);
    const clientId = auth.info!.client_id;
    // The person opens the consent page just as the client's day ends, before any periodic sweep.
    ended.t.clock.advance({ hours: 24, minutes: 1 });
    const outcome = await consent(auth.authorizationUrl!, owner);
    expect(outcome.refusal).toBeUndefined();
    expect(outcome.callback.searchParams.get('code')).toBeTruthy();
    expect((await storedOf(clientId)).registered).toBe(true);
    // The code is exchanged for tokens (the library's own clock, which does not move, judges /mcp's).
    await first.finishAuth(outcome.callback.searchParams);
    expect(auth.savedTokens?.refresh_token).toBeTruthy();
  });

  it('gives a client registered before clients ended a day from the first sweep', async () => {
    const db = ended.t.database.db;
    const response = await registerClient(ended.origin);
    const clientId = String(((await response.json()) as Json).client_id);
    // As an older version stored it: no removal time.
    await db
      .updateTable('oauth_records')
      .set({ expires_at: null })
      .where('kind', '=', 'Client')
      .where('id_hash', '=', hashOf(clientId))
      .execute();
    ended.t.clock.advance({ days: 3 });
    await sweep();
    expect((await storedOf(clientId)).registered).toBe(true);
    ended.t.clock.advance({ hours: 25 });
    await sweep();
    expect((await storedOf(clientId)).registered).toBe(false);
  });
});

describe('a refused access token', () => {
  /** /mcp's answer to `token`: 401 with the challenge, and the JSON-RPC error, which never speaks of an API key. */
  const refusal = async (token: string, url: URL = mcpUrl) => {
    const response = await rawToolsList(url, token);
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(
      /^Bearer resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/mcp", scope="bookings:read bookings:write", realm="booking", error="invalid_token", error_description="[^"\\]+"$/,
    );
    const { error } = (await response.json()) as Json;
    expect(error.data.code).toBe('invalid_api_key');
    expect(error.data.param).toBe('Authorization');
    expect(error.message).not.toMatch(/API key/);
    expect(challenge).toContain(`error_description="${error.data.detail}"`);
    return { message: error.message as string, detail: error.data.detail as string };
  };
  const signedIn = async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, owner);
    await client.close();
    return auth.savedTokens!.access_token;
  };

  it('says an expired token has expired, to be refreshed', async () => {
    const token = await signedIn();
    await server.t.database.db
      .updateTable('oauth_records')
      .set({ expires_at: server.t.clock.nowMs() - 1000 })
      .where('kind', '=', 'AccessToken')
      .where('id_hash', '=', hashOf(token))
      .execute();
    expect(await refusal(token)).toEqual({
      message:
        "This assistant's sign-in to the booking system has expired and must be renewed; tell the caller bookings cannot be taken right now.",
      detail: 'The access token has expired: refresh it with the refresh token, or sign in again.',
    });
  });

  it('says a token it does not hold (revoked, or never issued here) is unknown', async () => {
    const { message, detail } = await refusal('A'.repeat(43));
    expect(message).toMatch(/no longer knows this assistant's sign-in/);
    expect(detail).toMatch(/^The access token is not one this server holds/);
  });

  it('says a token whose connection was revoked (its account disabled) was revoked', async () => {
    const { person, auth, client } = await newAccountConnected('gone@northside.example', 'owner');
    await client.close();
    await markDisabled(person);
    const { message, detail } = await refusal(auth.savedTokens!.access_token);
    expect(message).toMatch(/connection to the booking system was revoked/);
    expect(detail).toMatch(/^The access token's connection was revoked/);
  });

  it('says a token bound to this server under another name is for another resource', async () => {
    const { message, detail } = await refusal(
      await signedIn(),
      new URL(`http://localhost:${server.port}/mcp`),
    );
    expect(message).toMatch(/at another address and must sign in again here/);
    expect(detail).toBe(
      `The access token was issued for another resource, not http://localhost:${server.port}/mcp: sign in again at this address.`,
    );
  });

  it('still says an API key was rejected when the credential is an API key', async () => {
    const key = await createApiKey(
      server.t.database.db,
      { organisationSlug: SLUG, label: 'gone', scope: 'read' },
      server.t.clock.nowMs(),
    );
    const response = await rawToolsList(mcpUrl, `${key.key.slice(0, -4)}zzzz`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as Json).error.message).toBe(ERROR_CATALOGUE.invalid_api_key.hint);
  });
});

describe('what a token is not', () => {
  it('is refused at the same server under another name: bound to the /mcp it was issued for', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, owner);
    await client.close();
    const token = auth.savedTokens!.access_token;
    expect((await rawToolsList(mcpUrl, token)).status).toBe(200);
    const elsewhere = new URL(`http://localhost:${server.port}/mcp`);
    const refused = await rawToolsList(elsewhere, token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(refused.headers.get('www-authenticate')).toContain(
      `resource_metadata="http://localhost:${server.port}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  it('is not bound to a DPoP proof /mcp would never check: a host that offers one gets a Bearer token', async () => {
    const auth = new HostAuth();
    await startSignIn(mcpUrl, auth);
    const outcome = await consent(auth.authorizationUrl!, owner);
    const tokenUrl = new URL('/oauth/token', server.origin).href;
    const answer = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: dpopProof('POST', tokenUrl) },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: outcome.callback.searchParams.get('code')!,
        redirect_uri: REDIRECT_URL,
        code_verifier: auth.verifier,
        client_id: auth.info!.client_id,
        resource: mcpUrl.href,
      }),
    });
    const tokens = (await answer.json()) as Json;
    expect(answer.status, JSON.stringify(tokens)).toBe(200);
    expect(tokens.token_type).toBe('Bearer');
    expect((await rawToolsList(mcpUrl, String(tokens.access_token))).status).toBe(200);
  });

  it('is never issued for another resource', async () => {
    const auth = new HostAuth();
    await startSignIn(mcpUrl, auth);
    const url = new URL(auth.authorizationUrl!);
    url.searchParams.set('resource', 'https://elsewhere.example/mcp');
    const outcome = await consent(url, owner);
    expect(outcome.callback.searchParams.get('error')).toBe('invalid_target');
  });

  /** A sign-in whose authorization request names the resource `named`, granted by the owner. */
  async function signInNaming(named: string) {
    const auth = new HostAuth();
    await startSignIn(mcpUrl, auth);
    const url = new URL(auth.authorizationUrl!);
    url.searchParams.set('resource', named);
    const outcome = await consent(url, owner);
    expect(outcome.callback.searchParams.get('error_description')).toBeNull();
    return { auth, outcome };
  }

  it('is issued for /mcp named with an upper-case scheme, as RFC 3986 and the MCP spec say it may be', async () => {
    // The MCP authorization spec: "implementations SHOULD accept uppercase scheme and host components".
    const named = mcpUrl.href.replace(/^http:/, 'HTTP:');
    const { auth, outcome } = await signInNaming(named);
    const exchange = (body: Record<string, string>) =>
      fetch(new URL('/oauth/token', server.origin), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: auth.info!.client_id, resource: named, ...body }),
      });
    const issued = await exchange({
      grant_type: 'authorization_code',
      code: outcome.callback.searchParams.get('code')!,
      redirect_uri: REDIRECT_URL,
      code_verifier: auth.verifier,
    });
    const tokens = (await issued.json()) as { access_token: string; refresh_token: string; scope: string };
    expect(issued.status, JSON.stringify(tokens)).toBe(200);
    expect(tokens.scope).toBe('bookings:write');
    expect((await rawToolsList(mcpUrl, tokens.access_token)).status).toBe(200);
    // Its refreshes name the resource as the host wrote it, or as this server does: both are /mcp.
    let refreshToken = tokens.refresh_token;
    for (const resource of [named, mcpUrl.href]) {
      const refreshed = await exchange({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        resource,
      });
      const renewed = (await refreshed.json()) as { access_token: string; refresh_token: string };
      expect(refreshed.status, JSON.stringify(renewed)).toBe(200);
      expect((await rawToolsList(mcpUrl, renewed.access_token)).status).toBe(200);
      refreshToken = renewed.refresh_token;
    }
  });

  it('takes the code back with /mcp named as this server spells it, after an upper-case sign-in', async () => {
    const { auth, outcome } = await signInNaming(
      mcpUrl.href.replace(/^http:\/\/127\.0\.0\.1/, 'HTTP://127.0.0.1'),
    );
    const issued = await fetch(new URL('/oauth/token', server.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: auth.info!.client_id,
        resource: mcpUrl.href,
        grant_type: 'authorization_code',
        code: outcome.callback.searchParams.get('code')!,
        redirect_uri: REDIRECT_URL,
        code_verifier: auth.verifier,
      }),
    });
    const tokens = (await issued.json()) as { access_token: string; scope: string };
    expect(issued.status, JSON.stringify(tokens)).toBe(200);
    expect(tokens.scope).toBe('bookings:write');
    expect((await rawToolsList(mcpUrl, tokens.access_token)).status).toBe(200);
  });

  it('is not an API key, and an API key still works at /mcp; the SSE transport takes keys only', async () => {
    const key = await createApiKey(
      server.t.database.db,
      { organisationSlug: SLUG, label: 'desk', scope: 'read' },
      server.t.clock.nowMs(),
    );
    const mcp = await connectStreamableHttp(server.origin, key.key);
    expect((await mcp.client.callTool({ name: 'list_locations', arguments: {} })).isError).toBeFalsy();
    await mcp.close();
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, owner);
    await client.close();
    const token = auth.savedTokens!.access_token;
    // Said as such, where the stream is opened and where its messages go: not as a bad API key.
    for (const [method, path] of [
      ['GET', '/sse'],
      ['POST', '/messages?sessionId=any'],
    ] as const) {
      const sse = await fetch(new URL(path, server.origin), {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'text/event-stream',
          'content-type': 'application/json',
        },
        ...(method === 'POST' && { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) }),
      });
      expect(sse.status, path).toBe(401);
      const { error } = (await sse.json()) as Json;
      expect(error.data, path).toMatchObject({ code: 'invalid_api_key', param: 'Authorization' });
      expect(error.data.detail, path).toBe(
        'This is not an API key (bk_ followed by 40 letters and digits), and the SSE transport takes API keys only: send one as "Authorization: Bearer <API key>", or connect to /mcp (Streamable HTTP), where an assistant signs in with OAuth.',
      );
      expect(error.message, path).toBe(error.data.detail);
    }
  });

  it('is told at REST /v1 that it is no API key and where it is taken, by its shape, without a lookup', async () => {
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, owner);
    await client.close();
    const token = auth.savedTokens!.access_token;
    const notAKey = {
      code: 'invalid_api_key',
      message:
        'This is not an API key (bk_ followed by 40 letters and digits), and REST /v1 takes API keys only: send one as "Authorization: Bearer <API key>". An OAuth access token is taken by the MCP endpoint /mcp alone.',
      param: 'Authorization',
    };
    const answer = await fetch(new URL('/v1/locations', server.origin), {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(answer.status).toBe(401);
    expect(((await answer.json()) as Json).error).toEqual(notAKey);
    // Known by its shape alone (design.md: no database lookup), so anything else of another shape is
    // told the same; a well-formed key that is unknown keeps the code's own wording.
    const neither = await fetch(new URL('/v1/locations', server.origin), {
      headers: { authorization: `Bearer ${'x'.repeat(43)}` },
    });
    expect(neither.status).toBe(401);
    expect(((await neither.json()) as Json).error).toEqual(notAKey);
    const unknownKey = await fetch(new URL('/v1/locations', server.origin), {
      headers: { authorization: `Bearer bk_${'x'.repeat(40)}` },
    });
    expect(unknownKey.status).toBe(401);
    expect(((await unknownKey.json()) as Json).error.message).toBe(
      'The API key is malformed, unknown or revoked.',
    );
  });
});

describe('an authorization code', () => {
  it('comes back with the host’s state, and used a second time is refused and ends what the first use gave', async () => {
    const auth = new HostAuth();
    await startSignIn(mcpUrl, auth);
    // The SDK relies on PKCE and sends none; a host that sends one gets it back (RFC 6749 4.1.2).
    const state = 'host-state-1';
    auth.authorizationUrl!.searchParams.set('state', state);
    const outcome = await consent(auth.authorizationUrl!, owner);
    expect(outcome.callback.searchParams.get('state')).toBe(state);
    expect(outcome.callback.searchParams.get('iss')).toBe(server.origin);
    const exchange = () =>
      fetch(new URL('/oauth/token', server.origin), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: outcome.callback.searchParams.get('code')!,
          redirect_uri: REDIRECT_URL,
          client_id: auth.info!.client_id,
          code_verifier: auth.verifier,
          resource: mcpUrl.href,
        }),
      });
    const first = await exchange();
    const tokens = (await first.json()) as { access_token: string; refresh_token: string };
    expect(first.status).toBe(200);
    expect((await rawToolsList(mcpUrl, tokens.access_token)).status).toBe(200);
    // A code seen twice may have been stolen (RFC 6749 4.1.2): refused, and the tokens it gave end.
    const second = await exchange();
    expect(second.status).toBe(400);
    expect(second.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await second.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await rawToolsList(mcpUrl, tokens.access_token)).status).toBe(401);
    const refresh = await refreshAt(server.origin, auth.info!.client_id, tokens.refresh_token);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('is refused once its minute is gone', async () => {
    const auth = new HostAuth();
    await startSignIn(mcpUrl, auth);
    const outcome = await consent(auth.authorizationUrl!, owner);
    server.t.clock.advance({ seconds: 61 });
    const late = await fetch(new URL('/oauth/token', server.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: outcome.callback.searchParams.get('code')!,
        redirect_uri: REDIRECT_URL,
        client_id: auth.info!.client_id,
        code_verifier: auth.verifier,
      }),
    });
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ error: 'invalid_grant' });
  });
});

describe('the consent page', () => {
  it('refuses a staff account and a wrong password, and a denial returns access_denied', async () => {
    const auth = new HostAuth();
    await startSignIn(mcpUrl, auth);
    const connectors = () => server.t.database.db.selectFrom('oauth_connectors').selectAll().execute();
    const before = (await connectors()).length;
    const byStaff = await consent(auth.authorizationUrl!, staff);
    expect(byStaff.refusal?.status).toBe(403);
    expect(byStaff.refusal?.page).toContain('Only an owner or admin');
    const forged = await consent(auth.authorizationUrl!, { ...owner, origin: 'https://evil.example' });
    expect(forged.refusal?.status).toBe(403);
    const wrong = await consent(auth.authorizationUrl!, {
      ...owner,
      password: 'not the password',
      scope: 'bookings:write',
    });
    expect(wrong.refusal?.status).toBe(401);
    // Shown again as it was filled: the scope chosen stays chosen, so typing the password again and
    // pressing Allow grants what the person chose, not the page's first choice.
    expect(wrong.refusal?.page).toContain('value="bookings:write" checked');
    expect(wrong.refusal?.page).not.toContain('value="bookings:read" checked');
    const denied = await consent(auth.authorizationUrl!, { ...owner, decision: 'deny' });
    expect(denied.callback.href.startsWith(REDIRECT_URL)).toBe(true);
    expect(denied.callback.searchParams.get('error')).toBe('access_denied');
    // Nothing was granted.
    expect((await connectors()).length).toBe(before);
  });

  it('asks for an owner’s or admin’s password at every sign-in, even again in the same browser', async () => {
    // A fresh minute of registrations from this address (this file's tests register many clients).
    server.t.clock.advance({ minutes: 1, seconds: 1 });
    // A web host, as Claude.ai and ChatGPT are (a native one was always asked again).
    const callback = 'https://host.example/callback';
    const auth = new HostAuth({ redirectUrl: callback });
    await startSignIn(mcpUrl, auth);
    const jar = new Jar();
    const first = await consent(
      auth.authorizationUrl!,
      { ...owner, scope: 'bookings:read' },
      { jar, callback },
    );
    expect(first.callback.searchParams.get('code')).toBeTruthy();
    // Minutes later, in the same browser (the salon's shared computer), the app is connected again: a
    // staff member there is not let through on the owner's earlier consent...
    // (Asked as hosts ask that send no `prompt`: the SDK sends prompt=consent with offline_access.)
    const again = new URL(auth.authorizationUrl!);
    again.searchParams.set('state', 'again');
    again.searchParams.delete('prompt');
    const byStaff = await consent(again, staff, { jar, callback });
    expect(byStaff.page, byStaff.callback.href).toContain('Sign in with your console account');
    expect(byStaff.refusal?.status).toBe(403);
    // ...and the owner who now wants it to book is offered that, not sent back with access_denied.
    const wider = new URL(again);
    wider.searchParams.set('scope', 'bookings:write');
    const upgraded = await consent(wider, { ...owner, scope: 'bookings:write' }, { jar, callback });
    expect(upgraded.page, upgraded.callback.href).toContain('value="bookings:write"');
    expect(upgraded.callback.searchParams.get('code')).toBeTruthy();
  });

  it.each<[string, string | null]>([
    ['no scope at all', null],
    ['only offline_access', 'offline_access'],
  ])(
    'grants a host that asks for %s the scope chosen on the page (OAuth 2.1: scope is optional)',
    async (_, asked) => {
      // A fresh minute of registrations from this address (this file's tests register many clients).
      server.t.clock.advance({ minutes: 1, seconds: 1 });
      const auth = new HostAuth();
      await startSignIn(mcpUrl, auth);
      const url = new URL(auth.authorizationUrl!);
      if (asked === null) url.searchParams.delete('scope');
      else url.searchParams.set('scope', asked);
      const outcome = await consent(url, { ...owner, scope: 'bookings:write' });
      // The page offered both scopes; the one chosen is granted, not access_denied after "Allow".
      expect(outcome.page, outcome.callback.href).toContain('value="bookings:write"');
      expect(outcome.callback.searchParams.get('error')).toBeNull();
      const answer = await fetch(new URL('/oauth/token', server.origin), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: outcome.callback.searchParams.get('code') ?? '',
          redirect_uri: REDIRECT_URL,
          code_verifier: auth.verifier,
          client_id: auth.info!.client_id,
        }),
      });
      const tokens = (await answer.json()) as Json;
      expect(answer.status, JSON.stringify(tokens)).toBe(200);
      expect(tokens.scope).toBe('bookings:write');
      expect((await rawToolsList(mcpUrl, String(tokens.access_token))).status).toBe(200);
    },
  );

  it.each([
    ['com.example.app:/oauth2redirect', 'the app on this device that opens com.example.app: links'],
    ['cursor://anysphere.cursor-mcp/oauth/callback', 'the app on this device that opens cursor: links'],
    ['http://127.0.0.1:33418/callback', 'the app on this device that listens at 127.0.0.1:33418'],
    ['https://claude.ai/api/mcp/auth_callback', 'claude.ai'],
  ])('says where a host redirected to %s returns the person to, in words', async (redirectUri, said) => {
    // A fresh minute of registrations from this address (this file's tests register many clients).
    server.t.clock.advance({ minutes: 1, seconds: 1 });
    const registered = await fetch(new URL('/oauth/register', server.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const url = authorizeUrl(server.origin, clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    const started = await fetch(url, { redirect: 'manual' });
    const page = await fetch(new URL(started.headers.get('location')!, url), {
      headers: {
        cookie: started.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; '),
      },
    });
    expect(await page.text()).toContain(`After you allow it, you return to ${said}.`);
  });

  it('explains a sign-in it cannot start, on a page sent as the consent page is', async () => {
    const authorize = authorizeUrl(server.origin, 'no-such-client');
    const unknownClient = await fetch(authorize, { redirect: 'manual' });
    expect(unknownClient.status).toBe(400);
    const page = await unknownClient.text();
    // The person who followed the app's link learns what to do, not only the library's words.
    expect(page).toContain('Remove the connector in your app and add it again');
    expect(page).toContain('client is invalid');
    expect(page).toContain('name="viewport"');
    expect(unknownClient.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(unknownClient.headers.get('x-frame-options')).toBe('DENY');
    expect(unknownClient.headers.get('x-content-type-options')).toBe('nosniff');

    // A redirect URI the client did not register: never redirected to, so said on the page.
    authorize.searchParams.set('client_id', (await registeredClientId()) ?? '');
    authorize.searchParams.set('redirect_uri', 'https://elsewhere.example/callback');
    const elsewhere = await fetch(authorize, { redirect: 'manual' });
    const refusal = await elsewhere.text();
    expect(elsewhere.status, refusal).toBe(400);
    expect(refusal).toContain('Start connecting again from your app');
    expect(refusal).toContain('redirect_uri did not match');
    expect(elsewhere.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});

/** Registers a client as an older MCP host does (RFC 7591), with REDIRECT_URL: the answer. */
function registerClient(origin: string): Promise<Response> {
  return fetch(new URL('/oauth/register', origin), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'none' }),
  });
}

/** A client registered with registerClient at the shared server: its client_id. */
async function registeredClientId(): Promise<string | undefined> {
  return ((await (await registerClient(server.origin)).json()) as { client_id?: string }).client_id;
}

/** The authorization request a host sends `clientId`'s user to (PKCE S256, bookings:read). */
function authorizeUrl(origin: string, clientId: string): URL {
  const url = new URL('/oauth/authorize', origin);
  for (const [name, value] of Object.entries({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT_URL,
    code_challenge: 'c'.repeat(43),
    code_challenge_method: 'S256',
    scope: 'bookings:read',
  })) {
    url.searchParams.set(name, value);
  }
  return url;
}

/**
 * A refresh token exchanged at the token endpoint by the public client `clientId`, as a host does,
 * with `extra` parameters (scope, resource).
 */
function refreshAt(
  origin: string,
  clientId: string,
  token: string,
  extra: Record<string, string> = {},
): Promise<Response> {
  return fetch(new URL('/oauth/token', origin), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: clientId,
      ...extra,
    }),
  });
}

/** The host's refresh, as refreshAt, its new tokens saved as the host saves them; refused: the test fails. */
async function refreshSaving(origin: string, auth: HostAuth, extra: Record<string, string> = {}) {
  const answer = await refreshAt(origin, auth.info!.client_id, auth.savedTokens!.refresh_token!, extra);
  const tokens = (await answer.json()) as NonNullable<HostAuth['savedTokens']>;
  expect(answer.status, JSON.stringify(tokens)).toBe(200);
  auth.saveTokens(tokens);
  return tokens.access_token;
}

/**
 * `run` against a server of its own with the owner's account: for a test that moves its clock, or
 * signs in more than the shared server's registrations a minute leave room for.
 */
async function withOwnServer(run: (own: ListeningApp) => Promise<void>): Promise<void> {
  const own = await startListeningApp();
  try {
    await createUser(
      own.t.database.db,
      { organisationSlug: SLUG, email: owner.email, role: 'owner', password: PASSWORD },
      own.t.clock.nowMs(),
    );
    await run(own);
  } finally {
    await own.t.close();
  }
}

/** The owner's sign-in by the SDK's client at `mcpUrl`, its authorization request changed by `edit` first. */
async function signInAsking(mcpUrl: URL, auth: HostAuth, edit: (asked: URL) => void): Promise<void> {
  const first = await startSignIn(mcpUrl, auth);
  const asked = new URL(auth.authorizationUrl!);
  edit(asked);
  await first.finishAuth((await consent(asked, owner)).callback.searchParams);
}

/** A tools/list posted to `url` with no credential, as a host's first call is. */
function toolsListWithoutCredential(url: URL): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

/** A DPoP proof (RFC 9449) for `method` on `url`, signed by a key made for it. */
function dpopProof(method: string, url: string): string {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signed = `${part({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } })}.${part({
    htm: method,
    htu: url,
    jti: randomUUID(),
    iat: Math.floor(Date.now() / 1000),
  })}`;
  const signature = sign('sha256', Buffer.from(signed), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${signed}.${signature.toString('base64url')}`;
}

/** The console signed in as `person`, over real HTTP: pages read, one-button forms posted with the CSRF token. */
async function consoleSignIn(person: Person) {
  const signIn = await fetch(new URL('/console/sign-in', server.origin), {
    method: 'POST',
    redirect: 'manual',
    headers: { origin: server.origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      organisation: person.organisation,
      email: person.email,
      password: person.password,
    }),
  });
  expect(signIn.status).toBe(303);
  const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
  let csrf = '';
  return {
    async get(path: string) {
      const response = await fetch(new URL(path, server.origin), { headers: { cookie } });
      const text = await response.text();
      expect(response.status, text).toBe(200);
      csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf;
      return text;
    },
    async post(path: string) {
      const response = await fetch(new URL(path, server.origin), {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: server.origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf }),
      });
      expect(response.status).toBe(303);
    },
  };
}

// Last in the file: it spends the address's registrations for the minute, and moves the clock.
describe('housekeeping and limits', () => {
  it('deletes expired records when a sign-in starts, at most every ten minutes', async () => {
    const db = server.t.database.db;
    await db
      .insertInto('oauth_records')
      .values({
        kind: 'Interaction',
        id_hash: 'f'.repeat(64),
        organisation_id: '',
        grant_id: null,
        uid: null,
        payload: '{}',
        expires_at: server.t.clock.nowMs() - 1,
        consumed_at: null,
      })
      .execute();
    const expired = () =>
      db.selectFrom('oauth_records').select('id_hash').where('id_hash', '=', 'f'.repeat(64)).execute();
    expect(await expired()).toHaveLength(1);
    server.t.clock.advance({ minutes: 11 });
    // The sign-in starts when the browser opens the authorization URL: the library makes an Interaction.
    const auth = new HostAuth();
    await startSignIn(mcpUrl, auth);
    await (await fetch(auth.authorizationUrl!, { redirect: 'manual' })).text();
    expect(await expired()).toEqual([]);
  });

  it('bounds open client registration per address', async () => {
    const register = () =>
      fetch(new URL('/oauth/register', server.origin), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'none' }),
      });
    let response = await register();
    for (let i = 0; i < 40 && response.status === 201; i++) response = await register();
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await response.json()).toMatchObject({ error: 'rate_limited' });
  });
});

describe('rate limits', () => {
  it('counts a token’s tool calls as a key’s: its own window, then 429 rate_limited', async () => {
    const limited = await startTestApp({
      catalogues: [demoCatalogue()],
      now: new Date().toISOString(),
      limits: { requestsPerMinute: 2 },
    });
    try {
      await limited.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = limited.app.server.address() as AddressInfo;
      await createUser(
        limited.database.db,
        { organisationSlug: SLUG, email: owner.email, role: 'owner', password: PASSWORD },
        limited.clock.nowMs(),
      );
      const client = await signInAndConnect(new URL(`http://127.0.0.1:${port}/mcp`), new HostAuth(), owner);
      try {
        for (let i = 0; i < 2; i++) {
          expect((await client.callTool({ name: 'list_locations', arguments: {} })).isError).toBeFalsy();
        }
        const refused = await client.callTool({ name: 'list_locations', arguments: {} });
        expect(refused.structuredContent).toMatchObject({ ok: false, code: 'rate_limited' });
      } finally {
        await client.close();
      }
    } finally {
      await limited.close();
    }
  });
});
