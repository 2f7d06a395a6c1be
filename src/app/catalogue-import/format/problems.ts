import { IANAZone } from 'luxon';

/**
 * What every catalogue check shares (and the storage planners, which report in the same form): how a
 * problem is located and reported, and readings of the raw file.
 */

/** One thing wrong with a catalogue file, located by a JSON path such as `$.services[1].price`. */
export interface CatalogueProblem {
  path: string;
  message: string;
}

export type PathSegment = string | number;
export type Path = readonly PathSegment[];
export type Report = (path: Path, message: string) => void;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** JSONPath in the dotted form people read; keys that are not identifiers use bracket notation. */
export function formatPath(segments: Path): string {
  let path = '$';
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) path += `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path;
}

export function rawRefs(items: unknown): Set<string> {
  const refs = new Set<string>();
  if (!Array.isArray(items)) return refs;
  for (const item of items) {
    const ref = (item as { ref?: unknown } | null)?.ref;
    if (typeof ref === 'string') refs.add(ref);
  }
  return refs;
}

export function rawZones(items: unknown): { index: number; ref: string | undefined; zone: string }[] {
  if (!Array.isArray(items)) return [];
  return items.flatMap((item, index) => {
    const { ref, timezone } = (item ?? {}) as { ref?: unknown; timezone?: unknown };
    if (typeof timezone !== 'string' || !IANAZone.isValidZone(timezone)) return [];
    return [{ index, ref: typeof ref === 'string' ? ref : undefined, zone: timezone }];
  });
}

/** Runs on the raw file so that duplicates are found even among entities that failed their shape check. */
export function checkRawUnique(items: unknown, kind: string, key: string, report: Report): void {
  if (!Array.isArray(items)) return;
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const value = (item as Record<string, unknown> | null)?.[key];
    if (typeof value !== 'string') return;
    const first = seen.get(value);
    if (first === undefined) seen.set(value, index);
    else
      report([kind, index, key], `duplicate ${key} "${value}": already used at ${formatPath([kind, first])}`);
  });
}

export function checkDuplicates(values: readonly string[], path: Path, what: string, report: Report): void {
  const seen = new Map<string, number>();
  values.forEach((value, index) => {
    const first = seen.get(value);
    if (first === undefined) seen.set(value, index);
    else
      report(
        [...path, index],
        `${what} "${value}" is listed twice (first at ${formatPath([...path, first])})`,
      );
  });
}

/**
 * An explicit id that is the id another entry, giving none, derives for itself (from `from`): no key
 * of the file tells them apart, so both are named before the database refuses the second row.
 */
export function derivedIdClash(other: Path, from: string): string {
  return `is the id ${formatPath(other)} derives from its ${from} (it gives no id of its own); give one of them another id`;
}
