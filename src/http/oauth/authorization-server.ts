import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Configuration, errors as OidcErrors, default as OidcProvider } from 'oidc-provider';
import type { AppDeps } from '../../app/deps.ts';
import { CONNECTOR_SCOPES } from '../../app/oauth-connectors.ts';
import { loadServerSecrets, OauthRecordStore, type ServerSecrets } from '../../app/oauth-records.ts';
import { clientMetadataFetches, FixedWindowRateLimiter } from '../../app/rate-limiter.ts';
import { page } from '../console/page.ts';
import { pageHeaders } from '../pages/page-shell.ts';
import { refusedSignInBody } from './consent-page.ts';

/**
 * The OAuth 2.1 authorization server of hosted MCP connectors (design.md 9.3), in the same process:
 * oidc-provider (docs/decisions/mcp-oauth-library.md), mounted on Fastify by oauth-routes.ts.
 *
 * - authorization code with PKCE (S256 only), public clients (no client secret);
 * - clients identify themselves by a Client ID Metadata Document (an https client_id whose JSON the
 *   server fetches, with the library's guard against private and loopback addresses) or register
 *   dynamically (RFC 7591) as older clients do;
 * - resource indicators (RFC 8707): the only resource is this server's /mcp, and every access token
 *   is bound to it (its audience); tokens are opaque, stored hashed (OauthRecordStore), revocable;
 * - refresh tokens, rotated on use; revocation (RFC 7009).
 *
 * The issuer is this server's public base URL (PUBLIC_BASE_URL, or the origin a request reached when
 * it is one the server serves): one provider per such origin, made on first use.
 */
export interface AuthorizationServerOptions {
  /** OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK: Client ID Metadata Documents may be fetched from loopback. */
  allowLoopbackClientMetadata: boolean;
  log: FastifyBaseLogger;
}

export const CONNECTOR_SCOPE_LIST = 'bookings:read bookings:write';
const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;
/** How long a chain of refresh tokens is rotated; its last token then lasts its own 30 days. */
const ROTATION_SECONDS = 365.25 * 24 * 60 * 60;
/**
 * A grant outlives every refresh token of its chain: a refresh token is rotated on each use until the
 * chain is a year old (rotateRefreshToken), so a connector ends only after 30 days unused, or a year
 * and 30 days after its consent. A grant of 30 days ended a connector in daily use 30 days after its
 * consent (refresh refused, invalid_grant), while the console still showed it connected.
 */
const GRANT_TTL_SECONDS = ROTATION_SECONDS + REFRESH_TOKEN_TTL_SECONDS;

/** The library's own limit on a Client ID Metadata Document (5 KiB), stated beside the others. */
const CLIENT_METADATA_BODY_LIMIT = 5 * 1024;
/** A key set of a client that signs its assertions: a few keys take a few KiB; 64 KiB is plenty. */
const JWKS_BODY_LIMIT = 64 * 1024;

/** OpenID's scopes, which a client may ask for beside a connector scope: they change nothing here. */
const OPENID_SCOPES = ['openid', 'offline_access'] as const;

/** Where oidc-provider's endpoints are served, under the issuer. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
} as const;

export const INTERACTION_PATH = '/oauth/interaction';

/**
 * The path an issuer is served under ('' for none, '/booking' for PUBLIC_BASE_URL
 * https://example.com/booking): behind a proxy that strips it, every URL the sign-in gives a browser or
 * a client starts with it, though the routes here are matched without it.
 */
export function issuerPathOf(issuer: string): string {
  return new URL(issuer).pathname.replace(/\/+$/, '');
}

/** The consent page of sign-in `uid`, as a browser reaches it: under the issuer's path. */
export function interactionPathOf(issuer: string, uid: string): string {
  return `${issuerPathOf(issuer)}${INTERACTION_PATH}/${encodeURIComponent(uid)}`;
}

/** The MCP resource of an issuer: what every token it issues is bound to. */
export function mcpResourceOf(issuer: string): string {
  return `${issuer}/mcp`;
}

/**
 * Client ID Metadata Documents fetched a minute for one client address. Anyone may make the server
 * fetch one (an authorization request naming an https client_id, up to 2.5 s each): a host fetches its
 * own once per sign-in, and the library keeps it at least 30 s. Only a fetch counts, not a document
 * the library still holds.
 */
export const CLIENT_METADATA_FETCHES_PER_MINUTE = 30;

/** A client lookup made outside the library's own request handling: for which request, from where. */
interface LookupScope {
  request: IncomingMessage;
  address: string;
}
const lookupScopes = new AsyncLocalStorage<LookupScope>();

/**
 * The metadata documents each request has been let fetch, with how that fetch ended when it failed:
 * a document that cannot be read is not kept by the library, so each later lookup of one request
 * (withConnectorScopes', the library's own, and its error handler's) fetched it again, and counted
 * again. Those later lookups are given the first one's refusal instead.
 */
const fetchesOf = new WeakMap<IncomingMessage, Map<string, Error>>();

export class AuthorizationServers {
  readonly #deps: AppDeps;
  readonly #options: AuthorizationServerOptions;
  readonly #providers = new Map<string, Promise<OidcProvider>>();
  readonly #metadataFetches: FixedWindowRateLimiter;
  #secrets: Promise<ServerSecrets> | undefined;

  constructor(deps: AppDeps, options: AuthorizationServerOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#metadataFetches = new FixedWindowRateLimiter(deps.rateLimitStore);
  }

  /**
   * The client `clientId` names, looked up for `request` (from client address `address`) outside the
   * library's handling of it: a metadata document it fetches counts against that address, and a fetch
   * that fails is not made again for the same request when the library looks the client up in turn.
   */
  findClient(
    provider: OidcProvider,
    request: IncomingMessage,
    address: string,
    clientId: string,
  ): ReturnType<OidcProvider['Client']['find']> {
    return lookupScopes.run({ request, address }, async () => {
      try {
        return await provider.Client.find(clientId);
      } catch (error) {
        const fetches = fetchesOf.get(request);
        if (fetches?.has(clientId) && error instanceof Error) fetches.set(clientId, error);
        throw error;
      }
    });
  }

  /**
   * Whether a metadata document may be fetched now for the request of `scope` (the library asks only
   * for one it does not hold): refused with the earlier outcome when this request fetched it already,
   * and with rate_limited past CLIENT_METADATA_FETCHES_PER_MINUTE from its address.
   */
  async #admitFetch(scope: LookupScope, clientId: string, errors: typeof OidcErrors): Promise<void> {
    let fetches = fetchesOf.get(scope.request);
    const earlier = fetches?.get(clientId);
    if (earlier) throw earlier;
    if (!fetches) {
      fetches = new Map();
      fetchesOf.set(scope.request, fetches);
    }
    const now = this.#deps.clock.nowMs();
    const decision = await this.#metadataFetches.hit(
      clientMetadataFetches(scope.address),
      CLIENT_METADATA_FETCHES_PER_MINUTE,
      now,
    );
    if (!decision.allowed) {
      const refusal = new errors.CustomOIDCProviderError(
        'rate_limited',
        `More than ${CLIENT_METADATA_FETCHES_PER_MINUTE} client metadata documents fetched in a minute for this address; wait and retry.`,
      );
      Object.assign(refusal, {
        status: 429,
        statusCode: 429,
        retryAfterSeconds: Math.max(1, Math.ceil((decision.resetAt - now) / 1000)),
      });
      fetches.set(clientId, refusal);
      throw refusal;
    }
    // What a later lookup of this request is told when this fetch fails (findClient records how).
    fetches.set(clientId, new errors.InvalidClient('client_id metadata document fetch failed'));
  }

  /** The provider whose issuer is `issuer` (a public base URL without a trailing slash). */
  providerFor(issuer: string): Promise<OidcProvider> {
    let provider = this.#providers.get(issuer);
    if (!provider) {
      provider = this.#create(issuer);
      provider.catch(() => this.#providers.delete(issuer));
      this.#providers.set(issuer, provider);
    }
    return provider;
  }

  async #create(issuer: string): Promise<OidcProvider> {
    const [{ default: Provider, errors }, secrets] = await Promise.all([
      import('oidc-provider'),
      this.#loadSecrets(),
    ]);
    const resource = mcpResourceOf(issuer);
    const issuerPath = issuerPathOf(issuer);
    const deps = this.#deps;
    const allowLoopback = this.#options.allowLoopbackClientMetadata;
    const configuration: Configuration = {
      adapter: (kind: string) =>
        new OauthRecordStore(
          deps.db,
          kind,
          () => deps.clock.nowMs(),
          () => new errors.InvalidGrant('authorization code already consumed'),
        ),
      clients: [],
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      // Redirect URIs of registered and metadata-document clients: https, or plain http to loopback only
      // (OAuth 2.1, MCP authorization); never with a user name or password. The library checks the rest
      // (fragments, schemes, native clients' loopback rule).
      //
      // A registration's (or metadata document's) `scope` says which connector scopes the client may
      // ask for, and nothing else (RFC 7591 section 3.2.1 lets a server replace what a client asked
      // for): a host that names scopes of its own (Claude.ai registers with "claudeai") was refused
      // with invalid_client_metadata and could not connect at all, and one registered for the
      // connector scopes was refused `openid` beside them (invalid_scope), which changes nothing
      // here. With no connector scope named, the client may ask for either, as one that named none.
      extraClientMetadata: {
        properties: ['redirect_uris', 'scope'],
        validator: (ctx, key, value, metadata) => {
          if (key === 'scope' && typeof value === 'string') {
            const named = CONNECTOR_SCOPES.filter((scope) => value.split(' ').includes(scope));
            metadata.scope = named.length > 0 ? [...named, ...OPENID_SCOPES].join(' ') : undefined;
            return;
          }
          if (key !== 'redirect_uris' || !Array.isArray(value)) return;
          for (const uri of value) {
            const why = redirectUriRefusal(String(uri));
            if (why) throw new errors.InvalidClientMetadata(`redirect_uris ${why}`);
          }
          // A desktop host (a loopback or custom-scheme redirect URI) that does not say it is native is
          // taken as one: RFC 7591 has no application_type, and hosts on SDK 1.x send none, but the
          // library's OpenID default, "web", refused every custom scheme and held a loopback URI to its
          // registered port (RFC 8252 section 7.3: any port). A registration that names its type keeps
          // it; a metadata document's is not seen here (a stated "web" reads as the default), and a
          // stored registration is read as it was stored.
          const oidc = (ctx as { oidc?: { route?: string; body?: Record<string, unknown> } } | undefined)
            ?.oidc;
          const registering = oidc?.route === 'registration' && oidc.body?.application_type === undefined;
          const metadataDocument = /^https:\/\//.test(String(metadata.client_id ?? ''));
          if (
            metadata.application_type === 'web' &&
            (registering || metadataDocument) &&
            isNativeStyle(value.map(String))
          ) {
            metadata.application_type = 'native';
          }
        },
      },
      findAccount: async (_ctx, accountId) => ({ accountId, claims: async () => ({ sub: accountId }) }),
      // Every sign-in shows the consent page (and its password): only the grant the page has just made
      // is used. The library's default also took the grant an earlier sign-in of the same browser made
      // (its 15-minute session): a web host's request that came again was given a code at once,
      // whoever was at the browser (a staff member at the salon's shared computer, on the owner's
      // consent), and one that asked for more than was granted got access_denied, no page, no word.
      loadExistingGrant: async (ctx) => {
        const grantId = ctx.oidc.result?.consent?.grantId;
        return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
      },
      // bookings:read and bookings:write are the /mcp resource's (getResourceServerInfo); listed here too
      // because clients name them in their registration's `scope`, which is checked against this list.
      scopes: [...OPENID_SCOPES, ...CONNECTOR_SCOPES],
      claims: { openid: ['sub'] },
      responseTypes: ['code'],
      pkce: { required: () => true },
      routes: OAUTH_ROUTES,
      // The consent page's address, and so the interaction cookie's path, under the issuer's path.
      interactions: { url: async (_ctx, interaction) => interactionPathOf(issuer, interaction.uid) },
      // The session cookie is kept to the issuer's path ('/' without one, the library's default), so a
      // host shared under other prefixes is not sent it. The interaction and resume cookies take the
      // paths of the consent page and of the authorization endpoint (issuerRequest gives it the prefix).
      cookies: { keys: [secrets.cookieKey], long: { path: issuerPath || '/' } },
      jwks: { keys: [secrets.signingKey] },
      ttl: {
        AccessToken: ACCESS_TOKEN_TTL_SECONDS,
        AuthorizationCode: 60,
        Grant: GRANT_TTL_SECONDS,
        Interaction: 15 * 60,
        Session: 15 * 60,
        RefreshToken: REFRESH_TOKEN_TTL_SECONDS,
        // Issued only to a client that asks for openid besides; /mcp never reads one. The library's
        // hour, stated: its default printed a notice on standard output at the first one issued.
        IdToken: 60 * 60,
      },
      // A browser-based client (one without a secret) may call the token and revocation endpoints from
      // a page of the origin of one of its redirect URIs, never from an opaque ("null") origin: the
      // library's default, stated, because that printed a notice on standard output at the first such
      // call, where only the listening line belongs.
      clientBasedCORS: (_ctx, origin, client) =>
        origin !== 'null' &&
        client.clientAuthMethod === 'none' &&
        (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
      // A connector keeps working past an hour: every client that may refresh gets a refresh token.
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      // ... and it outlives the consent page's sign-in. The library's default ties the tokens of a
      // grant made without offline_access to that sign-in (its 15-minute session): a host that asked
      // for the connector's scopes alone, as the 401's challenge says, was refused its first refresh
      // after 15 minutes, and its connector ended within the hour. A grant ends when it is revoked,
      // its account disabled, or its refresh token left unused for 30 days.
      expiresWithSession: async () => false,
      // Every client's refresh token is rotated on each use for a year, not only public clients' (the
      // library's default keeps a confidential client's until 70 % of its 30 days are gone, which
      // would end a connector unused for nine days): 30 days unused is what ends a connector.
      //
      // It is also the last thing the library asks before it spends the refresh token being used, and
      // the resource a refresh names is checked only after that: a refresh refused for naming another
      // resource spent the token the host still held, whose next use then read as a stolen copy's and
      // ended the connection. Such a refresh is refused here, before anything is spent. (A list of
      // resources is the library's to reduce to this one, defaultResource.) This /mcp spelled otherwise
      // (namesResource) is read as the token records it, which the library's later check compares
      // exactly.
      rotateRefreshToken: (ctx) => {
        const token = ctx.oidc.entities.RefreshToken;
        const params = ctx.oidc.params as { resource?: unknown } | undefined;
        if (params && typeof params.resource === 'string') {
          if (!namesResource(params.resource, resource)) {
            throw new errors.InvalidTarget(`the only resource of this server is ${resource}`);
          }
          const recorded = [...(token?.resourceIndicators ?? [])].find(
            (indicator) => typeof indicator === 'string' && namesResource(indicator, resource),
          );
          if (recorded !== undefined) params.resource = recorded;
        }
        return (token?.totalLifetime() ?? 0) < ROTATION_SECONDS;
      },
      features: {
        devInteractions: { enabled: false },
        // No OpenID Connect beyond what OAuth needs: no user info, no logout endpoint.
        userinfo: { enabled: false },
        rpInitiatedLogout: { enabled: false },
        // A registration that names no token_endpoint_auth_method is a public client, as
        // clientDefaults say, and gets no secret. The library decides whether to issue a secret from
        // the request body before clientDefaults apply, so it answered "none" beside a client_secret
        // the token endpoint then refused (invalid_client): a host that kept the secret it was given
        // could never sign in. The default is written into the body here, the one hook that runs
        // before that decision; the identifier is the library's kind (random, URL-safe).
        registration: {
          enabled: true,
          idFactory: (ctx) => {
            const body = (ctx as { oidc?: { body?: Record<string, unknown> } } | undefined)?.oidc?.body;
            if (body !== undefined && body.token_endpoint_auth_method === undefined) {
              body.token_endpoint_auth_method = 'none';
            }
            return randomBytes(16).toString('base64url');
          },
        },
        // A client revokes only its own tokens: another's is ignored for a client without a secret (RFC
        // 7009 answers 200 either way) and refused for one with a secret. The library's default, stated
        // (its default printed a notice on standard output at the first revocation).
        revocation: {
          enabled: true,
          allowedPolicy: async (_ctx, client, token) => {
            if (token.clientId === client.clientId) return true;
            if (client.clientAuthMethod === 'none') return false;
            throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
          },
        },
        // On by default in the library, off here: /mcp takes `Authorization: Bearer` and checks no proof
        // of possession, so a DPoP-bound token (token_type DPoP) would be refused under its own scheme
        // and taken without its proof as Bearer; and pushed authorization requests would be advertised
        // at an endpoint nothing routes.
        dPoP: { enabled: false },
        pushedAuthorizationRequests: { enabled: false },
        clientIdMetadataDocument: {
          enabled: true,
          // The draft this release implements, acknowledged: unacknowledged, the library prints four
          // notices on standard output at the first sign-in, where only the listening line belongs. A
          // release implementing another draft refuses to start with this value, so an upgrade that
          // changes the feature fails the OAuth tests rather than passing unnoticed.
          ack: 'draft-02',
          // Each fetch counts against the client address it is made for (#admitFetch); a lookup with
          // neither the library's request nor findClient's is not one anybody outside can cause.
          allowFetch: async (ctx, clientId) => {
            if (!allowLoopback && isLoopbackUrl(clientId)) return false;
            const scope = ctx ? { request: ctx.req, address: ctx.ip } : lookupScopes.getStore();
            if (!scope) return true;
            try {
              await this.#admitFetch(scope, clientId, errors);
            } catch (refusal) {
              const retryAfter = (refusal as { retryAfterSeconds?: number }).retryAfterSeconds;
              if (ctx && retryAfter !== undefined) ctx.set('retry-after', String(retryAfter));
              throw refusal;
            }
            return true;
          },
        },
        resourceIndicators: {
          enabled: true,
          defaultResource: async () => resource,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx, indicator) => {
            // The audience is the resource as this server names it, however the indicator spelled it.
            if (!namesResource(indicator, resource)) {
              throw new errors.InvalidTarget(`the only resource of this server is ${resource}`);
            }
            return {
              scope: CONNECTOR_SCOPE_LIST,
              audience: resource,
              accessTokenFormat: 'opaque',
              accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
            };
          },
        },
      },
      // The library's own fetch guards against special-use addresses (SSRF); with
      // OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK a document on this machine is fetched without the guard.
      fetch: async (url, init) => {
        if (allowLoopback && isLoopbackUrl(String(url))) {
          const { dispatcher: _guarded, ...rest } = init as RequestInit & { dispatcher?: unknown };
          return fetch(url, rest);
        }
        return fetch(url, init);
      },
      // What anyone may make the server fetch, by registering (open to all) or by a metadata document:
      // its sector_identifier_uri never (it serves pairwise subjects, whose list that is, to nobody:
      // subject_types_supported is "public"), and a private_key_jwt client's key set (jwks_uri) at most
      // JWKS_BODY_LIMIT. The library read both whole, however large, for 2.5 s: one registration, or
      // one token request, held megabytes of an address's choosing in memory.
      sectorIdentifierUriValidate: () => false,
      fetchResponseBodyLimits: {
        'client_id metadata document': CLIENT_METADATA_BODY_LIMIT,
        jwks_uri: JWKS_BODY_LIMIT,
        sector_identifier_uri: 0,
      },
      // Sent as the consent page is (the sign-in's look, its security headers), saying what to do.
      renderError: async (ctx, out) => {
        for (const [name, value] of Object.entries(pageHeaders())) ctx.set(name, value);
        ctx.body = page(
          { title: 'Sign-in failed', noScript: true },
          refusedSignInBody(String(out.error), out.error_description),
        );
      },
    };
    const provider = new Provider(issuer, configuration);
    // It reads its scheme and host from X-Forwarded-*: oauth-routes.ts hands it only the issuer's
    // (issuerRequest), never what a client or an untrusted proxy sent.
    provider.proxy = true;
    const log = this.#options.log;
    provider.on('server_error', (_ctx, error) => log.error({ err: error }, 'OAuth server failed'));
    return provider;
  }

  #loadSecrets(): Promise<ServerSecrets> {
    this.#secrets ??= loadServerSecrets(this.#deps.db);
    this.#secrets.catch(() => {
      this.#secrets = undefined;
    });
    return this.#secrets;
  }
}

/**
 * Whether a resource indicator (RFC 8707) names `resource`, this server's /mcp: the same URL once its
 * scheme and host are lower-cased and a default port dropped (RFC 3986 section 6.2.2-6.2.3), as the
 * MCP authorization spec says a server SHOULD accept. A host that wrote `HTTPS://Booking.Example.com/mcp`
 * or `https://booking.example.com:443/mcp` was refused with invalid_target and could not connect.
 */
export function namesResource(indicator: string, resource: string): boolean {
  try {
    return new URL(indicator).href === new URL(resource).href;
  } catch {
    return false;
  }
}

/** Why a client may not be sent back to `uri`, or null: plain http only to loopback, and no credentials. */
export function redirectUriRefusal(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null; // the library refuses what is not a URL
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.protocol === 'http:' && !isLoopbackUrl(uri)) {
    return 'must use https (plain http only to localhost, 127.0.0.1 or [::1])';
  }
  return null;
}

/** The library's loopback host names, the only ones a native client's plain http may name. */
const NATIVE_LOOPBACKS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether redirect URIs are a native application's (RFC 8252): one at least is plain http to loopback
 * or of a scheme of its own, and every one is as the library takes a native client's (plain http to
 * loopback only, https to no loopback host).
 */
function isNativeStyle(uris: readonly string[]): boolean {
  let native = false;
  for (const uri of uris) {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return false;
    }
    const loopback = NATIVE_LOOPBACKS.has(url.hostname.toLowerCase());
    if (url.protocol === 'https:') {
      if (loopback) return false;
    } else if (url.protocol === 'http:') {
      if (!loopback) return false;
      native = true;
    } else {
      native = true;
    }
  }
  return native;
}

function isLoopbackUrl(value: string): boolean {
  try {
    const host = new URL(value).hostname.toLowerCase();
    return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}
