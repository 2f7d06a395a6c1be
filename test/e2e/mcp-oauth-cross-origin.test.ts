import { StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { browserFetch } from '../helpers/browser-fetch.ts';
import { type Era, READ_TOOL_NAMES } from '../helpers/mcp-harness.ts';
import { clientFor, type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';
import { consent, HostAuth, type Person, REDIRECT_URL } from '../helpers/oauth-flow.ts';

/**
 * A browser-based MCP client (an inspector in a web page, the SDK's browser transport) signing in to
 * /mcp with OAuth (design.md 9.3): every call it makes is cross-origin, so each endpoint it calls
 * answers the CORS preflight its custom headers cause and lets the page read the answer (and the
 * headers the SDK reads: WWW-Authenticate above all), without ever allowing cookies.
 */
let server: ListeningApp;
let mcpUrl: URL;
const PASSWORD = 'correct horse battery';
const owner: Person = {
  organisation: 'northside-hair',
  email: 'owner@northside.example',
  password: PASSWORD,
  scope: 'bookings:read',
};
/** The page's origin: the one its redirect URI is on, as a browser-based client's is. */
const PAGE = new URL(REDIRECT_URL).origin;
/** A page elsewhere, of an origin /mcp does not accept (docs/security.md: DNS rebinding). */
const ELSEWHERE = 'https://inspector.example';

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

describe.each<Era>(['modern', 'legacy'])('the SDK client in a web page (%s protocol)', (era) => {
  it('discovers, registers, exchanges the code and calls /mcp, every call cross-origin', async () => {
    const page = browserFetch(PAGE);
    const auth = new HostAuth();
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth, fetch: page.fetch });
    await expect(clientFor(era).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    const outcome = await consent(auth.authorizationUrl!, owner);
    await first.finishAuth(outcome.callback.searchParams);

    const client = clientFor(era);
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    await client.connect(
      new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth, fetch: page.fetch }),
    );
    try {
      const listed = (await client.listTools()).tools.map((tool) => tool.name).sort();
      expect(listed).toEqual([...READ_TOOL_NAMES].sort());
      const locations = await client.callTool({ name: 'list_locations', arguments: {} });
      expect(JSON.stringify(locations.structuredContent)).toContain('camden');
    } finally {
      await client.close();
    }
    // The legacy client's GET for a stream is answered 405, which it reads as "no stream": no error.
    expect(errors).toEqual([]);
    expect(page.preflights).toEqual(
      expect.arrayContaining([
        'POST /mcp',
        'GET /.well-known/oauth-protected-resource/mcp',
        'GET /.well-known/oauth-authorization-server',
        'POST /oauth/register',
      ]),
    );
  });
});

describe('the CORS answers, as plain HTTP', () => {
  const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    fetch(new URL(path, server.origin), { method, headers, body });
  const preflight = (path: string, method: string, headers: string, origin = PAGE) =>
    send('OPTIONS', path, {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': headers,
    });

  it('grants each endpoint’s preflight its method and the headers asked for, never credentials', async () => {
    for (const [path, method, headers] of [
      ['/.well-known/oauth-protected-resource', 'GET', 'mcp-protocol-version'],
      ['/.well-known/oauth-protected-resource/mcp', 'GET', 'mcp-protocol-version'],
      ['/.well-known/oauth-authorization-server', 'GET', 'mcp-protocol-version'],
      ['/.well-known/openid-configuration', 'GET', 'mcp-protocol-version'],
      ['/oauth/register', 'POST', 'content-type'],
      ['/oauth/token', 'POST', 'content-type'],
      ['/mcp', 'POST', 'authorization,content-type,mcp-method,mcp-name,mcp-protocol-version'],
      ['/mcp', 'GET', 'authorization,mcp-protocol-version'],
    ] as const) {
      const answer = await preflight(path, method, headers);
      const what = `${method} ${path}`;
      expect(answer.status, what).toBe(204);
      expect(['*', PAGE], what).toContain(answer.headers.get('access-control-allow-origin'));
      expect(answer.headers.get('access-control-allow-methods'), what).toContain(method);
      for (const header of headers.split(',')) {
        expect(answer.headers.get('access-control-allow-headers')?.toLowerCase(), what).toContain(header);
      }
      expect(answer.headers.get('access-control-allow-credentials'), what).toBeNull();
      expect(Number(answer.headers.get('access-control-max-age')), what).toBeGreaterThan(0);
    }
  });

  it('lets a page read /mcp’s 401 and the challenge in it, and its answers', async () => {
    const refused = await send(
      'POST',
      '/mcp',
      { origin: PAGE, 'content-type': 'application/json' },
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    );
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(refused.headers.get('vary')).toContain('Origin');
    const exposed = refused.headers.get('access-control-expose-headers')?.toLowerCase() ?? '';
    for (const header of ['www-authenticate', 'mcp-session-id', 'mcp-protocol-version']) {
      expect(exposed).toContain(header);
    }
    expect(refused.headers.get('access-control-allow-credentials')).toBeNull();

    const answered = await send(
      'POST',
      '/mcp',
      {
        origin: PAGE,
        authorization: `Bearer ${server.t.keys.read}`,
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-11-25',
      },
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    );
    expect(answered.status).toBe(200);
    expect(answered.headers.get('access-control-allow-origin')).toBe(PAGE);
  });

  it('lets a page elsewhere read why /mcp refuses its origin, with nothing done', async () => {
    expect((await preflight('/mcp', 'POST', 'authorization,content-type', ELSEWHERE)).status).toBe(204);
    const refused = await send(
      'POST',
      '/mcp',
      {
        origin: ELSEWHERE,
        authorization: `Bearer ${server.t.keys.read}`,
        'content-type': 'application/json',
      },
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    );
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBe(ELSEWHERE);
    expect(((await refused.json()) as { error: { data: { code: string } } }).error.data.code).toBe(
      'invalid_host',
    );
  });

  it('lets a page read a registration, and answers OPTIONS that is no preflight with Allow', async () => {
    const registered = await send(
      'POST',
      '/oauth/register',
      { origin: PAGE, 'content-type': 'application/json' },
      JSON.stringify({ redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'none' }),
    );
    expect(registered.status).toBe(201);
    expect(registered.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(registered.headers.get('access-control-allow-credentials')).toBeNull();
    for (const [path, allow] of [
      ['/oauth/register', 'POST, OPTIONS'],
      ['/.well-known/oauth-protected-resource/mcp', 'GET, HEAD, OPTIONS'],
      ['/.well-known/oauth-authorization-server', 'GET, HEAD, OPTIONS'],
      ['/.well-known/openid-configuration', 'GET, HEAD, OPTIONS'],
    ] as const) {
      const answer = await send('OPTIONS', path, { origin: PAGE });
      expect(answer.status, path).toBe(204);
      expect(answer.headers.get('allow'), path).toBe(allow);
      expect(await answer.text(), path).toBe('');
    }
  });
});
