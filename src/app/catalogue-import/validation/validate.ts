import type { z } from 'zod';
import { issueProblem, type RefusedIssue } from '../../../contract/validation-wording.ts';
import { unknownKeyMessage } from '../format/key-suggestions.ts';
import { type CatalogueProblem, formatPath, type PathSegment } from '../format/problems.ts';
import {
  bookingSchema,
  type Catalogue,
  catalogueSchema,
  clientSchema,
  locationSchema,
  organisationPoliciesSchema,
  organisationSchema,
  serviceSchema,
  staffSchema,
} from '../format/schema.ts';
import { checkCatalogue } from './checks.ts';
import type { Indexed, ParsedCatalogue } from './parsed.ts';

export type { CatalogueProblem };

export interface CatalogueValidation {
  problems: CatalogueProblem[];
  /** Present only when there are no problems. */
  catalogue: Catalogue | undefined;
}

const COLLECTIONS = {
  locations: locationSchema,
  services: serviceSchema,
  staff: staffSchema,
  clients: clientSchema,
  bookings: bookingSchema,
} as const;

const errorMap = (issue: { code?: string; input?: unknown }) =>
  issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : undefined;

/**
 * The schema's issues with `value` (the part at `prefix`), each under its path: unknown keys with the
 * key that was meant, the rest in the words the API refuses a request with (validation-wording.ts),
 * never zod's own English ("Invalid input: expected string, received number").
 */
function pushIssues(
  problems: CatalogueProblem[],
  schema: z.ZodType,
  prefix: PathSegment[],
  issues: readonly z.core.$ZodIssue[],
  value: unknown,
) {
  for (const issue of issues) {
    const inPart = issue.path.map((s) => (typeof s === 'number' ? s : String(s)));
    const path = [...prefix, ...inPart];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        problems.push({ path: formatPath([...path, key]), message: unknownKeyMessage(schema, inPart, key) });
    } else {
      problems.push({
        path: formatPath(path),
        message: issueProblem(issue as unknown as RefusedIssue, value),
      });
    }
  }
}

function parsePart<T>(
  schema: z.ZodType<T>,
  value: unknown,
  path: PathSegment[],
  problems: CatalogueProblem[],
): T | undefined {
  const result = schema.safeParse(value, { error: errorMap });
  if (result.success) return result.data;
  pushIssues(problems, schema, path, result.error.issues, value);
  return undefined;
}

/**
 * An entry of a collection, as parsePart; an entry whose only problems are unknown keys (a typo, a
 * field of another system) is read without them for the checks of what it refers to, so that its
 * other problems (an unknown ref) are listed in the same run, not after the keys are mended.
 */
function parseEntry<T>(
  schema: z.ZodType<T>,
  value: unknown,
  path: PathSegment[],
  problems: CatalogueProblem[],
): T | undefined {
  const parsed = parsePart(schema, value, path, problems);
  if (parsed !== undefined) return parsed;
  // Failed: asked again for its issues, which only a file with problems pays for.
  const result = schema.safeParse(value, { error: errorMap });
  if (result.success || !result.error.issues.every((issue) => issue.code === 'unrecognized_keys')) {
    return undefined;
  }
  const known = structuredClone(value);
  for (const issue of result.error.issues) {
    const holder = issue.path.reduce<unknown>(
      (part, segment) => (part as Record<PropertyKey, unknown>)[segment],
      known,
    );
    for (const key of (issue as { keys: string[] }).keys) delete (holder as Record<string, unknown>)[key];
  }
  const withoutUnknown = schema.safeParse(known, { error: errorMap });
  return withoutUnknown.success ? withoutUnknown.data : undefined;
}

/**
 * A "__proto__" key (which JSON.parse keeps as a plain key) is dropped without a word by the schema's
 * records: a location's working hours or overrides under it would vanish from an import that says it
 * succeeded. It is no ref the file can mean, so it is refused where it stands.
 */
function reportProtoKeys(value: unknown, path: PathSegment[], problems: CatalogueProblem[]): void {
  // A walk with its own stack: a file nested deeper than the call stack must not crash the check.
  const pending: [unknown, PathSegment[]][] = [[value, path]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, at] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (Array.isArray(item)) {
      for (const [index, child] of item.entries()) pending.push([child, [...at, index]]);
      continue;
    }
    for (const key of Object.keys(item)) {
      if (key === '__proto__') {
        problems.push({ path: formatPath([...at, key]), message: 'is not a key a catalogue can have' });
      } else {
        pending.push([(item as Record<string, unknown>)[key], [...at, key]]);
      }
    }
  }
}

/**
 * Checks a whole catalogue and reports every problem at once: each entity is shape-checked on its own,
 * so one malformed entry does not hide the semantic problems (unknown refs, overlaps, currency) of the rest.
 */
export function validateCatalogue(input: unknown): CatalogueValidation {
  const problems: CatalogueProblem[] = [];
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { problems: [{ path: '$', message: 'must be a JSON object' }], catalogue: undefined };
  }
  const raw = input as Record<string, unknown>;
  reportProtoKeys(raw, [], problems);
  for (const key of Object.keys(raw)) {
    if (!Object.hasOwn(catalogueSchema.shape, key))
      problems.push({ path: formatPath([key]), message: unknownKeyMessage(catalogueSchema, [], key) });
  }
  const policies =
    raw.policies === undefined
      ? undefined
      : parsePart(organisationPoliciesSchema, raw.policies, ['policies'], problems);
  if (raw.policies !== undefined && isObject(raw.organisation) && raw.organisation.policies !== undefined) {
    problems.push({
      path: '$.policies',
      message: 'give the policies once: here or in organisation.policies, not both',
    });
  }
  const parsed: ParsedCatalogue = {
    raw,
    organisation: parsePart(organisationSchema, raw.organisation, ['organisation'], problems),
    locations: [],
    services: [],
    staff: [],
    clients: [],
    bookings: [],
  };
  for (const kind of Object.keys(COLLECTIONS) as (keyof typeof COLLECTIONS)[]) {
    const items = raw[kind];
    if (items === undefined && kind !== 'locations') continue;
    if (!Array.isArray(items)) {
      problems.push({
        path: formatPath([kind]),
        message: items === undefined ? 'is required' : 'must be an array',
      });
      continue;
    }
    if (kind === 'locations' && items.length === 0) {
      problems.push({ path: '$.locations', message: 'must list at least one location' });
    }
    const schema: z.ZodType<unknown> = COLLECTIONS[kind];
    items.forEach((item, index) => {
      const value = parseEntry(schema, item, [kind, index], problems);
      if (value !== undefined) (parsed[kind] as Indexed<unknown>[]).push({ index, value });
    });
  }
  problems.push(...checkCatalogue(parsed));
  if (problems.length > 0 || parsed.organisation === undefined) return { problems, catalogue: undefined };
  return {
    problems,
    catalogue: {
      organisation: parsed.organisation,
      policies,
      locations: parsed.locations.map((l) => l.value),
      services: parsed.services.map((s) => s.value),
      staff: parsed.staff.map((s) => s.value),
      clients: parsed.clients.map((c) => c.value),
      bookings: parsed.bookings.map((b) => b.value),
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
