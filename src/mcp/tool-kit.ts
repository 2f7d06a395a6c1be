import { z } from 'zod';
import { storageRefusal } from '../app/health-service.ts';
import { SPOKEN_REFERENCE_MAX_LENGTH } from '../domain/booking/reference.ts';
import { type AppError, type ErrorCode, isAppError } from '../domain/errors.ts';
import type { BookingApi } from './booking-api.ts';
import { suppliedPaths } from './caller-text.ts';
import {
  type ArgumentFault,
  argumentErrorHint,
  errorHint,
  type OutcomeParams,
  TOOL_OUTCOMES,
  type ToolCode,
  type ToolOutcome,
} from './hints.ts';
import type { ResourceLinkItem } from './resource-links.ts';
import { speakNearestTimes } from './slot-list-words.ts';
import { type ArgumentProblem, faultOf } from './tool-arguments.ts';

/** A tool's answer as MCP carries it (the tools/call result), independent of the SDK's types. */
export interface ToolResult {
  [key: string]: unknown;
  /** The JSON as text, then any resource_link items (resource-links.ts). */
  content: ({ type: 'text'; text: string } | ResourceLinkItem)[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** What every tool runs with: the engine, as the organisation of the caller's key. */
export interface ToolContext {
  api: BookingApi;
}

/** A booking reference as the caller said it, spelled or not (domain/booking/reference.ts reads it). */
export const SpokenReference = z.string().max(SPOKEN_REFERENCE_MAX_LENGTH);

/**
 * The reference argument of the tools that act on one booking: blanks alone are none (a bad argument
 * with its limit, not "No booking has the reference    ").
 */
export const ReferenceArgument = SpokenReference.trim().min(1).describe('As said, e.g. NHC-7KQ2MX.');

/** A slot as the tools show it: ISO times with the offset, the staff member's name, and how to say it. */
export const SpokenSlot = z.object({
  starts_at: z.string().describe("ISO 8601 with the location's offset; pass it to book or reschedule as is."),
  ends_at: z.string(),
  staff_id: z.string(),
  staff_name: z.string(),
  spoken: z.string().describe('How to say it, e.g. "tomorrow, Tuesday 24 November at 2:30 pm".'),
});
export type SpokenSlot = z.infer<typeof SpokenSlot>;

/** A date of a series that is not free, as the tools say it (series-words.ts): the free times that day. */
export interface SpokenClash {
  occurrence: number;
  date: string;
  /** The visit's start as asked, with the location's offset; null for a wall time the clocks skip. */
  starts_at: string | null;
  reason: string;
  alternatives: { starts_at: string; staff_id: string; spoken: string }[];
  spoken: string;
}

/**
 * What every answer carries whatever the tool (design.md 7, docs/mcp.md): `ok`, and with ok false
 * `code` (the REST error code where one exists, else ambiguous or no_slots), `hint` (what to tell or
 * ask the caller next) and, when it adds something, `detail` (the booking system's own message). The
 * failure members below come on top, from the tools that use them. tools/list's output schemas describe
 * each tool's own payload and leave this envelope, the same for every tool, to the docs: listed in each
 * of thirteen tools it cost about 1,650 of tools/list's 12,000 characters (design.md 9.3). Hosts that
 * validate `structuredContent` accept it, as the schemas forbid no member.
 */
export const ANSWER_ENVELOPE = ['ok', 'code', 'hint', 'detail'] as const;

/**
 * Members of a conversational failure that only some tools answer with: `choices` (the names to choose
 * from) where a name is resolved, `alternatives` (free times near the one asked for) and `reason` (why
 * a time was refused: slot_unavailable, too_soon, too_far_ahead, not_on_grid, closed,
 * staff_not_working, late_change or not_changeable) where a time is refused, and `clashes` (the dates
 * of a series that are not free, each with the free times that day) where a series is booked or moved.
 * A tool declares those it uses (ToolSpec.failureMembers).
 */
export type FailureMember = 'choices' | 'alternatives' | 'reason' | 'clashes';

/**
 * A normal conversational outcome that is not a success (nobody on file, nothing free, the slot was
 * just taken): the tool answers ok false with its code and hint, not an MCP error.
 */
export class ToolFailure extends Error {
  readonly code: ToolCode;
  readonly hint: string;
  readonly extra: {
    detail?: string;
    choices?: string[];
    alternatives?: SpokenSlot[];
    reason?: string;
    clashes?: SpokenClash[];
    /** The members of this answer holding caller-supplied text (choices naming a client on file). */
    caller_supplied?: string[];
    /**
     * What to tell the caller of why (the salon closed that day), said in `spoken` before the free
     * times offered instead; not a member of the answer of its own.
     */
    said?: string;
  };

  constructor(code: ToolCode, hint: string, extra: ToolFailure['extra'] = {}) {
    super(hint);
    this.code = code;
    this.hint = hint;
    this.extra = extra;
  }
}

/** One of the catalogue's outcomes, as the failure a tool throws. */
export function failure<K extends ToolOutcome>(
  kind: K,
  params: OutcomeParams<K>,
  extra: ToolFailure['extra'] = {},
): ToolFailure {
  const entry = TOOL_OUTCOMES[kind] as { code: ToolCode; hint: (p: OutcomeParams<K>) => string };
  return new ToolFailure(entry.code, entry.hint(params), extra);
}

/** Fails with one of the catalogue's outcomes. */
export function fail<K extends ToolOutcome>(
  kind: K,
  params: OutcomeParams<K>,
  extra: ToolFailure['extra'] = {},
): never {
  throw failure(kind, params, extra);
}

/**
 * A bad argument: an MCP error result whose text is the hint and what was wrong, so the agent
 * corrects the call, asking the caller again only when it carries what they said (`fault`: by the
 * argument's name unless given).
 */
export class BadArgument extends Error {
  readonly param: string;
  /** Other bad arguments of the same call, said after this one (readAll). */
  readonly more: readonly BadArgument[];
  /** Whose mistake it is: the hint asks the caller again only for theirs. */
  readonly fault: ArgumentFault;
  /** The message names the argument itself ("first_name must be 1 to 60 characters."): said as it is. */
  readonly named: boolean;

  constructor(
    param: string,
    message: string,
    more: readonly BadArgument[] = [],
    fault = faultOf(param),
    named = false,
  ) {
    super(message);
    this.param = param;
    this.more = more;
    this.fault = fault;
    this.named = named;
  }
}

/**
 * The MCP error result of bad arguments: the hint for whose mistakes they are, then the tool and each
 * one, "find_slots: limit is at most 20." or "find_slots has 2 bad arguments: limit is at most 20.
 * date: say a date as ...".
 */
export function argumentErrorResult(tool: string, problems: readonly ArgumentProblem[]): ToolResult {
  // Each said without its own full stop (an ellipsis is kept), and the whole with one.
  const said = problems.map((problem) => problem.said.replace(/(?<!\.)\.$/, ''));
  const named =
    said.length === 1
      ? `${tool}: ${said[0]}`
      : `${tool} has ${said.length} bad arguments: ${said.join('. ')}`;
  const hint = argumentErrorHint(problems.map((problem) => problem.fault));
  return toolErrorResult(`${hint} ${named}.`);
}

/** A BadArgument (and those said with it) as the problems argumentErrorResult names. */
export function problemsOf(bad: BadArgument): ArgumentProblem[] {
  return [bad, ...bad.more].map(problemOf);
}

/**
 * One bad argument as argumentErrorResult names it: "date: say a date as ...", or a message that names
 * its argument itself ("first_name must be 1 to 60 characters.") as it is.
 */
export function problemOf(bad: BadArgument): ArgumentProblem {
  return { said: bad.named ? bad.message : `${bad.param}: ${bad.message}`, fault: bad.fault };
}

/**
 * Runs readings of independent arguments and returns what each read; when some are bad, every one of
 * them is thrown together as one BadArgument, so the agent hears of all its mistakes in one answer
 * (design.md 9.3), not of the first only.
 */
export function readAll<T extends unknown[]>(...readings: { [K in keyof T]: () => T[K] }): T {
  const bad: BadArgument[] = [];
  const read = readings.map((reading) => {
    try {
      return reading();
    } catch (error) {
      if (!(error instanceof BadArgument)) throw error;
      bad.push(error, ...error.more);
      return undefined;
    }
  });
  const [first, ...more] = bad;
  if (first) throw new BadArgument(first.param, first.message, more, first.fault, first.named);
  return read as T;
}

/**
 * Throws the problems as one BadArgument (readAll's way), if there are any: for a reading that names
 * several arguments at once (argument-forms.ts).
 */
export function throwAll(problems: readonly BadArgument[]): void {
  const [first, ...more] = problems.flatMap((bad) => [bad, ...bad.more]);
  if (first) throw new BadArgument(first.param, first.message, more, first.fault, first.named);
}

/** A tool's output schema as tools/list gives it: its own payload, every member optional (absent when ok is false; ok itself is ANSWER_ENVELOPE's). */
export function outputSchema<Shape extends z.ZodRawShape>(payload: Shape) {
  return z.object(payload).partial();
}

/** Error codes a tool reports as ok false (normal in a conversation) rather than as an MCP error. */
const CONVERSATIONAL: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'not_found',
  'conflict',
  'booking_protection_required',
  'rate_limited',
]);

/**
 * Error codes whose message says what to fix (how to set the server up, which a desktop host shows its
 * user), so the result's text carries it after the hint, as an invalid_request's names the argument.
 */
const SAYS_WHAT_TO_FIX: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'missing_api_key',
  'database_unavailable',
]);

/**
 * Runs a tool's work and turns whatever happens into an MCP result: structuredContent plus the same
 * JSON as text on success and on conversational failures; isError with the hint as text for bad
 * arguments, authentication and faults. A success names, in `caller_supplied` before the rest, which
 * of the tool's `callerSupplied` paths hold text callers wrote. `onFault` hears of unexpected errors
 * (it must not log arguments: they hold personal data).
 */
export async function toolResult(
  tool: string,
  work: () => Promise<Record<string, unknown>>,
  onFault: (error: unknown) => void,
  callerSupplied: readonly string[] = [],
): Promise<ToolResult> {
  try {
    const answer = await work();
    const supplied = suppliedPaths(answer, callerSupplied);
    return structured({ ok: true, ...(supplied.length > 0 && { caller_supplied: supplied }), ...answer });
  } catch (error) {
    if (error instanceof ToolFailure) {
      const { said, ...extra } = error.extra;
      // Why, then the free times offered instead, in the words to say them: spoken carries what is
      // said (issue 44).
      const offered = extra.alternatives?.length ? speakNearestTimes(extra.alternatives) : undefined;
      const spoken = [said, offered].filter((part) => part !== undefined).join(' ');
      return structured({
        ok: false,
        code: error.code,
        hint: error.hint,
        ...extra,
        ...(spoken !== '' && { spoken }),
      });
    }
    if (error instanceof BadArgument) return argumentErrorResult(tool, problemsOf(error));
    if (isAppError(error)) return fromAppError(error);
    onFault(error);
    // A write the storage refused (a full disk) is database_unavailable, as REST answers it.
    const storage = storageRefusal(error);
    return storage ? fromAppError(storage) : toolErrorResult(errorHint('server_error'));
  }
}

function fromAppError(error: AppError): ToolResult {
  if (error.code === 'rate_limited' && typeof error.details?.resendsPerHour === 'number') {
    // A booking's link sent again too often: holding the line would not help (resend-limit.ts).
    const minutes = Math.max(1, Math.ceil(Number(error.details.retryAfterSeconds ?? 60) / 60));
    const { code, hint } = TOOL_OUTCOMES.resends_spent;
    return structured({ ok: false, code, hint: hint({ times: error.details.resendsPerHour, minutes }) });
  }
  if (error.code === 'rate_limited') {
    const seconds = Number(error.details?.retryAfterSeconds ?? 1);
    const { code, hint } = TOOL_OUTCOMES.rate_limited;
    return structured({ ok: false, code, hint: hint({ seconds }) });
  }
  if (error.code === 'not_found' && error.param === 'client_id') {
    // An id the agent passed (book, join_waitlist), not something the caller said: how to find them.
    const { code, hint } = TOOL_OUTCOMES.unknown_client;
    return structured({ ok: false, code, hint: hint({}), detail: error.message });
  }
  if (CONVERSATIONAL.has(error.code)) {
    return structured({ ok: false, code: error.code, hint: errorHint(error.code), detail: error.message });
  }
  if (error.code === 'invalid_request') {
    // A field the engine refused, named in param: asked of the caller again only if it is theirs.
    const fault = error.param ? faultOf(error.param) : 'caller';
    return toolErrorResult(`${argumentErrorHint([fault])} ${error.message}`);
  }
  if (SAYS_WHAT_TO_FIX.has(error.code)) return toolErrorResult(`${errorHint(error.code)} ${error.message}`);
  return toolErrorResult(errorHint(error.code));
}

// Members in the order of the SDK's CallToolResult schema, which its server re-parses every result
// with: the direct lane of POST /mcp (src/http/mcp-direct-lane.ts) sends them as they are, so both
// answers are the same bytes.
function structured(content: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(content) }], structuredContent: content };
}

export function toolErrorResult(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** An AppError with this code (and conflict reason), for callers that turn some into outcomes. */
export function isError(error: unknown, code: ErrorCode, reason?: string): error is AppError {
  return isAppError(error) && error.code === code && (reason === undefined || error.reason === reason);
}
