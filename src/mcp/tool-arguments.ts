import { z } from 'zod';
import { counted } from '../domain/counted.ts';
import type { ArgumentFault } from './hints.ts';
import { listed } from './word-lists.ts';

/**
 * How a tool reads the arguments a host sends, before its input schema checks them:
 *
 * - `null` for an optional argument means absent. Voice platforms and strict function calling (which
 *   must send every property, and sends null for those the model leaves out) send it; refusing it
 *   would refuse every call they make. Only members that accept absence and not null lose it, at
 *   any depth of nested objects (`client.email: null`).
 * - An argument error names every bad argument with its limit or form ("limit is at most 20",
 *   "client needs last_name"), never only the first: an agent that fixes one at a time makes a
 *   caller wait through a call per mistake.
 */

/** Per object schema: the members whose null is dropped, and the nested objects to look into. */
interface NullPlan {
  optional: ReadonlySet<string>;
  nested: ReadonlyMap<string, NullPlan>;
}

/** The plan of an object schema's members, worked out once per tool. */
export function nullPlanOf(shape: z.ZodRawShape): NullPlan {
  const optional = new Set<string>();
  const nested = new Map<string, NullPlan>();
  for (const [name, field] of Object.entries(shape)) {
    const member = field as z.ZodType;
    if (member.safeParse(undefined).success && !member.safeParse(null).success) optional.add(name);
    const inner = objectInside(member);
    if (inner) nested.set(name, nullPlanOf(inner.shape));
  }
  return { optional, nested };
}

/** The object schema an optional (or nullable, or defaulted) member wraps, if any. */
function objectInside(schema: z.ZodType): z.ZodObject | undefined {
  let node: z.ZodType = schema;
  for (let depth = 0; depth < 8; depth++) {
    if (node instanceof z.ZodObject) return node;
    const inner = (node as { _zod: { def: { innerType?: z.ZodType } } })._zod.def.innerType;
    if (!inner) return undefined;
    node = inner;
  }
  return undefined;
}

/** The arguments with every null of an optional member dropped; anything else is left as it is. */
export function withoutNulls(args: unknown, plan: NullPlan): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    if (value === null && plan.optional.has(name)) continue;
    const nested = plan.nested.get(name);
    out[name] = nested ? withoutNulls(value, nested) : value;
  }
  return out;
}

/** A member the schema does not take: its path, and the object it was sent in (none: the arguments). */
export interface UnknownMember {
  path: readonly string[];
  /** The path of the object holding it ([] for the arguments themselves), and the members it takes. */
  owner: readonly string[];
  takes: readonly string[];
}

/**
 * Every member the schema does not take, at any depth of nested objects (`client.email_address`,
 * `repeat.until`), in the order sent. A member sent as null says nothing and is not one (design.md
 * 9.3); a nested value that is no object is left to the schema, which names its form.
 */
export function unknownMembers(
  shape: z.ZodRawShape,
  args: unknown,
  owner: readonly string[] = [],
): UnknownMember[] {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return [];
  const found: UnknownMember[] = [];
  const inner: UnknownMember[] = [];
  for (const [name, value] of Object.entries(args)) {
    if (value === null) continue;
    // Own members only: "constructor" or "toString" is no argument because every object has one.
    const field = Object.hasOwn(shape, name) ? (shape[name] as z.ZodType) : undefined;
    if (!field) {
      found.push({ path: [...owner, name], owner, takes: Object.keys(shape) });
      continue;
    }
    const object = objectInside(field);
    if (object) inner.push(...unknownMembers(object.shape, value, [...owner, name]));
  }
  return [...found, ...inner];
}

/**
 * The members of the arguments whose shape the schema takes, at any depth of nested objects (of a
 * `client` lacking last_name, its phone and e-mail): what a tool can still read the meaning of when
 * other members are refused, so that one answer names every bad argument (ToolSpec.formProblems).
 */
export function wellShaped(input: z.ZodRawShape, args: unknown): Record<string, unknown> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    const field = input[name] as z.ZodType | undefined;
    if (!field) continue;
    if (field.safeParse(value).success) {
      out[name] = value;
      continue;
    }
    const inner = objectInside(field);
    if (inner && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      out[name] = wellShaped(inner.shape, value);
    }
  }
  return out;
}

/**
 * The arguments (or members of `client`) that carry what the caller said, as said: names, a phone or
 * an e-mail, services and staff, dates and times, a reference read out, notes and messages in their
 * words. Every other argument (limit, days, time_of_day, times, dry_run, scope, repeat, client_id,
 * marketing_consent) is set by the agent alone.
 */
const SAID_BY_CALLER: ReadonlySet<string> = new Set([
  'location',
  'services',
  'staff',
  'date',
  'from_date',
  'to_date',
  'starts_at',
  'earliest',
  'latest',
  'first_name',
  'last_name',
  'caller_name',
  'phone',
  'email',
  'reference',
  'notes',
  'reason',
  'message',
]);

/**
 * Whose mistake a bad argument is, by its name as a hint gives it ("client.phone", "earliest and
 * latest", "repeat.every_weeks"): the caller's when any argument named carries what they said.
 */
export function faultOf(param: string): ArgumentFault {
  const named = param.split(' and ').map((name) => name.split('.').at(-1)!);
  return named.some((name) => SAID_BY_CALLER.has(name)) ? 'caller' : 'agent';
}

/** A bad argument as a hint says it ("limit is at most 20"), and whose mistake it is. */
export interface ArgumentProblem {
  said: string;
  fault: ArgumentFault;
}

/**
 * Each bad argument, said once with its limit or form: "date is missing; expected: YYYY-MM-DD ...",
 * "limit is at most 20", "client needs last_name", "time_of_day is one of morning, afternoon, evening".
 * Only one carrying what the caller said that is missing or empty is theirs: one of the wrong type or
 * too long, or a list holding something it does not take, is the agent's (it passed it so).
 */
export function argumentProblems(input: z.ZodRawShape, error: z.ZodError, args: unknown): ArgumentProblem[] {
  const problems: ArgumentProblem[] = [];
  const seen = new Set<string>();
  const issues = error.issues.map(branchTaken);
  for (const issue of issues) {
    // An item of a list (`times: [null]`, `["noon"]`) is said as the list: the path stops before it.
    const item = issue.path.findIndex((step) => typeof step === 'number');
    const path = (item >= 0 ? issue.path.slice(0, item) : issue.path).map(String);
    const key = path.join('.');
    if (seen.has(key)) continue;
    // zod checks a whole number against the safe-integer range before the tool's own limits: a
    // limit of 1e16 is said with the tool's "at most 20", not with 9007199254740991.
    const safeRange = (issue.code === 'too_big' || issue.code === 'too_small') && issue.origin === 'int';
    if (safeRange && issues.some((other) => other !== issue && sameKey(other, key))) continue;
    seen.add(key);
    const said = item >= 0 ? listProblem(input, path) : problemOf(input, issue, path, args);
    const given = valueAt(args, path);
    const unsaid = given === undefined || given === null || (item < 0 && issue.code === 'too_small');
    problems.push({ said, fault: unsaid && path.length > 0 ? faultOf(key) : 'agent' });
  }
  return problems;
}

/** A list holding an item it does not take: said with the list's form ("times is a list of any of ..."). */
function listProblem(input: z.ZodRawShape, path: string[]): string {
  const name = path.join('.');
  const field = fieldAt(input, path);
  const form = field && valueForm(field);
  return form ? `${name} is ${form}` : `${name} is not valid${path.length === 1 ? expectedForm(field) : ''}`;
}

function sameKey(issue: z.core.$ZodIssue, key: string): boolean {
  return issue.path.map(String).join('.') === key;
}

/**
 * The issue of the one branch of a union the value has the type of (a list of services sent as a
 * list, 11 long: the list's "at most 10", not the union's "not valid"), at the union's path; the
 * union's own issue when none or several have.
 */
function branchTaken(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  const typed = issue.errors.filter(
    (branch) => !branch.some((inner) => inner.code === 'invalid_type' && inner.path.length === 0),
  );
  // Only an issue of the whole value (its size): one of an item is said with the union's form.
  const inner = typed.length === 1 ? typed[0]![0] : undefined;
  return inner && inner.path.length === 0 ? { ...inner, path: issue.path } : issue;
}

function problemOf(input: z.ZodRawShape, issue: z.core.$ZodIssue, path: string[], args: unknown): string {
  if (path.length === 0) return 'arguments must be an object of named arguments';
  const name = path.join('.');
  const given = valueAt(args, path);
  // null where an argument is required: it is as missing as one left out.
  if (given === undefined || given === null) {
    // A member of a nested object: "client needs last_name"; with its limits where it has some
    // ("repeat needs every_weeks, a whole number from 1 to 12"), as a member sent wrong is told.
    if (path.length > 1) {
      const field = fieldAt(input, path);
      const form = field && valueForm(field);
      return `${path.slice(0, -1).join('.')} needs ${path.at(-1)}${form ? `, ${form}` : ''}`;
    }
    return `${name} is missing${expectedForm(input[name] as z.ZodType | undefined)}`;
  }
  const limit = limitOf(issue);
  if (limit) return `${name} ${limit}`;
  if (issue.code === 'invalid_value' && issue.values.length > 0) {
    return `${name} is one of ${issue.values.map(String).join(', ')}`;
  }
  const field = fieldAt(input, path);
  const form = field && valueForm(field);
  if (form) return `${name} is ${form}`;
  // Text or an object sent as something else (a number, a list): what it is for, then what it is
  // with its limits ("notes is not valid; expected: For the stylist (text of at most 1000 characters)").
  const shape = field && shapeForm(field);
  if (shape) {
    return `${name} is not valid; expected: ${field.description ? `${bare(field.description)} (${shape})` : shape}`;
  }
  return `${name} is not valid${path.length === 1 ? expectedForm(field) : ''}`;
}

/** The schema of the member at `path` (through nested objects), if there is one. */
function fieldAt(input: z.ZodRawShape, path: readonly string[]): z.ZodType | undefined {
  let field = input[path[0]!] as z.ZodType | undefined;
  for (const step of path.slice(1)) {
    const inner = field && objectInside(field);
    field = inner?.shape[step] as z.ZodType | undefined;
  }
  return field;
}

/**
 * What a number, a yes-or-no or a list of choices is, said with its limits ("a whole number from 1
 * to 20", "true or false", "a list of any of morning, afternoon, evening"); undefined for text and
 * anything else, whose description says its form.
 */
function valueForm(field: z.ZodType): string | undefined {
  const schema = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as JsonForm;
  // A nullable member's form is that of its branch that is not null.
  const json = schema.anyOf?.find((branch) => branch.type !== 'null') ?? schema;
  switch (json.type) {
    case 'boolean':
      return 'true or false';
    case 'integer':
    case 'number': {
      const kind = json.type === 'integer' ? 'a whole number' : 'a number';
      const [low, high] = [json.minimum, json.maximum];
      if (low !== undefined && high !== undefined) return `${kind} from ${low} to ${high}`;
      if (low !== undefined) return `${kind} of at least ${low}`;
      if (high !== undefined) return `${kind} of at most ${high}`;
      return kind;
    }
    case 'array': {
      const choices = json.items?.enum;
      return choices ? `a list of any of ${choices.join(', ')}` : undefined;
    }
    default:
      return undefined;
  }
}

interface JsonForm {
  type?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  items?: { enum?: string[] };
  anyOf?: JsonForm[];
  properties?: Record<string, JsonForm>;
  required?: string[];
}

/**
 * What text or an object is, with its limits, which tools/list leaves out of the input schemas
 * (tool-schemas.ts): "text of 1 to 60 characters", "an object with first_name and last_name, and
 * optionally phone and email", "an object with every_weeks (a whole number from 1 to 12) and count
 * (a whole number from 2 to 26)"; undefined for anything else (a choice of forms: its description
 * says it).
 */
function shapeForm(field: z.ZodType): string | undefined {
  const schema = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as JsonForm;
  // A nullable member's form is that of its branch that is not null; a choice of forms has none.
  const branches = schema.anyOf?.filter((branch) => branch.type !== 'null');
  const json = branches ? (branches.length === 1 ? branches[0]! : {}) : schema;
  if (json.type === 'string') return `text${lengthOf(json)}`;
  if (json.type !== 'object' || !json.properties) return undefined;
  const objectField = objectInside(field);
  const members = Object.keys(json.properties).map((member) => {
    const inner = objectField?.shape[member] as z.ZodType | undefined;
    const form = inner && valueForm(inner);
    return { member, said: form ? `${member} (${form})` : member };
  });
  const required = new Set(json.required ?? []);
  const needed = members.filter(({ member }) => required.has(member)).map(({ said }) => said);
  const optional = members.filter(({ member }) => !required.has(member)).map(({ said }) => said);
  if (needed.length === 0) return `an object with any of ${listed(optional)}`;
  return `an object with ${listed(needed)}${optional.length > 0 ? `, and optionally ${listed(optional)}` : ''}`;
}

/** " of 1 to 60 characters", " of at most 1000 characters", or nothing. */
function lengthOf(json: JsonForm): string {
  const [low, high] = [json.minLength, json.maxLength];
  if (low !== undefined && low > 0 && high !== undefined) return ` of ${low} to ${high} characters`;
  if (high !== undefined) return ` of at most ${high} characters`;
  if (low !== undefined && low > 0) return ` of at least ${counted(low, 'character')}`;
  return '';
}

/** A description as said inside a sentence: without its full stop (an ellipsis is kept). */
function bare(description: string): string {
  return description.replace(/(?<!\.)\.$/, '');
}

/** "is at most 20", "is at least 1", "is at most 60 characters", "has at most 10 items". */
function limitOf(issue: z.core.$ZodIssue): string | undefined {
  if (issue.code !== 'too_big' && issue.code !== 'too_small') return undefined;
  const bound = issue.code === 'too_big' ? issue.maximum : issue.minimum;
  const most = issue.code === 'too_big' ? 'at most' : 'at least';
  switch (issue.origin) {
    case 'string':
      return `is ${most} ${bound} ${Number(bound) === 1 ? 'character' : 'characters'}`;
    case 'array':
    case 'set':
      return `has ${most} ${bound} ${Number(bound) === 1 ? 'item' : 'items'}`;
    default:
      return issue.inclusive === false
        ? `is ${issue.code === 'too_big' ? 'below' : 'above'} ${bound}`
        : `is ${most} ${bound}`;
  }
}

function expectedForm(field: z.ZodType | undefined): string {
  if (!field) return '';
  const form = field.description ?? expectedType(field);
  return `; expected: ${form.replace(/\.$/, '')}`;
}

function expectedType(field: z.ZodType): string {
  const json = z.toJSONSchema(field, { io: 'input' }) as { type?: string; enum?: string[] };
  if (json.enum) return `one of ${json.enum.join(', ')}`;
  return shapeForm(field) ?? json.type ?? 'a value';
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let node = args;
  for (const step of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[step];
  }
  return node;
}
