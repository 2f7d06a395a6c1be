import { z } from 'zod';

/**
 * The words of a request the schemas refused (REST's 400 invalid_request, and the MCP tools' hints that
 * carry its message): each problem names the field, with its place in the body ("repeat.every_weeks",
 * "service_ids[2]"), and says what it takes ("must be a string, not a number", "is required", "must be
 * one of open, done", "must be at most 12"). Zod's own English ("Invalid input: expected string,
 * received number", "Too big: expected number to be <=12") says neither which field nor in an API
 * user's terms, so it is never passed on; a message a schema words itself ("must be a calendar date
 * written YYYY-MM-DD") is kept, after the field's name. Values are never echoed: a refused field may
 * hold a phone number or an e-mail address.
 */

/** A zod issue as the faces receive it: from a ZodError, or rebuilt from Fastify's validation entry. */
export interface RefusedIssue {
  code: string;
  path: readonly PropertyKey[];
  message: string;
  [detail: string]: unknown;
}

/** Where the refused value was: what a member of it is called ("field", "query parameter"...). */
export type RequestPart = 'body' | 'querystring' | 'params' | 'headers';

const MEMBER: Record<RequestPart, { one: string; whole: string }> = {
  body: { one: 'field', whole: 'The body' },
  querystring: { one: 'query parameter', whole: 'The query string' },
  params: { one: 'path parameter', whole: 'The path' },
  headers: { one: 'header', whole: 'The headers' },
};

/** "repeat.every_weeks", "service_ids[2]": a path as a JSON user reads it. */
export function fieldName(path: readonly PropertyKey[]): string {
  let name = '';
  for (const step of path) {
    if (typeof step === 'number') name += `[${step}]`;
    else name += name === '' ? String(step) : `.${String(step)}`;
  }
  return name;
}

/**
 * One sentence for the issue, ending with a full stop. `input` is the whole value the schema read
 * (the body, the query), from which the refused member is looked up to tell "missing" from "wrong".
 */
export function describeIssue(issue: RefusedIssue, input: unknown, part: RequestPart = 'body'): string {
  const name = fieldName(issue.path);
  if (!isZodDefault(issue, input)) {
    // The schema's own words ("must be a calendar date written YYYY-MM-DD"): said of its field.
    return sentence(name === '' ? issue.message : `${name}: ${issue.message}`);
  }
  if (issue.code === 'unrecognized_keys') {
    const keys = (Array.isArray(issue.keys) ? issue.keys : []).map((key) =>
      fieldName([...issue.path, String(key)]),
    );
    const { one } = MEMBER[part];
    return keys.length === 1
      ? sentence(`${keys[0]} is not a ${one} this endpoint takes; remove it`)
      : sentence(`${keys.join(', ')} are not ${one}s this endpoint takes; remove them`);
  }
  const subject = name === '' ? MEMBER[part].whole : name;
  const given = valueAt(input, issue.path);
  // A query parameter written twice (`?limit=1&limit=2`) arrives as a list of its values.
  if (part === 'querystring' && issue.code === 'invalid_type' && Array.isArray(given)) {
    return sentence(`${subject} is given ${given.length} times; give it once`);
  }
  const said = problemOf(issue, given, name !== '' && part === 'body');
  return sentence(`${subject} ${said}`);
}

/**
 * What is wrong with the refused value, in the words describeIssue says it with, without naming it
 * and without a full stop ("must be a string, not a number", "must be one of open, done", "must be at
 * most 60 characters long"): for a face that names the place itself (`booking import`'s problems, each
 * under its JSON path). `input` is the value the schema read, the issue's path leading into it; a
 * message the schema words itself is kept as it is. Unknown keys are for the face to name.
 */
export function issueProblem(issue: RefusedIssue, input: unknown): string {
  if (!isZodDefault(issue, input)) return issue.message;
  return problemOf(issue, valueAt(input, issue.path), true);
}

/** The issue's problem, said of its member: `given` is the value refused (undefined when missing). */
function problemOf(issue: RefusedIssue, given: unknown, sayType: boolean): string {
  switch (issue.code) {
    case 'invalid_type':
      return typeProblem(String(issue.expected), given, sayType);
    case 'invalid_value': {
      const values = Array.isArray(issue.values) ? issue.values : [];
      if (values.length === 1) return `must be ${JSON.stringify(values[0])}`;
      return `must be one of ${values.map(String).join(', ')}`;
    }
    case 'too_big':
    case 'too_small':
      return sizeProblem(issue);
    case 'invalid_format':
      return `must be ${formatOf(issue)}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_union': {
      const forms = unionForms(issue);
      return forms ? `must be ${forms}` : 'is not in a form it takes';
    }
    case 'invalid_key':
      return 'has a key that is not valid';
    case 'invalid_element':
      return 'has an entry that is not valid';
    default:
      return 'is not valid';
  }
}

/** Every issue described, one sentence each, the first issue of each field only. */
export function describeIssues(issues: readonly RefusedIssue[], input: unknown, part?: RequestPart): string {
  const seen = new Set<string>();
  const said: string[] = [];
  for (const issue of issues) {
    const key = `${issue.code === 'unrecognized_keys' ? '+' : ''}${fieldName(issue.path)}`;
    if (seen.has(key)) continue;
    // zod checks a whole number against the safe-integer range as well as the field's own bounds:
    // `every_weeks: 1e308` is said with the field's "at most 12", not with 9007199254740991.
    if (isSafeRangeBound(issue) && issues.some((other) => other !== issue && samePath(other, issue)))
      continue;
    seen.add(key);
    said.push(describeIssue(issue, input, part));
  }
  return said.join(' ');
}

/** The bound of the safe-integer range that zod's whole numbers check besides their own. */
function isSafeRangeBound(issue: RefusedIssue): boolean {
  return (issue.code === 'too_big' || issue.code === 'too_small') && issue.origin === 'int';
}

function samePath(one: RefusedIssue, other: RefusedIssue): boolean {
  return fieldName(one.path) === fieldName(other.path);
}

/** The contract's param: the first segment of the path ("service_ids" for service_ids[2]), or the unknown key. */
export function paramOfIssue(issue: RefusedIssue): string | undefined {
  const first = issue.path[0];
  if (first !== undefined) return String(first);
  if (issue.code === 'unrecognized_keys' && Array.isArray(issue.keys) && issue.keys.length > 0) {
    return String(issue.keys[0]);
  }
  return undefined;
}

const ENGLISH = z.locales.en().localeError;

/**
 * Whether the issue's message is zod's default English one (to be reworded), rather than words its
 * schema gave. Zod's message for a wrong type names the type received, which the issue itself does
 * not carry: it is compared by its start.
 */
function isZodDefault(issue: RefusedIssue, input: unknown): boolean {
  if (issue.code === 'custom') return false;
  if (
    issue.code === 'invalid_type' &&
    issue.message.startsWith(`Invalid input: expected ${String(issue.expected)}`)
  ) {
    return true;
  }
  const said = ENGLISH({ ...issue, input: valueAt(input, issue.path) } as never);
  const text = typeof said === 'string' ? said : said?.message;
  return text === issue.message;
}

function typeProblem(expected: string, given: unknown, sayType: boolean): string {
  const wanted = TYPE_NOUNS[expected] ?? `a value of type ${expected}`;
  if (given === undefined) return sayType ? `is required and must be ${wanted}` : 'is required';
  if (expected === 'int' && typeof given === 'number') return 'must be a whole number (an integer)';
  return `must be ${wanted}, not ${typeOfValue(given)}`;
}

const TYPE_NOUNS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number (an integer)',
  bigint: 'a whole number (an integer)',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
  date: 'a date',
};

function typeOfValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return Number.isFinite(value) ? 'a number' : String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** "must be at most 12", "must have at most 3 items", "must be at most 60 characters long", "must not be empty". */
function sizeProblem(issue: RefusedIssue): string {
  const big = issue.code === 'too_big';
  const bound = String(big ? issue.maximum : issue.minimum);
  const exact = issue.exact === true;
  const strict = issue.inclusive === false;
  const most = exact
    ? 'exactly'
    : big
      ? strict
        ? 'fewer than'
        : 'at most'
      : strict
        ? 'more than'
        : 'at least';
  switch (issue.origin) {
    case 'string': {
      if (!big && !exact && !strict && bound === '1') return 'must not be empty';
      return `must be ${most} ${bound} ${bound === '1' ? 'character' : 'characters'} long`;
    }
    case 'array':
    case 'set': {
      if (!big && !exact && !strict && bound === '1') return 'must have at least 1 item';
      return `must have ${most} ${bound} ${bound === '1' ? 'item' : 'items'}`;
    }
    default: {
      const than = exact
        ? 'exactly'
        : big
          ? strict
            ? 'less than'
            : 'at most'
          : strict
            ? 'more than'
            : 'at least';
      return `must be ${than} ${bound}`;
    }
  }
}

/** What a string of a format is, in words and with an example where one helps. */
function formatOf(issue: RefusedIssue): string {
  switch (issue.format) {
    case 'uuid':
    case 'guid':
      return 'a UUID, e.g. 3bfb2d49-4b43-512b-ab21-fcee7c1755e2';
    case 'email':
      return 'an e-mail address';
    case 'url':
      return 'a URL';
    case 'datetime':
      return /\[\+-\]/.test(String(issue.pattern ?? ''))
        ? 'an ISO 8601 date and time with its UTC offset, e.g. 2026-11-24T10:00:00+00:00'
        : 'an ISO 8601 date and time in UTC, e.g. 2026-11-24T10:00:00Z';
    case 'date':
      return 'a calendar date written YYYY-MM-DD';
    case 'time':
      return 'a time written HH:MM';
    case 'starts_with':
      return `text starting with ${JSON.stringify(issue.prefix)}`;
    case 'ends_with':
      return `text ending with ${JSON.stringify(issue.suffix)}`;
    case 'includes':
      return `text containing ${JSON.stringify(issue.includes)}`;
    case 'regex':
      return `text matching the pattern ${String(issue.pattern)}`;
    default:
      return `a valid ${String(issue.format)}`;
  }
}

/** "a string or an array": the types a union takes, when each branch was refused for its type. */
function unionForms(issue: RefusedIssue): string | undefined {
  const branches = Array.isArray(issue.errors) ? (issue.errors as RefusedIssue[][]) : [];
  const forms: string[] = [];
  for (const branch of branches) {
    const first = branch[0];
    if (first?.code !== 'invalid_type' || first.path.length > 0) return undefined;
    const noun = TYPE_NOUNS[String(first.expected)];
    if (!noun) return undefined;
    if (!forms.includes(noun)) forms.push(noun);
  }
  return forms.length > 0 ? forms.join(' or ') : undefined;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let node = input;
  for (const step of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[step as string];
  }
  return node;
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
