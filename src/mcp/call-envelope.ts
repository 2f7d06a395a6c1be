/**
 * What is wrong with a tools/call's envelope (its `params` and `params.name`), in words an agent can
 * act on: the SDK refuses such a call with JSON-RPC's Invalid params (-32602) and zod's issue list as
 * the message, a dump of paths and codes a voice agent's model reads as noise. The server answers the
 * same code with one of these instead (build-server.ts), on every transport and protocol generation.
 *
 * The values sent are never quoted: a name that is no text may be anything the model produced, the
 * caller's words included. `arguments` that are no object are the tool's to answer (call-arguments.ts).
 */

/** What the tools/call's params lack or hold wrongly, or undefined when name is text. */
export function toolCallEnvelopeProblem(params: unknown): string | undefined {
  if (params === undefined) return MISSING_PARAMS;
  // params that are no object are no JSON-RPC request: refused with Invalid Request before a handler runs.
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  const { name } = params as { name?: unknown };
  if (name === undefined) return `${NEEDS_NAME}.`;
  if (typeof name === 'string') return undefined;
  return `${NEEDS_NAME}; it was ${kindOf(name)}.`;
}

/**
 * What the SDK's refusal of any other part of a tools/call's params becomes (a 2025-11-25 `task` of the
 * wrong form, say), once params and name were found sound: no host's model writes those members, so
 * it says which ones a call needs and that the rest must be left out or sent as MCP defines them.
 */
export const MALFORMED_PARAMS =
  'tools/call params are not as MCP defines them: send name, the name of a tool as text, and arguments, an object of its named arguments; leave out anything else (such as task or _meta) unless it has the form MCP gives it.';

const MISSING_PARAMS =
  'tools/call needs params: an object with name, the name of a tool as text, such as find_slots, and arguments, an object of its named arguments.';

const NEEDS_NAME =
  'tools/call needs params.name, the name of a tool as text, such as find_slots (tools/list names them all)';

/** What a JSON value is, in words (never the value itself). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}
