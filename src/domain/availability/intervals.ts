import type { Interval } from './types.ts';

/**
 * Half-open intervals [start, end) of instants, kept sorted and disjoint.
 */

/** Sorts and merges overlapping or touching intervals; drops empty ones. */
export function normalise(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter((i) => i.end > i.start).sort((a, b) => a.start - b.start);
  const merged: Interval[] = [];
  for (const interval of sorted) {
    const last = merged[merged.length - 1];
    if (last && interval.start <= last.end) last.end = Math.max(last.end, interval.end);
    else merged.push({ start: interval.start, end: interval.end });
  }
  return merged;
}

/**
 * The starts t for which [t, t + length) lies inside `within` and [t, t + reach) overlaps nothing in
 * `busy` (both normalised), as half-open intervals of starts. `reach` >= `length`: it adds the buffer
 * that must stay clear of other commitments but may leave working hours.
 */
export function feasibleStarts(
  within: readonly Interval[],
  busy: readonly Interval[],
  length: number,
  reach: number,
): Interval[] {
  const starts: Interval[] = [];
  let b = 0;
  for (const window of within) {
    // Starts that keep [t, t + length) inside the window.
    let from = window.start;
    const to = window.end - length + 1;
    // Busy [bs, be) forbids starts in (bs - reach, be), i.e. [bs - reach + 1, be).
    while (b < busy.length && busy[b]!.end <= from) b++;
    for (let k = b; k < busy.length && from < to; k++) {
      const forbiddenFrom = busy[k]!.start - reach + 1;
      const forbiddenTo = busy[k]!.end;
      if (forbiddenFrom >= to) break;
      if (forbiddenTo <= from) continue;
      if (forbiddenFrom > from) starts.push({ start: from, end: forbiddenFrom });
      from = Math.max(from, forbiddenTo);
    }
    if (from < to) starts.push({ start: from, end: to });
  }
  return starts;
}
