import type { IncomingHttpHeaders } from 'node:http';
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../app/api-key-service.ts';
import type { AppDeps } from '../app/deps.ts';
import {
  buildMcpServer,
  type CallerOf,
  callTool,
  isServedTool,
  type McpServerOptions,
  SERVER_INFO,
} from '../mcp/build-server.ts';
import { withToolCallArguments } from '../mcp/call-arguments.ts';
import { InProcessBookingApi } from '../mcp/in-process-api.ts';
import { createDirectLane } from './mcp-direct-lane.ts';

/** What the MCP endpoints learn of a request before the SDK sees it, handed to the tools as AuthInfo.extra. */
export interface Caller {
  principal: Principal;
  publicBaseUrl: string;
  log: FastifyBaseLogger;
}

/**
 * The MCP protocol behind the HTTP endpoints (mcp-routes.ts, which admits the caller first): the
 * SDK's handlers and servers with the tools. Loaded by the first MCP request, not with the server.
 */
export interface McpProtocol {
  /**
   * The answer (200, JSON) to a POST /mcp body that is a well-formed tools/call, without the SDK's
   * per-request machinery; undefined for any other body, which `answer` serves (mcp-direct-lane.ts).
   */
  answerDirectly(
    body: unknown,
    headers: IncomingHttpHeaders,
    authInfo: AuthInfo,
  ): Promise<string> | undefined;
  /** The answer to one POST /mcp body, of either protocol generation. */
  answer(request: Request, authInfo: AuthInfo, body: unknown): Promise<Response>;
  /** A server with the tools, for one SSE session. */
  newServer(): Server;
  /** A POST /messages body as the SSE session's server is to read it (call-arguments.ts). */
  asServed(body: unknown): unknown;
}

export function createMcpProtocol(deps: AppDeps, bodyLimitBytes: number): McpProtocol {
  const tools: McpServerOptions = {
    apiFor: async (caller) =>
      InProcessBookingApi.forToolCall(deps, callerOf(caller).principal, {
        publicBaseUrl: callerOf(caller).publicBaseUrl,
      }),
    onFault: (error, caller) => callerOf(caller).log.error({ err: error }, 'MCP tool failed'),
  };
  const newServer = (): Server => buildMcpServer(tools);
  const modern = createMcpHandler(newServer, {
    legacy: 'reject',
    responseMode: 'auto',
    maxRequestBodySize: bodyLimitBytes,
  });
  return {
    newServer,
    asServed: withToolCallArguments,
    // The lane leaves arguments null or no object to the SDK's path, which reads them as below.
    answerDirectly: createDirectLane({
      isServedTool,
      callTool: (params, authInfo, revision) =>
        callTool(tools, params, authInfo.extra, revision, authInfo.scopes),
      serverInfo: SERVER_INFO,
    }),
    answer: async (request, authInfo, sent) => {
      const body = withToolCallArguments(sent);
      return (await isLegacyRequest(request, body))
        ? serveLegacy(newServer(), request, authInfo, body)
        : modern.fetch(request, { authInfo, parsedBody: body });
    },
  };
}

/** A 2025-era request, served statelessly by a fresh server over the SDK's Streamable HTTP transport. */
async function serveLegacy(
  server: Server,
  request: Request,
  authInfo: AuthInfo,
  body: unknown,
): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { authInfo, parsedBody: body });
  } finally {
    await server.close();
  }
}

function callerOf(extra: CallerOf): Caller {
  const caller = extra?.caller as Caller | undefined;
  if (!caller) throw new Error('MCP request reached a tool without an authenticated caller');
  return caller;
}
