import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { default as OidcProvider } from 'oidc-provider';
import type { AppDeps } from '../../app/deps.ts';
import type { ConnectorScope } from '../../app/oauth-connectors.ts';
import {
  CONNECTOR_SCOPES,
  forgetUnfinishedConnector,
  isConnectorScope,
  recordConnector,
} from '../../app/oauth-connectors.ts';
import { accountIdOf } from '../../app/oauth-records.ts';
import { clientRegistrations, FixedWindowRateLimiter } from '../../app/rate-limiter.ts';
import { canManageKeys, checkPassword, whilePasswordHolds } from '../../app/staff-account-service.ts';
import { page } from '../console/page.ts';
import { allowCrossOrigin, answerPreflight, isPreflight } from '../cross-origin.ts';
import { acceptPageFields, type Fields } from '../page-fields.ts';
import { originOf, securePage } from '../pages/page-shell.ts';
import { ownOrigins } from '../public-base-url.ts';
import {
  type AuthorizationServerOptions,
  AuthorizationServers,
  INTERACTION_PATH,
  interactionPathOf,
  issuerPathOf,
  mcpResourceOf,
  namesResource,
} from './authorization-server.ts';
import { consentBody, expiredBody } from './consent-page.ts';
import { issuerOf, protectedResourceRoutes } from './protected-resource.ts';

/**
 * The OAuth face of the server (design.md 9.3): /mcp's protected-resource metadata, the authorization
 * server's endpoints (oidc-provider's, handed the raw request: it reads its own bodies) and its
 * metadata at the RFC 8414 address, and the consent page, served here.
 */
export function oauthRoutes(deps: AppDeps, options: Omit<AuthorizationServerOptions, 'log'>) {
  return async (app: FastifyInstance) => {
    const servers = new AuthorizationServers(deps, { ...options, log: app.log });
    const hidden = { schema: { hide: true } };
    protectedResourceRoutes(app);

    await app.register(async (raw) => {
      // oidc-provider parses its own bodies (forms, and JSON for registration): left unread here.
      raw.removeAllContentTypeParsers();
      raw.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
      // Registration is open to anyone (older MCP clients register on first use): bounded per address.
      const registrations = new FixedWindowRateLimiter(deps.rateLimitStore);
      raw.addHook('onRequest', async (request, reply) => {
        if (request.method !== 'POST' || request.routeOptions.url !== '/oauth/register') return;
        // A browser-based client registers from its page: it may read the answer, this refusal included.
        allowCrossOrigin(request, reply, ['Retry-After']);
        const now = deps.clock.nowMs();
        const decision = await registrations.hit(
          clientRegistrations(request.ip),
          REGISTRATIONS_PER_MINUTE,
          now,
        );
        if (decision.allowed) return;
        return reply
          .code(429)
          .header('retry-after', Math.max(1, Math.ceil((decision.resetAt - now) / 1000)))
          .type('application/json; charset=utf-8')
          .send(
            JSON.stringify({
              error: 'rate_limited',
              error_description: `More than ${REGISTRATIONS_PER_MINUTE} client registrations in a minute from this address; wait and retry.`,
            }),
          );
      });
      const forward = async (request: FastifyRequest, reply: FastifyReply, url?: string) => {
        const provider = await servers.providerFor(issuerOf(request));
        reply.hijack();
        reply.raw.setHeader('x-request-id', request.id);
        if (url !== undefined) request.raw.url = url;
        await handlerOf(provider)(issuerRequest(request), reply.raw);
      };
      // The metadata, and its CORS preflight (a browser-based client's GET carries MCP-Protocol-Version),
      // are the provider's; any other OPTIONS is answered here, as at the endpoints below.
      for (const [path, served] of [
        ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'],
        ['/.well-known/openid-configuration', undefined],
      ] as const) {
        raw.route({
          method: EVERY_METHOD,
          url: path,
          ...hidden,
          config: { allow: allowOf(['GET']) },
          handler: (request, reply) => {
            if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method)) {
              return refuseMethod(reply, path, request.method, allowOf(['GET']));
            }
            return request.method === 'OPTIONS' && !isPreflight(request)
              ? answerOptions(reply, allowOf(['GET']))
              : forward(request, reply, served);
          },
        });
      }
      for (const [path, taken] of Object.entries(SERVED_METHODS)) {
        const served = allowOf(taken);
        raw.route({
          method: EVERY_METHOD,
          url: path,
          ...hidden,
          config: { allow: served },
          // HEAD comes here through Fastify's own route beside each GET one.
          handler: async (request, reply) => {
            if (!served.includes(request.method)) return refuseMethod(reply, path, request.method, served);
            if (path === '/oauth/register' && isPreflight(request))
              return answerPreflight(request, reply, ['POST']);
            if (request.method === 'OPTIONS' && !(isPreflight(request) && PREFLIGHTED.has(path)))
              return answerOptions(reply, served);
            if (path === '/oauth/authorize') {
              const provider = await servers.providerFor(issuerOf(request));
              const find = lookupFor(servers, provider, request);
              const url = await withConnectorScopes(find, request.raw.url);
              return forward(request, reply, withCanonicalResource(url, mcpResourceOf(issuerOf(request))));
            }
            return forward(request, reply);
          },
        });
      }
    });

    await app.register(async (pages) => {
      acceptPageFields(pages, 16 * 1024);
      const url = `${INTERACTION_PATH}/:uid`;
      pages.get(url, hidden, async (request, reply) => {
        const provider = await servers.providerFor(issuerOf(request));
        const details = await detailsOf(provider, request, reply);
        if (!details) return sendSignInEnded(reply);
        return sendPage(
          reply,
          'Connect an app',
          consentBody(await viewOf(lookupFor(servers, provider, request), details, issuerOf(request))),
          details.redirectUri,
        );
      });
      const answer = async (request: FastifyRequest, reply: FastifyReply) => {
        const provider = await servers.providerFor(issuerOf(request));
        const details = await detailsOf(provider, request, reply);
        if (!details) return sendSignInEnded(reply);
        const claimed = originOf(request.headers.origin ?? request.headers.referer);
        if (claimed === undefined || !ownOrigins(request).has(claimed)) {
          return sendPage(
            reply.code(403),
            'Not accepted from here',
            '<h1>Not accepted from here</h1><p>This form is accepted only from this page.</p>',
          );
        }
        // The form sent again (a double-click on Allow) after it was answered: the first answer
        // stands, and the browser goes on where it led. Each answer made a grant and a connector, and
        // only the last reached the host: the console listed connected apps that never were.
        if (details.answeredTo !== undefined)
          return reply.code(303).header('location', details.answeredTo).send();
        const finish = async (
          result: Parameters<OidcProvider['interactionResult']>[2],
          unfinished?: () => Promise<void>,
        ) => {
          let returnTo: string;
          try {
            returnTo = await provider.interactionResult(issuerRequest(request), reply.raw, result, {
              mergeWithLastSubmission: false,
            });
          } catch {
            // Ended meanwhile (its 15 minutes gone, or the browser went on with an earlier answer):
            // said as any ended sign-in, and what this answer recorded taken back. The library's own
            // answer, failing on the raw response it had been handed, left the request unanswered.
            await unfinished?.();
            return sendSignInEnded(reply);
          }
          return reply.code(303).header('location', returnTo).send();
        };
        const form = (request.body as Fields | undefined) ?? {};
        if (form.decision === 'deny') {
          return finish({
            error: 'access_denied',
            error_description: 'The owner or admin denied the connection.',
          });
        }
        const view = await viewOf(lookupFor(servers, provider, request), details, issuerOf(request));
        const scope = form.scope;
        // Shown again as filled, the scope chosen included: the page's first choice put back after a
        // mistyped password granted less than the person had chosen, once they only retyped it.
        const chosen = isConnectorScope(scope) && view.scopes.includes(scope) ? scope : view.chosen;
        const again = (status: number, error: string) =>
          sendPage(
            reply.code(status),
            'Connect an app',
            consentBody({ ...view, chosen, organisation: form.organisation, email: form.email, error }),
            details.redirectUri,
          );
        if (!isConnectorScope(scope) || !view.scopes.includes(scope))
          return again(400, 'Choose what it may do.');
        const checked = await checkPassword(
          deps.db,
          deps.rateLimitStore,
          {
            organisationSlug: form.organisation ?? '',
            email: form.email ?? '',
            password: form.password ?? '',
            address: request.ip,
          },
          deps.clock.nowMs(),
        );
        if (!checked.ok) {
          if (checked.reason === 'throttled') {
            reply.header('retry-after', Math.ceil(checked.retryAfterMs / 1000));
            return again(
              429,
              `Too many failed sign-ins. Try again in ${Math.ceil(checked.retryAfterMs / 60_000)} minutes.`,
            );
          }
          return again(401, 'The organisation, e-mail or password is wrong.');
        }
        if (!canManageKeys(checked.user.role)) {
          return again(
            403,
            'Only an owner or admin of the organisation can connect an app. Ask one of them.',
          );
        }
        const accountId = accountIdOf(checked.organisation.id, checked.user.id);
        const grant = new provider.Grant({ accountId, clientId: details.clientId });
        // OpenID scopes a client asked for besides (openid, offline_access) change nothing here.
        const oidcScopes = details.requestedScopes.filter((s) => s === 'openid' || s === 'offline_access');
        if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
        // One scope is granted; the others asked for are recorded as refused, so the library does not
        // ask again for them (and the token carries only the one granted).
        const resource = mcpResourceOf(issuerOf(request));
        // (They are OpenID scopes to the library as well: granted and refused the same way there.)
        // Granted on the resource as the request named it too (an upper-case host, say): the library
        // looks the grant up under the indicator it was sent.
        const refused = CONNECTOR_SCOPES.filter((s) => s !== scope).join(' ');
        for (const indicator of new Set([resource, ...details.resources])) {
          if (!namesResource(indicator, resource)) continue;
          grant.addResourceScope(indicator, scope);
          grant.rejectResourceScope(indicator, refused);
        }
        grant.addOIDCScope(scope);
        grant.rejectOIDCScope(refused);
        const grantId = await grant.save();
        // A grant without its connector's record gives tokens nobody honours (principalOfAccessToken).
        const recorded = await whilePasswordHolds(deps.db, checked.user, (trx) =>
          recordConnector(
            trx,
            {
              grantId,
              organisationId: checked.organisation.id,
              clientId: details.clientId,
              clientName: view.clientName,
              scope,
              userId: checked.user.id,
            },
            deps.clock.nowMs(),
          ),
        );
        if (!recorded) return again(401, 'The organisation, e-mail or password is wrong.');
        return finish({ login: { accountId }, consent: { grantId } }, () =>
          forgetUnfinishedConnector(deps.db, checked.organisation.id, grantId),
        );
      };
      // One answer of a sign-in at a time, so a second one sees the first's (answeredTo). In this
      // process only: with several instances and no sticky sessions, the two posts of a double-click
      // may reach two of them, both answered, the second answer standing (one connector too many).
      const answering = new Map<string, Promise<unknown>>();
      pages.post(url, hidden, async (request, reply) => {
        const uid = (request.params as { uid?: string }).uid ?? '';
        const mine = (answering.get(uid) ?? Promise.resolve())
          .catch(() => undefined)
          .then(() => answer(request, reply));
        answering.set(uid, mine);
        try {
          return await mine;
        } finally {
          if (answering.get(uid) === mine) answering.delete(uid);
        }
      });
    });
  };
}

/**
 * The raw request as the library is to see it: oidc-provider makes the URLs of its endpoints (the
 * RFC 8414 metadata, its redirects) from the request's scheme and host, so it is given the issuer's
 * (PUBLIC_BASE_URL, or a host this server serves as a trusted proxy reported it: public-base-url.ts)
 * and the client address Fastify trusted, never a Host or X-Forwarded-* header it would believe by
 * itself. Behind a proxy passing its upstream address as Host, or with a forged Host, the metadata
 * named endpoints at that host.
 *
 * The issuer's path (PUBLIC_BASE_URL https://example.com/booking, behind a proxy that strips /booking)
 * is given as the request's mount path, which the library puts before every endpoint it names
 * (ctx.oidc.urlFor reads `baseUrl` when `originalUrl` names no other): without it the metadata, the
 * redirects back from the consent page and the resume cookie's path named /oauth/… at the root,
 * which the proxy does not send here.
 */
function issuerRequest(request: FastifyRequest): IncomingMessage {
  const issuer = issuerOf(request);
  const { host, protocol } = new URL(issuer);
  const raw = request.raw as IncomingMessage & { baseUrl?: string; originalUrl?: string };
  const { headers } = raw;
  headers.host = host;
  headers['x-forwarded-host'] = host;
  headers['x-forwarded-proto'] = protocol.slice(0, -1);
  headers['x-forwarded-for'] = request.ip;
  raw.baseUrl = issuerPathOf(issuer);
  delete raw.originalUrl;
  return raw;
}

/**
 * The methods the OAuth addresses route, to refuse those they do not serve in their own error form:
 * every method the server's router takes but HEAD (GET's) and QUERY (whose body Fastify reads first).
 * Each route's `config.allow` tells the REST API's 405 (error-envelope.ts) what it serves, for QUERY.
 */
const EVERY_METHOD: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

/**
 * The methods oidc-provider serves at each of its endpoints here (HEAD wherever GET, as its router
 * does), besides OPTIONS, which every one takes: a CORS preflight is the provider's to answer where it
 * answers one (PREFLIGHTED), registration's is answered here (the provider has none: a browser-based
 * client registers from its page, cross-origin), and any other OPTIONS is answered here, with Allow.
 * Any other method went to its router, which answered a plain-text "Not Found": the DELETE or PUT of a
 * client registration (RFC 7592's update and delete, which this server does not offer) among them,
 * whatever the client. They are refused here instead, in the OAuth endpoints' JSON error form.
 */
const SERVED_METHODS: Readonly<Record<string, readonly string[]>> = {
  '/oauth/authorize': ['GET'],
  '/oauth/authorize/*': ['GET'],
  '/oauth/token': ['POST'],
  '/oauth/register': ['POST'],
  '/oauth/register/*': ['GET'],
  '/oauth/revoke': ['POST'],
  '/oauth/jwks': ['GET'],
};

/**
 * What an endpoint's Allow lists (405 and OPTIONS alike): the methods it takes, HEAD wherever GET (the
 * provider answers it so, and so does every other GET route of the server), and OPTIONS.
 */
function allowOf(taken: readonly string[]): readonly string[] {
  return [...taken.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])), 'OPTIONS'];
}

/**
 * The endpoints whose CORS preflights oidc-provider answers (its router's `cors.*` routes). Its
 * authorization endpoint and a registration's read take no cross-origin call (the first is a page the
 * browser is sent to): a preflight there is answered as any OPTIONS, granting nothing (its router, with
 * no route for it, says "Not Found"). Registration is granted here (cross-origin.ts).
 */
const PREFLIGHTED: ReadonlySet<string> = new Set(['/oauth/token', '/oauth/revoke', '/oauth/jwks']);

/**
 * OPTIONS that is no preflight the provider answers: the methods the endpoint takes, in Allow (RFC 9110
 * section 9.3.7), and no CORS header.
 */
function answerOptions(reply: FastifyReply, served: readonly string[]) {
  return reply.code(204).header('allow', served.join(', ')).send();
}

/**
 * 405 with Allow, as RFC 7592 answers an update or delete a server does not support, in the JSON
 * error form the OAuth endpoints answer ({error, error_description}).
 */
function refuseMethod(reply: FastifyReply, path: string, method: string, served: readonly string[]) {
  // The methods to use instead: HEAD is GET's, OPTIONS asks what they are.
  const allowed = served.filter((m) => m !== 'OPTIONS' && m !== 'HEAD');
  const description =
    path === '/oauth/register/*'
      ? `A client registration cannot be ${method === 'DELETE' ? 'deleted' : method === 'PUT' || method === 'PATCH' ? 'updated' : 'changed'} here: only read (GET, with its registration access token). A registration with no grant is removed a day after it was made, or a day after its last grant ended.`
      : `${method} is not allowed at this endpoint; use ${allowed.join(' or ')}.`;
  return reply
    .code(405)
    .header('allow', served.join(', '))
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ error: 'invalid_request', error_description: description }));
}

/**
 * An authorization request as the library is to see it: one that names no connector scope (no `scope`
 * at all, as OAuth 2.1 allows and hosts that read no scopes_supported send, or only `openid` or
 * `offline_access`) asks for those its client may ask for (both, unless its registration names one),
 * and the consent page offers them, as it already said it would. The library grants only scopes the
 * request named: such a sign-in ended in access_denied after "Allow", or in a token with an empty
 * `scope`.
 */
async function withConnectorScopes(
  find: (clientId: string) => ReturnType<OidcProvider['Client']['find']>,
  url: string | undefined,
): Promise<string | undefined> {
  const query = url?.indexOf('?') ?? -1;
  if (url === undefined || query === -1) return url;
  const params = new URLSearchParams(url.slice(query + 1));
  const asked = (params.get('scope') ?? '').split(' ').filter(Boolean);
  if (asked.some(isConnectorScope)) return url;
  // An unknown client, or a metadata document that cannot be read, is the library's to refuse (with
  // this lookup's refusal: findClient keeps it for the request, so the document is fetched once).
  const client = await find(params.get('client_id') ?? '').catch(() => undefined);
  if (!client) return url;
  const registered = typeof client.scope === 'string' ? client.scope.split(' ') : undefined;
  const added = CONNECTOR_SCOPES.filter((scope) => !registered || registered.includes(scope));
  if (added.length === 0) return url;
  params.set('scope', [...asked, ...added].join(' '));
  return `${url.slice(0, query)}?${params}`;
}

/**
 * An authorization request naming /mcp spelled otherwise (`HTTP://Booking.Example.com/mcp`, a default
 * port: namesResource) names it as this server spells it too. The code records the indicators the
 * request named, and the library takes at the token endpoint only one of those, compared exactly: a
 * host that wrote /mcp one way here and this server's way there (as its metadata spells it) was
 * refused with invalid_target, its code spent.
 */
function withCanonicalResource(url: string | undefined, resource: string): string | undefined {
  const query = url?.indexOf('?') ?? -1;
  if (url === undefined || query === -1) return url;
  const params = new URLSearchParams(url.slice(query + 1));
  const named = params.getAll('resource');
  if (named.includes(resource) || !named.some((indicator) => namesResource(indicator, resource))) return url;
  params.append('resource', resource);
  return `${url.slice(0, query)}?${params}`;
}

/** Client lookups for `request` (findClient): a metadata document fetched counts against its address. */
function lookupFor(servers: AuthorizationServers, provider: OidcProvider, request: FastifyRequest) {
  return (clientId: string) => servers.findClient(provider, request.raw, request.ip, clientId);
}

/** The provider's request handler (koa composes its middleware once per handler, so it is kept). */
const handlers = new WeakMap<OidcProvider, ReturnType<OidcProvider['callback']>>();
function handlerOf(provider: OidcProvider): ReturnType<OidcProvider['callback']> {
  let handler = handlers.get(provider);
  if (!handler) {
    handler = provider.callback();
    handlers.set(provider, handler);
  }
  return handler;
}

/** Client registrations a minute from one address: a host registers once per server, not per call. */
export const REGISTRATIONS_PER_MINUTE = 30;

interface Interaction {
  uid: string;
  clientId: string;
  redirectUri: string;
  requestedScopes: string[];
  /** The resource indicators the request named (RFC 8707), as it spelled them. */
  resources: string[];
  /** Where the browser goes on to when the form was answered already (the library's returnTo). */
  answeredTo: string | undefined;
}

/** The interaction of this page's uid and cookie, or null when it ended (or is not this browser's). */
async function detailsOf(
  provider: OidcProvider,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Interaction | null> {
  try {
    const details = await provider.interactionDetails(issuerRequest(request), reply.raw);
    if (details.uid !== (request.params as { uid?: string }).uid) return null;
    const params = details.params as Record<string, unknown>;
    return {
      uid: details.uid,
      clientId: String(params.client_id),
      redirectUri: String(params.redirect_uri),
      requestedScopes: String(params.scope ?? '')
        .split(' ')
        .filter(Boolean),
      resources: ([] as unknown[]).concat(params.resource ?? []).map(String),
      answeredTo: details.result === undefined ? undefined : details.returnTo,
    };
  } catch {
    return null;
  }
}

/** What the consent page shows; its form posts back to this page, under the issuer's path. */
async function viewOf(
  find: (clientId: string) => ReturnType<OidcProvider['Client']['find']>,
  details: Interaction,
  issuer: string,
) {
  // Its name only: a document that cannot be read again (or not now) leaves the page without it.
  const client = await find(details.clientId).catch(() => undefined);
  const requested = CONNECTOR_SCOPES.filter((s) => details.requestedScopes.includes(s));
  const scopes: readonly ConnectorScope[] = requested.length > 0 ? requested : CONNECTOR_SCOPES;
  return {
    action: interactionPathOf(issuer, details.uid),
    clientName: typeof client?.clientName === 'string' ? client.clientName : null,
    clientId: details.clientId,
    redirectHost: returnPlaceOf(details.redirectUri),
    scopes,
    chosen: scopes.includes('bookings:read') ? ('bookings:read' as const) : scopes[0]!,
  };
}

/**
 * Where Allow sends the person, in words: a web host's site (its host name), or a desktop host's app
 * (RFC 8252: a loopback port it listens on, or a URI scheme of its own), which has no site to name:
 * "you return to ." (a scheme without a host) or a reversed domain (anysphere.cursor-mcp) read as a
 * place nobody knows.
 */
function returnPlaceOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the app';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `the app on this device that opens ${parsed.protocol} links`;
  }
  if (LOOPBACK_NAMES.has(parsed.hostname.toLowerCase())) {
    return `the app on this device that listens at ${parsed.host}`;
  }
  return parsed.host;
}

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The page of a sign-in that ended (its time up, answered and gone on, or not this browser's). */
function sendSignInEnded(reply: FastifyReply): FastifyReply {
  return sendPage(reply.code(400), 'Sign-in ended', expiredBody());
}

/** A page of the sign-in; its form may lead (after this server's own redirect) to the client's redirect URI. */
function sendPage(reply: FastifyReply, title: string, body: string, redirectUri?: string): FastifyReply {
  return securePage(reply, { formTargets: redirectUri ? [redirectUri] : [] }).send(
    page({ title, noScript: true }, body),
  );
}
