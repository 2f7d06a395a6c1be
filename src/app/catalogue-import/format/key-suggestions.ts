import damerauLevenshtein from 'damerau-levenshtein';
import type { z } from 'zod';
import type { Path } from './problems.ts';

/**
 * "Did you mean" for a misspelt key of the catalogue file: the keys the schema knows at the object where
 * the unknown key stands, and the nearest of them. A hand-written file's usual slips are a typo
 * (`duraton_minutes`) and a word written out where the format abbreviates it (`monday` for `mon`).
 */

interface Definition {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  items?: z.ZodType[];
}

const definitionOf = (schema: z.ZodType): Definition => schema._zod.def as unknown as Definition;

/** Steps through the wrappers (defaults, optionals, transforms) to the schema that reads the value. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    const def = definitionOf(current);
    if (
      def.innerType &&
      ['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch'].includes(def.type)
    )
      current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.in;
    else return current;
  }
}

/** The keys of the object the schema reads at `path`, or none when no object stands there. */
export function knownKeysAt(schema: z.ZodType, path: Path): string[] {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    const def = definitionOf(current);
    if (def.type === 'object' && typeof segment === 'string') current = def.shape?.[segment];
    else if (def.type === 'array' && typeof segment === 'number') current = def.element;
    else if (def.type === 'tuple' && typeof segment === 'number') current = def.items?.[segment];
    else if (def.type === 'record') current = def.valueType;
    else return [];
    if (!current) return [];
    current = unwrap(current);
  }
  const def = definitionOf(current);
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

/** A known key counts as the abbreviation of a longer one from this many characters (`mon`, `tue`). */
const ABBREVIATION_LENGTH = 3;

/**
 * The known key nearest to `unknown`: one it abbreviates or extends, else the fewest edits, when those
 * are few enough (a third of the longer word, at least one) that the suggestion is likely what was meant.
 */
export function nearestKey(unknown: string, known: readonly string[]): string | undefined {
  const typed = unknown.toLowerCase();
  let best: { key: string; score: number } | undefined;
  for (const key of known) {
    const candidate = key.toLowerCase();
    const shorter = Math.min(typed.length, candidate.length);
    const prefix =
      shorter >= ABBREVIATION_LENGTH && (typed.startsWith(candidate) || candidate.startsWith(typed));
    const steps = damerauLevenshtein(typed, candidate).steps;
    const allowed = Math.max(1, Math.floor(Math.max(typed.length, candidate.length) / 3));
    if (!prefix && steps > allowed) continue;
    const score = prefix ? 0 : steps;
    if (!best || score < best.score) best = { key, score };
  }
  return best?.key;
}

/** The problem message for an unknown key, with the suggestion when there is one. */
export function unknownKeyMessage(schema: z.ZodType, objectPath: Path, key: string): string {
  const suggestion = nearestKey(key, knownKeysAt(schema, objectPath));
  return suggestion ? `unknown key; did you mean "${suggestion}"?` : 'unknown key';
}

/** Refs listed, at most, beside an unknown one that none is near. */
const LISTED_REFS = 8;

/**
 * The problem message for a ref that names no entity of its kind in the file: the ref that was
 * probably meant, else the refs there are to choose from (a client's refs are never listed: the
 * output may be kept, and they may be made of names), so that the fix is in the message.
 */
export function unknownRefMessage(
  kind: 'location' | 'service' | 'staff' | 'client',
  ref: string,
  known: Iterable<string>,
): string {
  const refs = [...known];
  const said = `unknown ${kind} ref "${ref}"`;
  const suggestion = nearestKey(ref, refs);
  if (suggestion) return `${said}; did you mean "${suggestion}"?`;
  const where = kind === 'staff' ? 'staff[]' : `${kind === 'client' ? 'clients' : `${kind}s`}[]`;
  if (refs.length === 0) return `${said}: ${where} lists none`;
  if (kind === 'client') return `${said}: no entry of clients[] has it`;
  const listed = refs
    .slice(0, LISTED_REFS)
    .map((r) => `"${r}"`)
    .join(', ');
  return `${said}: ${where} has ${listed}${refs.length > LISTED_REFS ? ', ...' : ''}`;
}
