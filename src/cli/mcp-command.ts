import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { readConfig } from '../app/config.ts';
import type { BookingApi } from '../mcp/booking-api.ts';
import { buildMcpServer } from '../mcp/build-server.ts';
import { HttpBookingApi } from '../mcp/http-api.ts';
import { InProcessBookingApi, principalOfKey } from '../mcp/in-process-api.ts';
import { openRuntime, type Runtime } from '../runtime.ts';
import { CommandError } from './output.ts';
import { createLogger } from './serve-command.ts';

/**
 * `booking mcp`: the MCP tools over stdio for the organisation of BOOKING_API_KEY, for a desktop MCP
 * host that starts the command itself. stdout carries only the protocol; logs go to stderr.
 *
 * Without --base-url the tools run in this process on DATABASE_URL, the key checked on every call (a
 * revoked key stops at once) and counted against its rate limit as the REST API counts it. With
 * --base-url they call that instance's REST API, so a hosted instance can be driven from a desktop.
 */
export async function serveMcpOverStdio(options: { baseUrl?: string }): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config.logLevel);
  const key = process.env.BOOKING_API_KEY?.trim();
  if (!key) logger.warn('BOOKING_API_KEY is not set: every tool will answer that the key is missing');

  let runtime: Runtime | null = null;
  let apiFor: () => Promise<BookingApi>;
  if (options.baseUrl !== undefined) {
    let api: HttpBookingApi;
    try {
      api = new HttpBookingApi({ baseUrl: options.baseUrl, apiKey: key ?? '' });
    } catch (error) {
      throw new CommandError(`--base-url: ${error instanceof Error ? error.message : String(error)}`);
    }
    apiFor = async () => api;
  } else {
    const opened = await openRuntime(config);
    runtime = opened;
    apiFor = async () =>
      InProcessBookingApi.forToolCall(opened.deps, await principalOfKey(opened.deps, key), {
        publicBaseUrl: config.publicBaseUrl,
      });
  }

  const server = buildMcpServer({
    apiFor,
    onFault: (error) => logger.error({ err: error }, 'MCP tool failed'),
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  await server.connect(transport);
  // The host ends the session by closing stdin.
  process.stdin.once('end', () => void server.close());
  await closed;
  await runtime?.close();
}
