/**
 * A tools/call's `arguments` as the tools take them, whichever transport brought the message: the one
 * step every transport (POST /mcp, POST /messages, stdio) runs on a message before the SDK reads it.
 *
 * - `arguments: null` is no arguments (design.md 9.3: null for an optional argument means absent).
 *   Strict function-calling hosts send it for a tool that takes none (list_locations); the SDK's
 *   schema refused it with zod's raw text.
 * - `arguments` that are no object (a list, a text) are carried to the tool under NOT_NAMED, since the
 *   SDK passes on only an object: the tool then answers with its own hint ("arguments must be an
 *   object of named arguments", tool-arguments.ts), as it answers every other argument it cannot read.
 *
 * Any other message, a batch's members included, is left as it came.
 */
export function withToolCallArguments(message: unknown): unknown {
  if (Array.isArray(message)) {
    return message.some(needsStep) ? message.map(withToolCallArguments) : message;
  }
  if (!needsStep(message)) return message;
  const { arguments: given, ...params } = message.params;
  return {
    ...message,
    params: given === null ? params : { ...params, arguments: { [NOT_NAMED]: given } },
  };
}

/** The arguments as the host sent them: what withToolCallArguments carried under NOT_NAMED, else as given. */
export function argumentsAsSent(args: Record<string, unknown> | undefined): unknown {
  return args !== undefined && Object.hasOwn(args, NOT_NAMED) ? args[NOT_NAMED] : args;
}

/** No argument has this name (a NUL cannot start one a tool declares). */
const NOT_NAMED = '\u0000arguments';

function needsStep(
  message: unknown,
): message is Record<string, unknown> & { params: Record<string, unknown> & { arguments: unknown } } {
  if (!isPlainObject(message) || message.method !== 'tools/call') return false;
  const { params } = message;
  if (!isPlainObject(params) || !Object.hasOwn(params, 'arguments')) return false;
  return !isPlainObject(params.arguments) && params.arguments !== undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
