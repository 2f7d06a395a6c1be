import {
  type OAuthClientProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import type { Era } from './mcp-harness.ts';
import { clientFor } from './mcp-servers.ts';

/**
 * An MCP host's side of the OAuth sign-in (design.md 9.3), as the SDK 2.x client drives it: its
 * OAuthClientProvider keeps what a host keeps (client registration, tokens, the PKCE verifier) in
 * memory and, where a host would open a browser, records the authorization URL; `consent` then
 * plays the person at the browser, over real HTTP (cookies, the consent form, the redirects).
 */
type Provider = OAuthClientProvider;
type Tokens = Awaited<ReturnType<Provider['tokens']>>;
type Info = Awaited<ReturnType<Provider['clientInformation']>>;
type Discovery = Parameters<NonNullable<Provider['saveDiscoveryState']>>[0];

export const REDIRECT_URL = 'http://127.0.0.1:9/callback';

export class HostAuth implements Provider {
  savedTokens: Tokens;
  info: Info;
  verifier = '';
  authorizationUrl: URL | undefined;
  /** What discovery found, kept as a host keeps it: the SDK checks the callback's `iss` against it. */
  discovery: Discovery | undefined;
  clientMetadataUrl?: string;
  readonly #scope: string | undefined;
  readonly #redirectUrl: string;

  constructor(
    options: { clientMetadataUrl?: string; info?: Info; scope?: string; redirectUrl?: string } = {},
  ) {
    if (options.clientMetadataUrl) this.clientMetadataUrl = options.clientMetadataUrl;
    this.info = options.info;
    this.#scope = options.scope;
    this.#redirectUrl = options.redirectUrl ?? REDIRECT_URL;
  }

  get redirectUrl() {
    return this.#redirectUrl;
  }

  get clientMetadata() {
    return {
      client_name: 'Test host',
      redirect_uris: [this.#redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.#scope && { scope: this.#scope }),
    };
  }

  clientInformation() {
    return this.info;
  }

  saveClientInformation(info: NonNullable<Info>) {
    this.info = info;
  }

  tokens() {
    return this.savedTokens;
  }

  saveTokens(tokens: NonNullable<Tokens>) {
    this.savedTokens = tokens;
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  saveDiscoveryState(state: Discovery) {
    this.discovery = state;
  }

  discoveryState() {
    return this.discovery;
  }
}

export interface Person {
  organisation: string;
  email: string;
  password: string;
  scope?: 'bookings:read' | 'bookings:write';
  decision?: 'allow' | 'deny';
  /** The Origin the browser sends with the form: the page's own unless a test says otherwise. */
  origin?: string;
}

/** A browser's cookie jar, enough for the sign-ins of one browser on one origin. */
export class Jar {
  readonly #cookies = new Map<string, string>();
  take(response: Response) {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const eq = pair!.indexOf('=');
      this.#cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export interface ConsentOutcome {
  /** The redirect back to the host (code and iss, or error). */
  callback: URL;
  /** The consent page's HTML, and the status of the answer to the form (200 on success: the redirect chain). */
  page: string;
  refusal?: { status: number; page: string };
}

/**
 * Opens `authorizationUrl` as a browser would, fills the consent page and follows the redirects back
 * to the host's redirect URL (REDIRECT_URL unless `browser.callback` says another). When the form is
 * refused (wrong password, a staff account), `refusal` holds the answer and `callback` is not reached.
 * A new browser each time, unless `browser.jar` is the cookie jar of one that signed in before.
 */
export async function consent(
  authorizationUrl: URL,
  person: Person,
  browser: { jar?: Jar; callback?: string } = {},
): Promise<ConsentOutcome> {
  const jar = browser.jar ?? new Jar();
  const callback = browser.callback ?? REDIRECT_URL;
  const get = async (url: URL) => {
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(response);
    return response;
  };
  let response = await get(authorizationUrl);
  let url = authorizationUrl;
  while (response.status >= 300 && response.status < 400) {
    url = new URL(response.headers.get('location')!, url);
    if (url.href.startsWith(callback)) return { callback: url, page: '' };
    response = await get(url);
  }
  const page = await response.text();
  expect(response.status, page).toBe(200);
  const action = new URL(
    /<form method="post" action="([^"]+)"/.exec(page)![1]!.replaceAll('&#47;', '/'),
    url,
  );
  const form = new URLSearchParams({
    organisation: person.organisation,
    email: person.email,
    password: person.password,
    scope: person.scope ?? 'bookings:write',
    decision: person.decision ?? 'allow',
  });
  response = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: jar.header(),
      origin: person.origin ?? action.origin,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: form,
  });
  jar.take(response);
  if (response.status < 300 || response.status >= 400) {
    return {
      callback: new URL('about:blank'),
      page,
      refusal: { status: response.status, page: await response.text() },
    };
  }
  url = action;
  while (response.status >= 300 && response.status < 400) {
    url = new URL(response.headers.get('location')!, url);
    if (url.href.startsWith(callback)) return { callback: url, page };
    response = await get(url);
  }
  throw new Error(`the sign-in ended at ${url.href} with ${response.status}: ${await response.text()}`);
}

/**
 * The whole sign-in of an SDK client at `mcpUrl`: the first connect meets the 401, the SDK discovers,
 * registers (or names its metadata document) and asks to redirect; the person consents; the SDK
 * exchanges the code; the client connects again, signed in.
 */
export async function signInAndConnect(mcpUrl: URL, auth: HostAuth, person: Person, era: Era = 'modern') {
  const first = await startSignIn(mcpUrl, auth, era);
  const outcome = await consent(auth.authorizationUrl!, person);
  if (outcome.refusal) throw new Error(`consent refused: ${outcome.refusal.status}`);
  await first.finishAuth(outcome.callback.searchParams);
  return connectWith(mcpUrl, auth, era);
}

/** The first connect, refused: the SDK has discovered, registered and recorded the authorization URL. */
export async function startSignIn(mcpUrl: URL, auth: HostAuth, era: Era = 'modern') {
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth });
  await expect(clientFor(era).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(auth.authorizationUrl).toBeDefined();
  return transport;
}

export async function connectWith(mcpUrl: URL, auth: HostAuth, era: Era = 'modern') {
  const client = clientFor(era);
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth }));
  return client;
}

/** A tools/list posted straight to `url` with `token`, as any client would. */
export function rawToolsList(url: URL, token: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

/** A host revoking its refresh token at `origin` (RFC 7009), as hosts do when disconnected. */
export function revokeRefreshToken(
  origin: string,
  clientId: string,
  refreshToken: string,
): Promise<Response> {
  return fetch(new URL('/oauth/revoke', origin), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token', client_id: clientId }),
  });
}
