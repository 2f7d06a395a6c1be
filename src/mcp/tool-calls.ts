import { z } from 'zod';
import type { ApiKeyScope } from '../domain/api-key.ts';
import { LONE_SURROGATE } from '../domain/text-rules.ts';
import { errorHint } from './hints.ts';
import { resourceLinksOf } from './resource-links.ts';
import {
  type ArgumentProblem,
  argumentProblems,
  nullPlanOf,
  type UnknownMember,
  unknownMembers,
  wellShaped,
  withoutNulls,
} from './tool-arguments.ts';
import {
  argumentErrorResult,
  problemOf,
  type ToolContext,
  type ToolResult,
  toolErrorResult,
  toolResult,
} from './tool-kit.ts';
import { type ToolDefinition, toolDefinition } from './tool-schemas.ts';
import type { ToolSpec } from './tool-spec.ts';

/** A tools/call naming no tool of this server: a protocol error (JSON-RPC invalid params), not a result. */
export class UnknownToolError extends Error {
  constructor(name: string, known: readonly string[]) {
    super(`No tool is called "${name}"; the tools are ${known.join(', ')}.`);
    this.name = 'UnknownToolError';
  }
}

export interface CallOptions {
  /** Links in the answer also as resource_link items: the client's revision has them (resource-links.ts). */
  resourceLinks?: boolean;
  /**
   * The caller's scope, when the transport can tell it (undefined: not known, and the API answers for
   * it). Asked only for a tool that changes something, or a name no tool has.
   */
  scope?: () => Promise<ApiKeyScope | undefined>;
}

/**
 * The tools of one server, independent of the MCP SDK: what tools/list answers (built once), and a
 * tools/call that checks the arguments against the tool's input schema itself, so an argument the
 * agent got wrong is answered with a hint naming it and its expected form rather than a validator's
 * raw text.
 */
export class ToolBox {
  readonly #tools: ReadonlyMap<
    string,
    { spec: ToolSpec; input: z.ZodObject; nulls: ReturnType<typeof nullPlanOf> }
  >;
  /** The tools/list result, the same object for every request of a read_write (or unknown) caller. */
  readonly listing: { tools: ToolDefinition[] };
  /** The tools/list result of a read-only caller: the read-only tools, the only ones it can use. */
  readonly readListing: { tools: ToolDefinition[] };

  constructor(tools: readonly ToolSpec[]) {
    this.#tools = new Map(
      tools.map((spec) => [spec.name, { spec, input: z.object(spec.input), nulls: nullPlanOf(spec.input) }]),
    );
    this.listing = { tools: tools.map(toolDefinition) };
    this.readListing = {
      tools: this.listing.tools.filter((tool) => tool.annotations.readOnlyHint === true),
    };
  }

  /**
   * What tools/list answers a caller of this scope (design.md 9.3): a read key sees only the tools it
   * can use; read_write, or a caller whose scope is not known (a key the instance behind
   * `booking mcp --base-url` refuses), sees them all.
   * Both answers are built once; tools/call still serves every name (a read key calling a write tool
   * is told it may only look things up).
   */
  listingFor(scope: ApiKeyScope | undefined): { tools: ToolDefinition[] } {
    return scope === 'read' ? this.readListing : this.listing;
  }

  /** Whether a tool has this name. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /**
   * Runs a tool call: UnknownToolError for a name not served; a result otherwise (the tool's answer,
   * an argument hint, or a fault's hint). `context` is asked for only once the arguments are sound,
   * so a malformed call costs no authentication or rate-limit hit. `onFault` hears of unexpected
   * errors, never of arguments (they hold personal data).
   */
  async call(
    name: string,
    args: unknown,
    context: () => Promise<ToolContext>,
    onFault: (error: unknown) => void,
    options: CallOptions = {},
  ): Promise<ToolResult> {
    const tool = this.#tools.get(name);
    // The tools named are those the caller's tools/list shows: a read key was told of the write tools
    // it is never shown (design.md 9.3), and an agent reading the list tried them.
    if (!tool) {
      const shown = this.listingFor(await options.scope?.()).tools.map((listed) => listed.name);
      throw new UnknownToolError(name, shown);
    }
    // A read key may not change bookings, whatever it sends: told so first, not of its arguments.
    if (tool.spec.annotations.readOnlyHint !== true && (await options.scope?.()) === 'read') {
      return toolErrorResult(errorHint('insufficient_scope'));
    }
    const sent = withoutNulls(args ?? {}, tool.nulls);
    const unknownMembersSent = unknownMembers(tool.spec.input, sent);
    // The rest is read as if the unknown members were not there: one answer names every bad argument.
    const given = withoutMembers(sent, unknownMembersSent);
    const unknown = unknownArguments(tool.spec, unknownMembersSent);
    const parsed = tool.input.safeParse(given);
    if (!parsed.success) {
      // What the schema took is read too: a date that means nothing is named beside a limit passed.
      const unread = tool.spec.formProblems?.(wellShaped(tool.spec.input, given)) ?? [];
      return argumentErrorResult(name, [
        ...(unknown ? [unknown] : []),
        ...argumentProblems(tool.spec.input, parsed.error, given),
        ...unread.map(problemOf),
      ]);
    }
    if (unknown) return argumentErrorResult(name, [unknown]);
    const broken = Object.keys(parsed.data).find((param) => holdsLoneSurrogate(parsed.data[param]));
    if (broken !== undefined) {
      // Text that no caller's words make: the host's encoding, which the agent sends again as text.
      const said = `${broken} holds a broken character (a lone UTF-16 surrogate); send it as plain text`;
      return argumentErrorResult(name, [{ said, fault: 'agent' }]);
    }
    const result = await toolResult(
      name,
      async () => tool.spec.run(parsed.data as never, await context()),
      onFault,
      tool.spec.callerSupplied,
    );
    if (!options.resourceLinks || !result.structuredContent) return result;
    const links = resourceLinksOf(result.structuredContent);
    return links.length === 0 ? result : { ...result, content: [...result.content, ...links] };
  }
}

/**
 * The problem of arguments the tool does not take, or members a nested object (`client`, `repeat`) does
 * not take (the agent's: no caller says an argument's name), or undefined when it takes them all. They are refused, not dropped, as REST refuses an
 * unknown body field: an agent that sends `dry_run` to book, as cancel and reschedule take it, must not
 * hear "Booked" for a booking it meant only to try, nor one that sends `client.email_address` "Booked"
 * for a client whose e-mail was never kept.
 */
function unknownArguments(tool: ToolSpec, all: readonly UnknownMember[]): ArgumentProblem | undefined {
  if (all.length === 0) return undefined;
  // Names quoted short and few: arguments are the agent's, of any length and number.
  const unknown = all.slice(0, 5).map(({ path }) => {
    const name = path.join('.');
    return name.length > 60 ? `${name.slice(0, 60)}…` : name;
  });
  if (all.length > 5) unknown.push(`${all.length - 5} more`);
  const owners = [...new Map(all.map((member) => [member.owner.join('.'), member])).values()];
  const lone = owners.length === 1 && owners[0]!.owner.length > 0 ? owners[0]!.owner.join('.') : undefined;
  const [one, many] = lone
    ? [`a member of ${lone}`, `members of ${lone}`]
    : [`an argument of ${tool.name}`, `arguments of ${tool.name}`];
  const named =
    unknown.length === 1
      ? `${unknown[0]} is not ${one}`
      : `${unknown.slice(0, -1).join(', ')} and ${unknown.at(-1)} are not ${many}`;
  const known = owners
    .map(({ owner, takes }) => {
      if (owner.length > 0) return `${owner.join('.')} takes ${takes.join(', ')}`;
      return takes.length === 0 ? 'it takes none' : `its arguments are ${takes.join(', ')}`;
    })
    .join('; ');
  return { said: `${named}; nothing was done (${known})`, fault: 'agent' };
}

/** `args` without the members found unknown (copied where one is left out; `args` is not changed). */
function withoutMembers(args: unknown, unknown: readonly UnknownMember[]): unknown {
  if (unknown.length === 0) return args;
  const copy = structuredClone(args) as Record<string, unknown>;
  for (const { path } of unknown) {
    const owner = path
      .slice(0, -1)
      .reduce<unknown>((at, step) => (at as Record<string, unknown>)[step], copy);
    delete (owner as Record<string, unknown>)[path.at(-1)!];
  }
  return copy;
}

/**
 * A lone UTF-16 surrogate ("\ud800") is no character: SQLite would store U+FFFD in its place and
 * PostgreSQL refuses it, so a tool refuses it as REST does (src/http/json-body.ts), on every transport.
 */
function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  if (typeof value === 'object' && value !== null) return Object.values(value).some(holdsLoneSurrogate);
  return false;
}
