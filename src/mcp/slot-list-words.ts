import { listed } from './word-lists.ts';

/**
 * Free times as said, day by day, from each slot's own words (so "tomorrow" and a fall-back night's
 * "1:30 am GMT" stay as the slot says them): "Wednesday 25 November at 9 am, 9:30 am or 10 am with
 * Ben Carter"; with several people that day, each person's times together, each person named once
 * ("at noon or 2 pm with Amara Okafor, or 12:30 pm or 1 pm with Ben Carter"), as a receptionist reads
 * a diary. Days are joined with "; or ". `withStaff` false leaves the people out, for times that are
 * all one person's, named once before them (speakFreeTimes).
 */
export function speakSlotList(
  slots: readonly { spoken: string; staff_name: string }[],
  withStaff = true,
): string {
  const days = new Map<string, Map<string, string[]>>();
  for (const slot of slots) {
    const cut = slot.spoken.lastIndexOf(' at ');
    const day = slot.spoken.slice(0, cut);
    const people = days.get(day) ?? new Map<string, string[]>();
    days.set(day, people);
    people.set(slot.staff_name, [...(people.get(slot.staff_name) ?? []), slot.spoken.slice(cut + 4)]);
  }
  const times = ([staff, said]: [string, string[]]) =>
    `${listed(said, 'or')}${withStaff ? ` with ${staff}` : ''}`;
  return [...days].map(([day, people]) => `${day} at ${[...people].map(times).join(', or ')}`).join('; or ');
}

/**
 * find_slots' free times: "Chloé Martin is free today, Tuesday 28 September at 10 am or 10:30 am; or
 * tomorrow, Wednesday 29 September at 9 am." when they are all one person's, who is named once;
 * otherwise "Free: tomorrow, Tuesday 24 November at noon or 2 pm with Amara Okafor, or 12:30 pm with
 * Ben Carter."
 */
export function speakFreeTimes(slots: readonly { spoken: string; staff_name: string }[]): string {
  const person = slots[0]?.staff_name;
  return slots.every((slot) => slot.staff_name === person)
    ? `${person} is free ${speakSlotList(slots, false)}.`
    : `Free: ${speakSlotList(slots)}.`;
}

/**
 * Free times offered instead of the one asked for: "The nearest free times are Tuesday 1 December at
 * 4 pm or 4:30 pm with Ben Carter."; over several days all one person's, the person named once, after
 * them ("...; or Thursday 3 December at 4 pm, all with Ben Carter."), not after every day.
 */
export function speakNearestTimes(slots: readonly { spoken: string; staff_name: string }[]): string {
  const opening = `The nearest free ${slots.length === 1 ? 'time is' : 'times are'}`;
  const person = slots[0]?.staff_name;
  const days = new Set(slots.map((slot) => slot.spoken.slice(0, slot.spoken.lastIndexOf(' at '))));
  if (days.size > 1 && slots.every((slot) => slot.staff_name === person)) {
    return `${opening} ${speakSlotList(slots, false)}, all with ${person}.`;
  }
  return `${opening} ${speakSlotList(slots)}.`;
}
