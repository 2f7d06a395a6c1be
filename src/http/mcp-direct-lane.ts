import type { IncomingHttpHeaders } from 'node:http';
import {
  type AuthInfo,
  classifyInboundRequest,
  type Implementation,
  isJsonContentType,
  ProtocolErrorCode,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';

/**
 * The direct lane of POST /mcp: a well-formed tools/call, the call a voice agent makes on every turn,
 * answered with the very bytes the SDK would answer it with, but without the SDK's per-request
 * machinery (a web Request and Response with stream bodies, a Server and transport built, connected
 * and closed, each message checked again with zod). That machinery cost about 0.45 ms of CPU per call
 * on top of the 0.35 ms the call itself costs (docs/decisions/mcp-direct-lane.md).
 *
 * Only requests whose answer is certain take the lane; `undefined` hands anything else to the SDK:
 * - the era and the JSON-RPC shape are decided by the SDK's own classifier (`classifyInboundRequest`,
 *   the routing step of its `createMcpHandler`), so the two can never disagree;
 * - 2026-07-28: the revision is the one the SDK serves, MCP-Protocol-Version, Mcp-Method and Mcp-Name
 *   are each present once and equal to the body's (the SDK refuses a request missing one), and the
 *   envelope holds nothing but the protocol version, client info and capabilities;
 * - 2025: no `_meta` (no progress token, nothing to stream), and MCP-Protocol-Version absent or one
 *   of the SDK's 2025-era versions;
 * - either: Content-Type JSON, a body of only jsonrpc, id, method and params, params of only name,
 *   arguments (an object) and the envelope, and a name a tool has.
 * test/integration/mcp-direct-lane.test.ts sends every request it takes, and the ones next to them it
 * must not take, both ways, and compares status, headers and body byte for byte.
 */
export type DirectLane = (
  body: unknown,
  headers: IncomingHttpHeaders,
  authInfo: AuthInfo,
) => Promise<string> | undefined;

export interface DirectLaneOptions {
  isServedTool(name: string): boolean;
  /**
   * tools/call as the SDK server's handler answers it (src/mcp/build-server.ts `callTool`), for a
   * client of this protocol revision.
   */
  callTool(params: ToolCallParams, authInfo: AuthInfo, revision: string): Promise<ToolResult>;
  /** The server's identity, which the 2026-07-28 revision stamps into every result's `_meta`. */
  serverInfo: Implementation;
}

/** A tools/call result as the tools make it (src/mcp/tool-kit.ts `ToolResult`, which this layer cannot import). */
export interface ToolResult {
  [key: string]: unknown;
  /** Text, then any resource_link items, already in the order of members the SDK's schema gives them. */
  content: ({ type: 'text'; text: string } | { type: 'resource_link' })[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface ToolCallParams {
  name: string;
  arguments?: Record<string, unknown>;
}

/** The revision the SDK serves besides the 2025 ones (its SUPPORTED_MODERN_PROTOCOL_VERSIONS, not exported). */
const MODERN_REVISION = '2026-07-28';
/** What a server assumes of a 2025-era request without MCP-Protocol-Version (build-server.ts DEFAULT_REVISION). */
const DEFAULT_LEGACY_REVISION = '2025-03-26';
const LEGACY_REVISIONS: ReadonlySet<string> = new Set(
  SUPPORTED_PROTOCOL_VERSIONS.filter((version) => version < MODERN_REVISION),
);
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  'io.modelcontextprotocol/protocolVersion',
  'io.modelcontextprotocol/clientInfo',
  'io.modelcontextprotocol/clientCapabilities',
]);
const BODY_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS: ReadonlySet<string> = new Set(['name', 'arguments', '_meta']);
/** JSON-RPC's internal error, what the SDK answers when a handler throws without a code of its own. */
const INTERNAL_ERROR = ProtocolErrorCode.InternalError;

interface DirectCall {
  id: string | number;
  params: ToolCallParams;
  modern: boolean;
  /** The revision the client speaks (the SDK's server sees the same: build-server.ts `revisionOf`). */
  revision: string;
}

export function createDirectLane(options: DirectLaneOptions): DirectLane {
  return (body, headers, authInfo) => {
    const call = directCallOf(body, headers, options.isServedTool);
    return call && answerCall(call, options, authInfo);
  };
}

/** The JSON-RPC response the SDK would send for this call, as text. */
async function answerCall(call: DirectCall, options: DirectLaneOptions, authInfo: AuthInfo): Promise<string> {
  const { id } = call;
  let result: ToolResult;
  try {
    result = await options.callTool(call.params, authInfo, call.revision);
  } catch (error) {
    // As the SDK's Protocol answers a handler that threw (callTool throws only for a name no tool
    // has, which the lane never takes).
    const thrown = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
    const code = Number.isSafeInteger(thrown.code) ? (thrown.code as number) : INTERNAL_ERROR;
    const message = typeof thrown.message === 'string' ? thrown.message : 'Internal error';
    const error_ = { code, message, ...(thrown.data !== undefined && { data: thrown.data }) };
    return JSON.stringify({ jsonrpc: '2.0', id, error: error_ });
  }
  const parsed = asSdkParsesIt(result);
  return JSON.stringify({ result: call.modern ? modernResult(parsed, options) : parsed, jsonrpc: '2.0', id });
}

/**
 * A tool result as the SDK's server re-parses it with its CallToolResult schema before sending it:
 * `_meta`, content (text blocks of type and text only), structuredContent, isError, then any other
 * member. Tools return only content with structuredContent or isError (src/mcp/tool-kit.ts).
 */
function asSdkParsesIt(result: ToolResult): Record<string, unknown> {
  const { _meta, content, structuredContent, isError, ...rest } = result;
  return {
    ...(_meta !== undefined && { _meta }),
    content: content.map((item) => (item.type === 'text' ? { type: item.type, text: item.text } : item)),
    ...(structuredContent !== undefined && { structuredContent }),
    ...(isError !== undefined && { isError }),
    ...rest,
  };
}

/**
 * The SDK's encoding of a 2026-07-28 result: `resultType` "complete" unless the result names one (a
 * tools/call result may), and the server's identity added to `_meta` unless it is there already.
 */
function modernResult(result: Record<string, unknown>, options: DirectLaneOptions): Record<string, unknown> {
  const stamped = result.resultType === undefined ? { ...result, resultType: 'complete' } : result;
  const meta = result._meta;
  if (meta === undefined) return { ...stamped, _meta: { [SERVER_INFO_META_KEY]: options.serverInfo } };
  if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return stamped;
  return { ...stamped, _meta: { ...meta, [SERVER_INFO_META_KEY]: options.serverInfo } };
}

function directCallOf(
  body: unknown,
  headers: IncomingHttpHeaders,
  isServedTool: (name: string) => boolean,
): DirectCall | undefined {
  if (!isPlainObject(body) || body.method !== 'tools/call' || !onlyKeys(body, BODY_KEYS)) return undefined;
  // A request, not a notification (which the SDK answers 202 without running it).
  if (typeof body.id !== 'string' && typeof body.id !== 'number') return undefined;
  const { params } = body;
  if (!isPlainObject(params) || !onlyKeys(params, PARAMS_KEYS)) return undefined;
  if (typeof params.name !== 'string' || !isServedTool(params.name)) return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  const contentType = headers['content-type'];
  if (typeof contentType !== 'string' || !isJsonContentType(contentType)) return undefined;
  const version = headers['mcp-protocol-version'];
  const method = headers['mcp-method'];
  const name = headers['mcp-name'];
  // Node joins a repeated Mcp-* header into one string (then unequal to the body's); an array is
  // declined all the same.
  if ([version, method, name].some((value) => value !== undefined && typeof value !== 'string'))
    return undefined;
  const route = classifyInboundRequest({
    httpMethod: 'POST',
    body,
    ...(version !== undefined && { protocolVersionHeader: version as string }),
    ...(method !== undefined && { mcpMethodHeader: method as string }),
    ...(name !== undefined && { mcpNameHeader: name as string }),
  });
  const call = { id: body.id as string | number, params: params as unknown as ToolCallParams };
  if (route.kind === 'modern') {
    const meta = params._meta;
    const served =
      route.messageKind === 'request' &&
      route.classification.revision === MODERN_REVISION &&
      version === MODERN_REVISION &&
      method === 'tools/call' &&
      name === params.name &&
      isPlainObject(meta) &&
      onlyKeys(meta, ENVELOPE_KEYS);
    return served ? { ...call, modern: true, revision: MODERN_REVISION } : undefined;
  }
  if (route.kind === 'legacy') {
    const served =
      params._meta === undefined &&
      (version === undefined || LEGACY_REVISIONS.has(version as string)) &&
      method === undefined &&
      name === undefined;
    return served
      ? { ...call, modern: false, revision: (version as string | undefined) ?? DEFAULT_LEGACY_REVISION }
      : undefined;
  }
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}
