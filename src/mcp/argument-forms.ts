import { contactFormProblems } from './resolution.ts';
import { readTimeArguments } from './slot-window.ts';
import { dateFormProblem } from './spoken-dates.ts';
import { startFormProblem } from './spoken-starts.ts';
import { BadArgument, throwAll } from './tool-kit.ts';

/**
 * The tools' ToolSpec.formProblems, from their parts: the arguments the schema took that no location
 * would read, named as the tools name them when they read them. Values that are not text are left out
 * (the schema named them already).
 */

type Given = Readonly<Record<string, unknown>>;

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

/** earliest and latest that are no time of day. */
export function timeForms(given: Given): BadArgument[] {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  try {
    readTimeArguments(undefined, text(given.earliest), text(given.latest));
    return [];
  } catch (error) {
    if (error instanceof BadArgument) return [error, ...error.more];
    throw error;
  }
}

/** A phone or an e-mail that is none, at the top (lookup_client) or in `client` (book). */
export function contactForms(given: Given, inClient: boolean): BadArgument[] {
  return inClient ? contactFormProblems(given.client, 'client.') : contactFormProblems(given);
}

/**
 * For a tool's catch around reading its start or dates: a BadArgument there is thrown again with the
 * problems of the `client`'s phone and e-mail beside it, so the agent hears of both at once (a bad
 * contact alone is the conversational bad_contact answer, asked again later). Anything else passes on.
 */
export function alsoNamingContact(args: Given): (error: unknown) => never {
  return (error) => {
    if (error instanceof BadArgument) throwAll([error, ...contactForms(args, true)]);
    throw error;
  };
}
