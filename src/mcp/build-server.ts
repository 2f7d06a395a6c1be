import {
  type JSONRPCRequest,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type Result,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { ApiKeyScope } from '../domain/api-key.ts';
import type { BookingApi } from './booking-api.ts';
import { argumentsAsSent } from './call-arguments.ts';
import { MALFORMED_PARAMS, toolCallEnvelopeProblem } from './call-envelope.ts';
import { CALLER_TEXT_INSTRUCTIONS } from './caller-text.ts';
import { readsResourceLinks } from './resource-links.ts';
import { ToolBox, UnknownToolError } from './tool-calls.ts';
import type { ToolResult } from './tool-kit.ts';
import type { ToolSpec } from './tool-spec.ts';
import { bookTool, cancelTool, getBookingTool, rescheduleTool } from './tools/booking-tools.ts';
import { lookupClientTool, registerClientTool } from './tools/client-tools.ts';
import { listLocationsTool, listServicesTool } from './tools/directory-tools.ts';
import { findSlotsTool } from './tools/find-slots.ts';
import { getLocationInfoTool } from './tools/location-info.ts';
import { sendLinkTool, takeMessageTool } from './tools/message-tools.ts';
import { joinWaitlistTool } from './tools/waitlist-tools.ts';

/** Every tool, in the order a conversation usually meets them. */
export const TOOLS: readonly ToolSpec[] = [
  listLocationsTool,
  getLocationInfoTool,
  listServicesTool,
  findSlotsTool,
  lookupClientTool,
  registerClientTool,
  bookTool,
  joinWaitlistTool,
  getBookingTool,
  rescheduleTool,
  cancelTool,
  takeMessageTool,
  sendLinkTool,
];

export const SERVER_INFO = { name: 'booking-engine', version: '0.1.0' } as const;

const INSTRUCTIONS = `Tools of a salon's booking system, for a receptionist on the phone.
A new caller: find_slots, then book with their name and phone (client). A known caller: lookup_client with their
phone gives their upcoming appointments and references, for reschedule or cancel. Pass starts_at exactly as
find_slots returned it. Before cancelling or moving, call it with dry_run true and tell the caller any fee or kept
deposit. Read an answer's "spoken" aloud: it is all there is to say. Follow "hint": it is for you, not the caller. Questions about
hours, closures or the policy: get_location_info. A caller who lost their link: send_link. Anything else: take_message.
A regular: lookup_client tells their usual; book with repeat books a series, and reschedule or cancel with scope
following changes its later visits too.
${CALLER_TEXT_INSTRUCTIONS}`;

/** What a transport knows of the caller of one request: the `extra` of the AuthInfo it authenticated. */
export type CallerOf = Record<string, unknown> | undefined;

export interface McpServerOptions {
  /**
   * The engine as the caller's organisation, for one tool call: authenticates and counts the call (it
   * may throw the contract's 401/403/429 AppErrors, which become the tool's answer). `caller` is what
   * the HTTP transports attached to the request (undefined over stdio, which has one caller).
   */
  apiFor(caller: CallerOf): Promise<BookingApi>;
  /** Hears of unexpected faults (never of arguments: they hold personal data). */
  onFault(error: unknown, caller: CallerOf): void;
  /**
   * The scope of a caller the transport did not authenticate (stdio: BOOKING_API_KEY), for tools/list;
   * undefined when it cannot be known (no key, a bad key, `--base-url`), and then every tool is listed.
   * The HTTP transports say the scope of each request in its AuthInfo.
   */
  scopeOf?(): Promise<ApiKeyScope | undefined>;
}

/** Built once: Streamable HTTP builds a server per request, which must cost next to nothing. */
const TOOL_BOX = new ToolBox(TOOLS);

/** Whether tools/call answers this name with a tool (any other name is an invalid-params error). */
export function isServedTool(name: string): boolean {
  return TOOL_BOX.has(name);
}

/**
 * tools/call as this server answers it, whichever way the request came: the SDK server's handler
 * below, and the direct lane of POST /mcp (src/http/mcp-direct-lane.ts). A name no tool has throws the
 * SDK's invalid-params ProtocolError.
 */
export async function callTool(
  options: McpServerOptions,
  params: { name: string; arguments?: Record<string, unknown> | undefined },
  caller: CallerOf,
  /** The protocol revision the client speaks: from 2025-06-18 on, links come as resource_link items too. */
  revision: string | undefined,
  /** The scopes the HTTP transports put in the request's AuthInfo (none over stdio). */
  scopes?: readonly string[],
): Promise<ToolResult> {
  try {
    return await TOOL_BOX.call(
      params.name,
      argumentsAsSent(params.arguments),
      async () => ({ api: await options.apiFor(caller) }),
      (error) => options.onFault(error, caller),
      {
        resourceLinks: readsResourceLinks(revision),
        scope: async () => scopeOfRequest(scopes) ?? (await options.scopeOf?.()),
      },
    );
  } catch (error) {
    if (error instanceof UnknownToolError)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    throw error;
  }
}

/**
 * An MCP server with every booking tool, not yet connected to a transport: the SDK's low-level Server
 * answering tools/list and tools/call from the ToolBox. This file is the only one of the tool layer
 * that knows the SDK; which protocol generation a connection speaks (2025 or 2026-07-28) is the
 * transports' and the SDK's business, the tools are the same on both.
 */
export function buildMcpServer(options: McpServerOptions): Server {
  const server = new BookingServer(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler('tools/list', async (_request, ctx) =>
    TOOL_BOX.listingFor(scopeOfRequest(ctx.http?.authInfo?.scopes) ?? (await options.scopeOf?.())),
  );
  server.setRequestHandler('tools/call', (request, ctx) =>
    callTool(
      options,
      request.params,
      ctx.http?.authInfo?.extra,
      revisionOf(server, ctx),
      ctx.http?.authInfo?.scopes,
    ),
  );
  return server;
}

type RequestHandler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/**
 * The SDK's Server, its tools/call envelope refusals in words (call-envelope.ts): the SDK checks a
 * tools/call's params against its schema in the wrapper this hook returns, before the handler runs, and
 * answers a name that is no text, or no params, with zod's issue list. The check here runs first, where
 * the SDK's would (after every transport's and header's own checks), with the same code (-32602).
 */
class BookingServer extends Server {
  protected override _wrapHandler(method: string, handler: RequestHandler): RequestHandler {
    const wrapped = super._wrapHandler(method, handler);
    if (method !== 'tools/call') return wrapped;
    return async (request, ctx) => {
      const problem = toolCallEnvelopeProblem(request.params);
      if (problem !== undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, problem);
      try {
        return await wrapped(request, ctx);
      } catch (error) {
        throw isSchemaRefusal(error)
          ? new ProtocolError(ProtocolErrorCode.InvalidParams, MALFORMED_PARAMS)
          : error;
      }
    };
  }
}

/** The SDK's refusal of a tools/call's params by its schema (its message is zod's issue list). */
function isSchemaRefusal(error: unknown): boolean {
  return (
    error instanceof ProtocolError &&
    error.code === ProtocolErrorCode.InvalidParams &&
    error.message.startsWith(SDK_SCHEMA_REFUSAL)
  );
}

/** How the SDK's Server begins the message of a tools/call its schema refuses. */
const SDK_SCHEMA_REFUSAL = 'Invalid tools/call request:';

/**
 * The protocol revision of a request: the 2026-07-28 envelope's; else the revision the connection's
 * initialize agreed (stdio, SSE, a 2025 Streamable HTTP initialize); else a stateless 2025 POST's
 * MCP-Protocol-Version header; else 2025-03-26, what a server assumes without one.
 */
function revisionOf(server: Server, ctx: ServerContext): string {
  const claimed = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY];
  if (typeof claimed === 'string') return claimed;
  return (
    server.getNegotiatedProtocolVersion() ??
    ctx.http?.req?.headers.get('mcp-protocol-version') ??
    DEFAULT_REVISION
  );
}

/** What a server assumes of a 2025-era request that names no revision (MCP's Streamable HTTP). */
export const DEFAULT_REVISION = '2025-03-26';

/** The scope the HTTP transports put in a request's AuthInfo (mcp-routes.ts), if there is one. */
function scopeOfRequest(scopes: readonly string[] | undefined): ApiKeyScope | undefined {
  if (scopes === undefined || scopes.length === 0) return undefined;
  return scopes.includes('read_write') ? 'read_write' : 'read';
}
