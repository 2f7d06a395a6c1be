import { listed } from './word-lists.ts';

/**
 * Free times as said, day by day, from each slot's own words (so "tomorrow" and a fall-back night's
 * "1:30 am GMT" stay as the slot says them): "Wednesday 25 November at 9 am, 9:30 am or 10 am with
 * Ben Carter"; with several people that day each time names its own ("9 am with Ben Carter or 9:15 am
 * with Amara Okafor"). Days are joined with "; or ".
 */
export function speakSlotList(slots: readonly { spoken: string; staff_name: string }[]): string {
  const days = new Map<string, { time: string; staff: string }[]>();
  for (const slot of slots) {
    const cut = slot.spoken.lastIndexOf(' at ');
    const day = slot.spoken.slice(0, cut);
    days.set(day, [...(days.get(day) ?? []), { time: slot.spoken.slice(cut + 4), staff: slot.staff_name }]);
  }
  return [...days]
    .map(([day, times]) => {
      const staff = times[0]!.staff;
      return times.every((t) => t.staff === staff)
        ? `${day} at ${listed(
            times.map((t) => t.time),
            'or',
          )} with ${staff}`
        : `${day} at ${listed(
            times.map((t) => `${t.time} with ${t.staff}`),
            'or',
          )}`;
    })
    .join('; or ');
}
