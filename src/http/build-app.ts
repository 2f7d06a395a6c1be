import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type onSendHookHandler,
} from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { LOOPBACK_HOSTS } from '../app/config.ts';
import { CursorSecrets } from '../app/cursor-secrets.ts';
import type { AppDeps } from '../app/deps.ts';
import { isStripe } from '../app/stripe-provider.ts';
import { AppError } from '../domain/errors.ts';
import { createAuthenticator } from './authenticate.ts';
import { consoleRoutes } from './console/console-routes.ts';
import { answerConsoleFrameworkError, isConsoleAddress } from './console/problem-page.ts';
import {
  answerClientError,
  answerConnect,
  answerFrameworkError,
  answerUnmetExpectation,
  installErrorEnvelope,
  MAX_PARAM_LENGTH,
} from './error-envelope.ts';
import { assertSecureTransport } from './https-guard.ts';
import { acceptNoBodyOfAnyType, parseJsonAsText, refuseBodiesWhereNoneIsTaken } from './json-body.ts';
import { ListPageCache } from './list-page-cache.ts';
import {
  answerMcpPreflight,
  crossOriginAtMcp,
  registerMcpRoutes,
  withoutMcpTrailingSlash,
} from './mcp-routes.ts';
import type { SseLimits } from './mcp-sse.ts';
import { oauthRoutes } from './oauth/oauth-routes.ts';
import { registerOpenApi, serveOpenApi } from './openapi.ts';
import { answerPageFrameworkError, isCustomerPageAddress, pageRoutes } from './pages/page-routes.ts';
import { installPublicLinks } from './public-base-url.ts';
import { leaveOutEmptyOptionalQuery } from './query-params.ts';
import {
  addressWindow,
  addressWindowHeaders,
  needsAddressWindow,
  rateLimitHeaders,
} from './rate-limit-headers.ts';
import { requestIdFor } from './request-id.ts';
import { availabilityRoutes } from './routes/availability.ts';
import { bookingRoutes } from './routes/bookings.ts';
import { calendarFeedRoutes } from './routes/calendar-feed.ts';
import { answerCheckoutFrameworkError, checkoutRoutes, isCheckoutAddress } from './routes/checkout.ts';
import { clientRoutes } from './routes/clients.ts';
import { healthRoutes } from './routes/health.ts';
import { locationRoutes } from './routes/locations.ts';
import { messageRoutes } from './routes/messages.ts';
import { protectedHoldRoutes } from './routes/protected-holds.ts';
import { sendLinkRoutes } from './routes/send-link.ts';
import { stripeWebhookRoutes } from './routes/stripe-webhook.ts';
import { waitlistRoutes } from './routes/waitlist.ts';
import { webhookEndpointRoutes } from './routes/webhook-endpoints.ts';
import { cutSilentConnectionsOnClose, endConnectionsAsTheyFinish } from './silent-connections.ts';

export const BODY_LIMIT_BYTES = 64 * 1024;

type OnSendDone = Parameters<onSendHookHandler>[3];

/** How long a client may take to send a request, so that slow clients cannot hold connections. */
export interface RequestTimeouts {
  /** The request line and headers (Node's headersTimeout). */
  headersMs: number;
  /** The whole request, body included (Node's requestTimeout): 408 request_timeout after it. */
  requestMs: number;
  /** How often Node checks both; a limit is enforced up to this much late. */
  checkEveryMs: number;
}

export const DEFAULT_TIMEOUTS: RequestTimeouts = {
  headersMs: 10_000,
  requestMs: 15_000,
  checkEveryMs: 1_000,
};

export interface HttpOptions {
  /** Fastify's trustProxy (TRUST_PROXY). */
  trustProxy?: boolean | number | string;
  /** PEM certificate and key: the server speaks HTTPS. */
  https?: { cert: string | Buffer; key: string | Buffer } | null;
  /** A pino logger; silent when absent. */
  logger?: FastifyBaseLogger;
  /**
   * Host names this server serves (loopback names and ALLOWED_HOSTS): the MCP endpoints answer only
   * to them (DNS rebinding protection), links are made for them, and the checkout forms accept posts
   * from their origins. Loopback names by default.
   */
  allowedHosts?: readonly string[];
  /** PUBLIC_BASE_URL when set: every link the service makes starts with it. */
  publicBaseUrl?: string | null;
  /** Keep-alive, idle timeout and streams per key of the legacy MCP SSE transport. */
  mcpSse?: Partial<SseLimits>;
  /** Limits on how slowly a request may arrive (tests shorten them). */
  timeouts?: Partial<RequestTimeouts>;
  /** OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK: Client ID Metadata Documents may be on this machine. */
  oauthClientMetadataAllowLoopback?: boolean;
}

/**
 * Builds the HTTP face of the engine without listening (nor readying, so a caller may still add
 * hooks): tests drive it with inject(), `booking serve` calls listen(). Everything a request meets on
 * its way is set up here, in order.
 */
export async function buildApp(deps: AppDeps, options: HttpOptions = {}): Promise<FastifyInstance> {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const windowOf = addressWindow(deps);
  const headersFor = async (address: string) => rateLimitHeaders(await windowOf(address));
  const envelopeFrameworkError = answerFrameworkError(headersFor);
  const pageFrameworkError = answerPageFrameworkError(deps);
  const checkoutFrameworkError = deps.payments && answerCheckoutFrameworkError(deps.payments);
  const server = {
    // Node would answer a Host-less HTTP/1.1 request itself, outside the envelope: the onRequest hook does.
    requireHostHeader: false,
    headersTimeout: timeouts.headersMs,
    connectionsCheckingInterval: timeouts.checkEveryMs,
  };
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    ...(options.https ? { https: { ...options.https, ...server } } : { http: server }),
    // Fastify's default is no limit at all: a client sending a byte every few seconds would hold its
    // connection for ever.
    requestTimeout: timeouts.requestMs,
    // Fastify's own request lines carry the URL, whose query may hold a phone or e-mail; our onResponse
    // hook logs the route pattern instead.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestIdFor,
    trustProxy: trustedProxies(options.trustProxy ?? false),
    bodyLimit: BODY_LIMIT_BYTES,
    // During a graceful shutdown a request that arrives on an already open connection is served (with
    // Connection: close) instead of refused with Fastify's own 503 body outside our envelope: it is at
    // most one request per connection, and a caller's booking should not fail because of a deploy.
    return503OnClosing: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    rewriteUrl: (raw) => withoutMcpTrailingSlash(raw.url ?? '/'),
    // Requests refused before Fastify's lifecycle get the envelope, a request id and rate-limit headers.
    // ... except at console addresses, where a person's browser shows the answer: the console's page.
    // ... and at the customer's pages (/p/), whose own error page is answered; the checkout's and the
    // card page's likewise, where a provider mounts them.
    frameworkErrors: (error, request, reply) => {
      if (isConsoleAddress(request.url)) return answerConsoleFrameworkError(error, request, reply);
      if (isCustomerPageAddress(request.url)) return pageFrameworkError(error, request, reply);
      if (checkoutFrameworkError && isCheckoutAddress(request.url)) {
        return checkoutFrameworkError(error, request, reply);
      }
      return envelopeFrameworkError(error, request, reply);
    },
    clientErrorHandler: answerClientError(headersFor),
  }) as unknown as FastifyInstance;
  app.server.on('checkExpectation', answerUnmetExpectation(headersFor));
  app.server.on('connect', answerConnect(headersFor));
  cutSilentConnectionsOnClose(app);
  const shutdown = endConnectionsAsTheyFinish(app);

  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by presenters that produce exactly the documented shape (tests check every
  // response against the OpenAPI document), so re-validating each one against zod at run time would
  // only cost time.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.removeContentTypeParser(['text/plain']);
  parseJsonAsText(app);
  app.decorateRequest('principal', null);
  const refuseUnroutedEarly = installErrorEnvelope(app);

  // The hooks every request runs are callback-style, not async: an async hook costs each request a
  // promise and a turn of the microtask queue, and these do nothing they would wait for but the
  // address window of an unkeyed answer.
  app.addHook('onRequest', (request, reply, done) => {
    try {
      // First, so that a browser-based MCP client can read every answer of /mcp, refusals included.
      const preflight = crossOriginAtMcp(request, reply);
      checkRequestLine(request, reply);
      // Answered here: /mcp has no OPTIONS route (its Allow is POST), the preflight is CORS's own.
      if (preflight) {
        answerMcpPreflight(request, reply);
        return;
      }
      refuseUnroutedEarly(request, reply);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });
  const giveAddressWindow = addressWindowHeaders(deps);
  const answer = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: OnSendDone) => {
    if (!needsAddressWindow(request, reply)) {
      done(null, payload);
      return;
    }
    void giveAddressWindow(request, reply).then(() => done(null, payload));
  };
  app.addHook('onSend', (request, reply, payload, done) => {
    if (shutdown.closing()) reply.header('connection', 'close');
    if (reply.statusCode < 400 || request.raw.complete) {
      answer(request, reply, payload, done);
      return;
    }
    // Refused before its body was read (no key, an unknown path): the client may still be sending it,
    // slowly or not at all, and the connection would wait for it. Close it instead. A refusal made
    // while Node's parser is still inside the request's bytes (the synchronous onRequest hook) sees
    // the request incomplete even when all of it, or all of a request without a body, has arrived:
    // looked at again once the parser has returned, or every such refusal would close its
    // connection, and the requests pipelined after it on that connection would go unanswered.
    queueMicrotask(() => {
      if (!request.raw.complete) reply.header('connection', 'close');
      answer(request, reply, payload, done);
    });
  });
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? null,
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
        key_id: request.principal?.apiKeyId,
      },
      'request completed',
    );
    done();
  });

  const allowedHosts = options.allowedHosts ?? LOOPBACK_HOSTS;
  installPublicLinks(app, {
    publicBaseUrl: options.publicBaseUrl ?? null,
    allowedHosts: new Set(allowedHosts.map((host) => host.toLowerCase())),
  });
  await registerOpenApi(app, options.publicBaseUrl ?? null);
  const typed = app.withTypeProvider<ZodTypeProvider>();
  await typed.register(healthRoutes(deps));
  // The payment links of the provider chosen (the local test mode's pages, or Stripe's redirects), and
  // Stripe's webhook; nothing without a provider.
  if (deps.payments) await typed.register(checkoutRoutes(deps, deps.payments));
  if (isStripe(deps.payments)) await app.register(stripeWebhookRoutes(deps, deps.payments));
  // One reader of the cursor secrets for the API's lists and the console's pages of deliveries.
  const cursorSecrets = new CursorSecrets(deps.db, deps.secret);
  await app.register(consoleRoutes(deps, cursorSecrets));
  // Staff members' calendar feeds: /ical/{token}.ics.
  await app.register(calendarFeedRoutes(deps));
  // The customer's pages: /p/{organisation_slug} and /p/manage/{token}.
  await typed.register(pageRoutes(deps));
  serveOpenApi(app);
  // OAuth sign-in for hosted MCP connectors (design.md 9.3): metadata, authorization server, consent.
  await app.register(
    oauthRoutes(deps, {
      allowLoopbackClientMetadata: options.oauthClientMetadataAllowLoopback ?? false,
    }),
  );
  registerMcpRoutes(app, deps, {
    allowedHosts,
    bodyLimitBytes: BODY_LIMIT_BYTES,
    ...(options.mcpSse && { sse: options.mcpSse }),
  });
  await typed.register(
    async (v1) => {
      v1.addHook('onRequest', createAuthenticator(deps));
      acceptNoBodyOfAnyType(v1);
      refuseBodiesWhereNoneIsTaken(v1);
      leaveOutEmptyOptionalQuery(v1);
      await v1.register(locationRoutes(deps, cursorSecrets, new ListPageCache()));
      await v1.register(availabilityRoutes(deps));
      await v1.register(clientRoutes(deps));
      await v1.register(bookingRoutes(deps));
      await v1.register(protectedHoldRoutes(deps));
      await v1.register(messageRoutes(deps));
      await v1.register(sendLinkRoutes(deps));
      await v1.register(webhookEndpointRoutes(deps, cursorSecrets));
      await v1.register(waitlistRoutes(deps, cursorSecrets));
    },
    { prefix: '/v1' },
  );
  return app;
}

/**
 * TRUST_PROXY as Fastify takes it. A hop count n means "the n nearest hops are our proxies": Fastify
 * refuses to trust anything for a bare number (it cannot check the peer), so it gets proxy-addr's
 * hop-count function, which is what the setting means; the operator vouches that only the proxies can
 * reach the port.
 */
function trustedProxies(
  setting: boolean | number | string,
): boolean | string | ((address: string, hop: number) => boolean) {
  if (typeof setting !== 'number') return setting;
  return (_address, hop) => hop < setting;
}

/**
 * The REST parameter, path or query, whose value holds a NUL, as the contract's invalid_request names
 * the parameter (param); undefined elsewhere (the pages, the MCP endpoints) and where none does (a
 * parameter's name, a path no route took): the URL's.
 */
function parameterHoldingNul(request: FastifyRequest): string | undefined {
  if (request.routeOptions.url?.startsWith('/v1/') !== true) return undefined;
  const holds = (value: unknown) => [value].flat().some((v) => typeof v === 'string' && v.includes('\u0000'));
  for (const source of [request.params, request.query]) {
    if (typeof source !== 'object' || source === null) continue;
    for (const [name, value] of Object.entries(source)) {
      if (name.includes('\u0000')) return undefined;
      if (holds(value)) return name;
    }
  }
  return undefined;
}

/**
 * What every request must be before anything else: its id echoed; no NUL in its URL (no path or query
 * parameter is text with one, and PostgreSQL cannot even compare one); a Host header but on /healthz
 * (links the service makes, payment_url, are built from it; HTTP/1.0 may omit it, and health checkers
 * often do); HTTPS where it is required.
 */
function checkRequestLine(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  if (request.url.includes('%00') || request.url.includes('\u0000')) {
    const param = parameterHoldingNul(request);
    throw param === undefined
      ? new AppError('invalid_request', 'The URL holds a NUL character (%00).', 'url')
      : new AppError('invalid_request', `${param} holds a NUL character (%00); send text only.`, param);
  }
  if (request.routeOptions.url === '/healthz') return;
  if (request.headers.host === undefined) {
    throw new AppError('invalid_request', 'A request must carry a Host header.', 'Host');
  }
  assertSecureTransport(request);
}
