import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { BookingApi } from './booking-api.ts';
import { outputSchema, toolResult } from './tool-kit.ts';
import type { ToolSpec } from './tool-spec.ts';
import { bookTool, cancelTool, getBookingTool, rescheduleTool } from './tools/booking-tools.ts';
import { lookupClientTool, registerClientTool } from './tools/client-tools.ts';
import { listLocationsTool, listServicesTool } from './tools/directory-tools.ts';
import { findSlotsTool } from './tools/find-slots.ts';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Every tool, in the order a conversation usually meets them. */
export const TOOLS: readonly ToolSpec[] = [
  listLocationsTool,
  listServicesTool,
  findSlotsTool,
  lookupClientTool,
  registerClientTool,
  bookTool,
  getBookingTool,
  rescheduleTool,
  cancelTool,
];

const SERVER_INFO = { name: 'booking-engine', version: '0.1.0' } as const;

const INSTRUCTIONS = `Tools of a salon's booking system, for a receptionist on the phone.
A new caller: find_slots, then book with their name and phone (client). A known caller: lookup_client with their
phone gives their upcoming appointments and references, for reschedule or cancel. Pass starts_at exactly as
find_slots returned it. Read "spoken" fields aloud; when ok is false, follow "hint" and offer "alternatives".`;

export interface McpServerOptions {
  /**
   * The engine as the caller's organisation, for one tool call: authenticates and counts the call (it
   * may throw the contract's 401/403/429 AppErrors, which become the tool's answer).
   */
  apiFor(extra: ToolExtra): Promise<BookingApi>;
  /** Hears of unexpected faults (never of arguments: they hold personal data). */
  onFault(error: unknown): void;
}

/**
 * What registering each tool needs, built once: Streamable HTTP builds a server per request, and
 * building the output schemas (and the SDK's default JSON Schema validator, used only for elicitation,
 * which these tools never ask for) cost more than a find_slots.
 */
const REGISTRATIONS = TOOLS.map((tool) => ({
  tool,
  config: {
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input,
    outputSchema: outputSchema(tool.output),
    annotations: { title: tool.title, ...tool.annotations },
  },
}));
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

/** The MCP server with every booking tool, not yet connected to a transport. */
export function buildMcpServer(options: McpServerOptions): McpServer {
  const server = new McpServer(SERVER_INFO, {
    instructions: INSTRUCTIONS,
    capabilities: { tools: {} },
    jsonSchemaValidator: SCHEMA_VALIDATOR,
  });
  for (const { tool, config } of REGISTRATIONS) {
    server.registerTool(tool.name, config, (args: Record<string, unknown>, extra: ToolExtra) =>
      toolResult(async () => tool.run(args as never, { api: await options.apiFor(extra) }), options.onFault),
    );
  }
  return server;
}
