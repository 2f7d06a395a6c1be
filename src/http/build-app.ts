import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { LOOPBACK_HOSTS } from '../app/config.ts';
import { CursorSecrets } from '../app/cursor-secrets.ts';
import type { AppDeps } from '../app/deps.ts';
import { AppError } from '../domain/errors.ts';
import { createAuthenticator } from './authenticate.ts';
import {
  answerClientError,
  answerFrameworkError,
  answerUnmetExpectation,
  installErrorEnvelope,
} from './error-envelope.ts';
import { assertSecureTransport } from './https-guard.ts';
import { parseJsonAsText } from './json-body.ts';
import { ListPageCache } from './list-page-cache.ts';
import { registerMcpRoutes } from './mcp-routes.ts';
import type { SseLimits } from './mcp-sse.ts';
import { registerOpenApi, serveOpenApi } from './openapi.ts';
import { requestIdFor } from './request-id.ts';
import { availabilityRoutes } from './routes/availability.ts';
import { bookingRoutes } from './routes/bookings.ts';
import { checkoutRoutes } from './routes/checkout.ts';
import { clientRoutes } from './routes/clients.ts';
import { healthRoutes } from './routes/health.ts';
import { locationRoutes } from './routes/locations.ts';
import { messageRoutes } from './routes/messages.ts';
import { cutSilentConnectionsOnClose } from './silent-connections.ts';

export const BODY_LIMIT_BYTES = 64 * 1024;

export interface HttpOptions {
  /** Fastify's trustProxy (TRUST_PROXY). */
  trustProxy?: boolean | number | string;
  /** PEM certificate and key: the server speaks HTTPS. */
  https?: { cert: string | Buffer; key: string | Buffer } | null;
  /** A pino logger; silent when absent. */
  logger?: FastifyBaseLogger;
  /** Host names the MCP endpoints answer to (DNS rebinding protection); loopback names by default. */
  mcpAllowedHosts?: readonly string[];
  /** Keep-alive, idle timeout and streams per key of the legacy MCP SSE transport. */
  mcpSse?: Partial<SseLimits>;
}

/**
 * Builds the HTTP face of the engine without listening (nor readying, so a caller may still add
 * hooks): tests drive it with inject(), `booking serve` calls listen(). Everything a request meets on
 * its way is set up here, in order.
 */
export async function buildApp(deps: AppDeps, options: HttpOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // Node would answer a Host-less HTTP/1.1 request itself, outside the envelope: the onRequest hook does.
    ...(options.https
      ? { https: { ...options.https, requireHostHeader: false } }
      : { http: { requireHostHeader: false } }),
    // Fastify's own request lines carry the URL, whose query may hold a phone or e-mail; our onResponse
    // hook logs the route pattern instead.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestIdFor,
    // A hop count is valid for Fastify (proxy-addr) though its typings omit it.
    trustProxy: (options.trustProxy ?? false) as boolean | string,
    bodyLimit: BODY_LIMIT_BYTES,
    // During a graceful shutdown a request that arrives on an already open connection is served (with
    // Connection: close) instead of refused with Fastify's own 503 body outside our envelope: it is at
    // most one request per connection, and a caller's booking should not fail because of a deploy.
    return503OnClosing: false,
    routerOptions: { maxParamLength: 500 },
    // Requests refused before Fastify's lifecycle get the envelope and a request id too.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  }) as unknown as FastifyInstance;
  app.server.on('checkExpectation', answerUnmetExpectation);
  cutSilentConnectionsOnClose(app);

  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by presenters that produce exactly the documented shape (tests check every
  // response against the OpenAPI document), so re-validating each one against zod at run time would
  // only cost time.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.removeContentTypeParser(['text/plain']);
  parseJsonAsText(app);
  app.decorateRequest('principal', null);
  installErrorEnvelope(app);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // No path or query parameter is text with a NUL in it, and PostgreSQL cannot even compare one.
    if (request.url.includes('%00') || request.url.includes('\u0000')) {
      throw new AppError('invalid_request', 'The URL holds a NUL character (%00).', 'url');
    }
    if (request.routeOptions.url === '/healthz') return;
    // Links the service makes (payment_url) are built from Host; HTTP/1.0 may omit it, and health
    // checkers often do, so only /healthz goes without.
    if (request.headers.host === undefined) {
      throw new AppError('invalid_request', 'A request must carry a Host header.', 'Host');
    }
    assertSecureTransport(request);
  });
  app.addHook('onResponse', async (request, reply) => {
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
  });

  await registerOpenApi(app);
  const typed = app.withTypeProvider<ZodTypeProvider>();
  await typed.register(healthRoutes(deps));
  await typed.register(checkoutRoutes(deps));
  serveOpenApi(app);
  registerMcpRoutes(app, deps, {
    allowedHosts: options.mcpAllowedHosts ?? LOOPBACK_HOSTS,
    bodyLimitBytes: BODY_LIMIT_BYTES,
    ...(options.mcpSse && { sse: options.mcpSse }),
  });
  await typed.register(
    async (v1) => {
      v1.addHook('onRequest', createAuthenticator(deps));
      await v1.register(locationRoutes(deps, new CursorSecrets(deps.db, deps.secret), new ListPageCache()));
      await v1.register(availabilityRoutes(deps));
      await v1.register(clientRoutes(deps));
      await v1.register(bookingRoutes(deps));
      await v1.register(messageRoutes(deps));
    },
    { prefix: '/v1' },
  );
  return app;
}
