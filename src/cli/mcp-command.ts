import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { readConfig } from '../app/config.ts';
import { ForeignDatabaseError, MissingDatabaseError } from '../data/database.ts';
import { isDatabaseEmpty } from '../data/organisation-repository.ts';
import type { ApiKeyScope } from '../domain/api-key.ts';
import { AppError } from '../domain/errors.ts';
import type { BookingApi } from '../mcp/booking-api.ts';
import { buildMcpServer } from '../mcp/build-server.ts';
import { HttpBookingApi } from '../mcp/http-api.ts';
import { InProcessBookingApi, principalOfKey } from '../mcp/in-process-api.ts';
import { openRuntime, type Runtime } from '../runtime.ts';
import { createLogger } from './logger.ts';
import { DrainingStdioTransport } from './mcp-stdio-transport.ts';
import { CommandError } from './output.ts';

/**
 * `booking mcp`: the MCP tools over stdio for the organisation of BOOKING_API_KEY, for a desktop MCP
 * host that starts the command itself. stdout carries only the protocol; logs go to stderr. Both
 * protocol generations are served (the SDK's serveStdio pins each connection to the one its first
 * message speaks), and every request read before stdin closes is answered before the process exits.
 *
 * Without --base-url the tools run in this process on DATABASE_URL (by default the project's
 * db/booking.sqlite, wherever the host starts the command), the key checked on every call (a revoked
 * key stops at once) and counted against its rate limit as the REST API counts it. A database that is
 * missing or holds no organisation is never created or used: every tool says so. With --base-url
 * they call that instance's REST API, so a hosted instance can be driven from a desktop.
 */
export async function serveMcpOverStdio(options: { baseUrl?: string }): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config.logLevel);
  const key = process.env.BOOKING_API_KEY?.trim();
  if (!key) logger.warn('BOOKING_API_KEY is not set: every tool will answer that the key is missing');
  if (!config.publicBaseUrlSet && options.baseUrl === undefined) {
    logger.warn(
      'PUBLIC_BASE_URL is not set: links are unavailable, so bookings that need a deposit or a card are refused (set it to the address booking serve prints; see mcp.json)',
    );
  }

  let runtime: Runtime | null = null;
  let apiFor: () => Promise<BookingApi>;
  // tools/list shows a read key only the tools it can use (over --base-url, as the instance answers it).
  let scopeOf: () => Promise<ApiKeyScope | undefined> = async () => undefined;
  if (options.baseUrl !== undefined) {
    let api: HttpBookingApi;
    try {
      api = new HttpBookingApi({ baseUrl: options.baseUrl, apiKey: key ?? '' });
    } catch (error) {
      throw new CommandError(`--base-url: ${error instanceof Error ? error.message : String(error)}`);
    }
    apiFor = async () => api;
    scopeOf = () => api.scope();
  } else {
    const unavailable = await openLocalRuntime(config);
    if (unavailable instanceof AppError) {
      logger.error(unavailable.message);
      apiFor = async () => {
        throw unavailable;
      };
    } else {
      runtime = unavailable;
      const { deps } = unavailable;
      apiFor = async () =>
        InProcessBookingApi.forToolCall(deps, await principalOfKey(deps, key), {
          // Only an address someone set: the one `booking serve` would listen on by default may be
          // served by nobody, and a link to it would be a dead one (the tools then give none).
          publicBaseUrl: config.publicBaseUrlSet ? config.publicBaseUrl : null,
        });
      // A key that does not authenticate lists every tool: each call then says what is wrong with it.
      scopeOf = async () => (await principalOfKey(deps, key).catch(() => undefined))?.scope;
    }
  }

  const transport = new DrainingStdioTransport();
  serveStdio(
    () =>
      buildMcpServer({
        apiFor,
        scopeOf,
        onFault: (error) => logger.error({ err: error }, 'MCP tool failed'),
      }),
    { transport, onerror: (error) => logger.warn({ err: error }, 'MCP stdio transport error') },
  );
  await transport.closed;
  await runtime?.close();
}

/**
 * The runtime on the configured database, or the database_unavailable error every tool answers with
 * when there is no database there, or one without an organisation (a key could not be valid anyway).
 */
async function openLocalRuntime(config: ReturnType<typeof readConfig>): Promise<Runtime | AppError> {
  const setUp =
    'Start the booking engine in its project once (npm start, or npx booking demo), or set DATABASE_URL.';
  let runtime: Runtime;
  try {
    runtime = await openRuntime(config, undefined, { mustExist: true });
  } catch (error) {
    if (error instanceof MissingDatabaseError || error instanceof ForeignDatabaseError) {
      return new AppError('database_unavailable', `${error.message} ${setUp}`);
    }
    throw error;
  }
  if (await isDatabaseEmpty(runtime.database.db)) {
    await runtime.close();
    return new AppError(
      'database_unavailable',
      `The booking database ${runtime.database.description} holds no organisation yet. ${setUp}`,
    );
  }
  return runtime;
}
