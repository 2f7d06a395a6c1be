import { addDays } from '../../src/domain/availability/zone-calendar.ts';

// biome-ignore lint/suspicious/noExplicitAny: tool answers are JSON; the scan reads a few fields.
type Json = any;
type Args = Record<string, unknown>;

/** A tool call as an agent makes it: the answer's structuredContent. */
export type ToolCall = (tool: string, args: Args) => Promise<Json>;

export interface LargestAnswer {
  /** Characters of the answer's JSON: what an agent keeps in its context (the text content is the same JSON). */
  size: number;
  args: Args;
  answer: Json;
  /** Five-slot answers seen. */
  measured: number;
}

const PARTS_OF_DAY = [undefined, 'morning', 'afternoon', 'evening'] as const;

/**
 * The largest five-slot find_slots answer a catalogue gives over a week from `today`: at every location
 * (but those in `skip`), for every service bookable there alone and every pair of them (back to back:
 * the answer then names both), on each day of the week and over two days (times said day by day, with
 * whoever is free), whole days and each part of the day. So it comes from whichever location says the
 * most before booking (a deposit, Booking Protection's card and fees) with the longest names, not from
 * the one question a benchmark times (issue 15: under 1,500 characters).
 */
export async function largestFindSlotsAnswer(
  call: ToolCall,
  today: string,
  skip: readonly string[] = [],
): Promise<LargestAnswer> {
  const largest: LargestAnswer = { size: 0, args: {}, answer: null, measured: 0 };
  const { locations } = await call('list_locations', {});
  for (const { slug } of locations as { slug: string }[]) {
    if (skip.includes(slug)) continue;
    const names: string[] = (await call('list_services', { location: slug })).services.map(
      (s: { name: string }) => s.name,
    );
    const sets = [
      ...names.map((name) => [name]),
      ...names.flatMap((a, i) => names.slice(i + 1).map((b) => [a, b])),
    ];
    for (const services of sets) {
      for (let day = 0; day < 7; day += 1) {
        for (const days of [1, 2]) {
          for (const part of PARTS_OF_DAY) {
            const args = {
              location: slug,
              services,
              date: addDays(today, day),
              days,
              ...(part && { time_of_day: part }),
            };
            const answer = await call('find_slots', args);
            if (answer?.ok !== true || answer.slots?.length !== 5) continue;
            largest.measured += 1;
            const size = JSON.stringify(answer).length;
            if (size > largest.size) Object.assign(largest, { size, args, answer });
          }
        }
      }
    }
  }
  return largest;
}

/** "islington, Cut & blow-dry + Full colour, 2027-09-29 morning": the question of an answer, said short. */
export function describeQuestion(args: Args): string {
  const services = ([] as unknown[]).concat(args.services).join(' + ');
  const days =
    args.days === 1
      ? ''
      : ` and the next ${Number(args.days) - 1 === 1 ? 'day' : `${Number(args.days) - 1} days`}`;
  return `${args.location}, ${services}, ${args.date}${days}${args.time_of_day ? ` ${args.time_of_day}` : ''}`;
}
