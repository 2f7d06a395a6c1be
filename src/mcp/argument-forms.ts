import { nameRefusal } from '../app/client-service.ts';
import { messageRefusals } from '../app/message-service.ts';
import { isCalendarDate } from '../domain/availability/zone-calendar.ts';
import type { AppError } from '../domain/errors.ts';
import { contactFormProblems } from './resolution.ts';
import { crossedTimes, readTimeArguments } from './slot-window.ts';
import { dateFormProblem } from './spoken-dates.ts';
import { startFormProblem } from './spoken-starts.ts';
import { faultOf } from './tool-arguments.ts';
import { BadArgument, throwAll } from './tool-kit.ts';

/**
 * The tools' ToolSpec.formProblems, from their parts: the arguments the schema took that no location
 * would read, named as the tools name them when they read them. Values that are not text are left out
 * (the schema named them already).
 */

type Given = Readonly<Record<string, unknown>>;

/**
 * Two calendar dates given in the wrong order (from_date after to_date): named with the others, as
 * the tool would refuse them once the rest were mended. Dates said in words are placed by the tool.
 */
export function dateOrder(given: Given, from: string, to: string): BadArgument[] {
  const [first, last] = [given[from], given[to]];
  if (typeof first !== 'string' || typeof last !== 'string') return [];
  const [a, b] = [first.trim(), last.trim()];
  if (!isCalendarDate(a) || !isCalendarDate(b) || a <= b) return [];
  return [
    new BadArgument(
      `${from} and ${to}`,
      `${from} (${a}) is after ${to} (${b}); ask the caller which dates they mean.`,
    ),
  ];
}

/** Dates that no day reads ("someday", "the 45th"), each named as it was passed. */
export function dateForms(given: Given, ...names: string[]): BadArgument[] {
  return names.flatMap((name) => {
    const said = given[name];
    const problem = typeof said === 'string' ? dateFormProblem(said) : undefined;
    return problem ? [new BadArgument(name, problem)] : [];
  });
}

/** A starts_at no location reads ("whenever suits"). */
export function startForm(given: Given): BadArgument[] {
  const said = given.starts_at;
  const problem = typeof said === 'string' ? startFormProblem(said) : undefined;
  return problem ? [new BadArgument('starts_at', `${problem}.`)] : [];
}

/**
 * earliest and latest that are no time of day, or two times of the 24-hour clock or with am or pm
 * (no reading to choose) given crossed: the tool would refuse them once the rest were mended.
 */
export function timeForms(given: Given): BadArgument[] {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  try {
    const { earliest, latest } = readTimeArguments(undefined, text(given.earliest), text(given.latest));
    if (!earliest || !latest || earliest.time.halfDay || latest.time.halfDay) return [];
    const crossed = crossedTimes(
      earliest.time.minute,
      latest.time.minute,
      earliest.said.trim(),
      latest.said.trim(),
    );
    return crossed ? [crossed] : [];
  } catch (error) {
    if (error instanceof BadArgument) return [error, ...error.more];
    throw error;
  }
}

/**
 * A new client (book's `client`, no client_id) with neither phone nor e-mail: named with the others,
 * as registering them would refuse it once the rest were mended.
 */
export function newClientContact(given: Given): BadArgument[] {
  const client = given.client;
  if (typeof client !== 'object' || client === null) return [];
  if (typeof given.client_id === 'string' && given.client_id.trim() !== '') return [];
  const { phone, email } = client as Record<string, unknown>;
  const blank = (value: unknown) => typeof value !== 'string' || value.trim() === '';
  if (!blank(phone) || !blank(email)) return [];
  return [new BadArgument('client.phone', 'give a phone number or an e-mail address for a new client.')];
}

/** A refusal of the service's as a bad argument, named as it was sent (`client.first_name` in `client`). */
function asArgument(refused: AppError, owner: string): BadArgument {
  const param = `${owner}${refused.param}`;
  return new BadArgument(param, `${owner}${refused.message}`, [], faultOf(param), true);
}

/**
 * A new client's first and last name that registering would refuse (blank, a line break), at the top
 * (register_client) or in `client` (book, join_waitlist): each named, not the first alone.
 */
export function nameForms(given: Given, inClient: boolean): BadArgument[] {
  const person = inClient ? given.client : given;
  if (typeof person !== 'object' || person === null) return [];
  return (['first_name', 'last_name'] as const).flatMap((field) => {
    const value = (person as Given)[field];
    const refused = typeof value === 'string' ? nameRefusal(field, value) : undefined;
    return refused ? [asArgument(refused, inClient ? 'client.' : '')] : [];
  });
}

/** take_message's caller_name and message that it would refuse (blank, a control character): each named. */
export function messageForms(given: Given): BadArgument[] {
  const { caller_name: callerName, message } = given;
  const refused = messageRefusals({
    callerName: typeof callerName === 'string' ? callerName : 'unread',
    message: typeof message === 'string' ? message : 'unread',
  });
  return refused.map((one) => asArgument(one, ''));
}

/** A phone or an e-mail that is none, at the top (lookup_client) or in `client` (book). */
export function contactForms(given: Given, inClient: boolean): BadArgument[] {
  return inClient ? contactFormProblems(given.client, 'client.') : contactFormProblems(given);
}

/**
 * For a tool's catch around reading its start or dates: a BadArgument there is thrown again with the
 * problems of the `client`'s phone and e-mail beside it (and `more`'s: book's new client without
 * either), so the agent hears of all at once (a bad contact alone is the conversational bad_contact
 * answer, asked again later). Anything else passes on.
 */
export function alsoNamingContact(
  args: Given,
  more: (given: Given) => BadArgument[] = () => [],
): (error: unknown) => never {
  return (error) => {
    if (error instanceof BadArgument) throwAll([error, ...contactForms(args, true), ...more(args)]);
    throw error;
  };
}
