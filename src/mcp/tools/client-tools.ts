import { z } from 'zod';
import { UPCOMING_BOOKINGS_LIMIT } from '../../app/booking-service.ts';
import { newClientDetails } from '../../app/client-service.ts';
import { REPEAT_LIMITS } from '../../domain/booking/series.ts';
import { AppError, isAppError } from '../../domain/errors.ts';
import { localDateAt } from '../../domain/time-format.ts';
import { contactForms, nameForms } from '../argument-forms.ts';
import type { Booking, BookingApi, Client, NewClient, Usual } from '../booking-api.ts';
import {
  BOOKING_CALLER_TEXT,
  CALLER_TEXT_NOTE,
  CLIENT_CALLER_TEXT,
  callerTextAt,
  spokenName,
} from '../caller-text.ts';
import { callerContact, callerPhoneReadings, placeOfSlug } from '../resolution.ts';
import { speakDate, speakDateTime, speakPhone } from '../speech.ts';
import {
  isWaitlistOffer,
  type SpokenBooking,
  SpokenBookingSchema,
  speakBookings,
} from '../spoken-bookings.ts';
import { BadArgument, fail, failure, ToolFailure, throwAll } from '../tool-kit.ts';
import { defineTool, READ_ONLY } from '../tool-spec.ts';
import { listed } from '../word-lists.ts';
import { typoBudget, typos, wordFit } from '../word-similarity.ts';

const SpokenClient = z.object({
  id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  phone: z.string().nullable(),
  phone_spoken: z.string().nullable().describe('The number digit by digit, to read back.'),
  email: z.string().nullable(),
});

/** Built once: a zod schema is costly to make, and clientForBooking runs on every book. */
const CLIENT_ID = z.uuid();

const ContactInput = {
  phone: z.string().optional().describe('As said: +44... or 07911...'),
  email: z.string().optional(),
};

/** A client as the tools return it, the phone also digit by digit (national where the shop is). */
async function spokenClient(api: BookingApi, client: Client): Promise<z.infer<typeof SpokenClient>> {
  const countries = (await api.listLocations()).map((l) => l.country);
  // Said nationally where it is a number of one of the organisation's countries (London's or Kathmandu's).
  const home = countries.find((c) => client.phone && c && !speakPhone(client.phone, c).startsWith('plus'));
  return {
    id: client.id,
    first_name: client.first_name,
    last_name: client.last_name,
    phone: client.phone,
    phone_spoken: client.phone ? speakPhone(client.phone, home ?? countries[0]) : null,
    email: client.email,
  };
}

const SpokenUsual = z.object({
  location: z.string(),
  services: z.array(z.string()),
  service_ids: z.array(z.string()),
  staff: z
    .string()
    .nullable()
    .describe('null: the stylist of that visit no longer does it here; book without staff (anyone).'),
  staff_id: z.string().nullable(),
  every_weeks: z
    .int()
    .min(REPEAT_LIMITS.everyWeeks.min)
    .max(REPEAT_LIMITS.everyWeeks.max)
    .nullable()
    .describe("book's repeat every_weeks for their usual; null when none is known that a series repeats."),
  next_due_date: z
    .string()
    .nullable()
    .describe('YYYY-MM-DD the next visit falls due, after any already booked; null when unknown.'),
  spoken: z.string(),
});

/**
 * The caller's usual in words, with what `book` takes ("book my usual": services, staff and location as
 * they are here, repeat every_weeks if they want a series).
 */
async function speakUsual(api: BookingApi, usual: Usual): Promise<z.infer<typeof SpokenUsual> | undefined> {
  // A location closed since (inactive) takes no bookings: its usual could only be refused, and over
  // REST it is not even found, which would fail the whole look-up.
  if (!(await api.listLocations()).some((l) => l.slug === usual.location_slug)) return undefined;
  const [place, services, team] = await Promise.all([
    placeOfSlug(api, usual.location_slug),
    api.listServices(usual.location_slug),
    api.listStaff(usual.location_slug),
  ]);
  // A service no longer offered there, or no longer bookable online (the team books it themselves),
  // could only be refused too: such a usual is not offered (services not bookable online never are).
  const offered = usual.service_ids.map((id) => services.find((s) => s.id === id && s.online_bookable));
  if (!offered.every((s) => s !== undefined)) return undefined;
  const names = offered.map((s) => s.name);
  // A stylist who left (inactive) or no longer does these services here could only be refused:
  // "book my usual" with them is then booked with whoever is free (staff null means absent).
  const stylist = team.find(
    (s) => s.id === usual.staff_id && usual.service_ids.every((id) => s.service_ids.includes(id)),
  );
  const now = api.now();
  const today = localDateAt(now, place.zone);
  const last = speakDateTime(Date.parse(usual.last_starts_at), place.zone, place.locale, now);
  const every =
    usual.every_weeks === null
      ? ''
      : `, every ${usual.every_weeks === 1 ? 'week' : `${usual.every_weeks} weeks`}`;
  const lastWord = Date.parse(usual.last_starts_at) > now ? 'booked for' : 'last';
  const gone = stylist ? '' : ', with a stylist who no longer does it here';
  const due =
    usual.next_due_date === null
      ? ''
      : `; next due around ${speakDate(usual.next_due_date, place.locale, today)}`;
  return {
    location: place.location.name,
    services: names,
    service_ids: usual.service_ids,
    staff: stylist?.name ?? null,
    staff_id: stylist?.id ?? null,
    every_weeks: usual.every_weeks,
    next_due_date: usual.next_due_date,
    spoken: `Your usual: ${listed(names)}${stylist ? ` with ${stylist.name}` : ''} at ${place.location.name}${every} (${lastWord} ${last}${gone})${due}.`,
  };
}

/** What a held upcoming booking still waits for, said after it. */
const HELD_FOR = {
  pending_payment: ', held for its deposit',
  pending_confirmation: ', held for you to finish online',
};

/** A time the waitlist offers the caller: nothing they started, so not "to finish". */
const WAITLIST_OFFER = ', offered to you from the waitlist for you to claim online';

/** How many upcoming bookings are read out one by one: a series' later visits are counted, not read. */
const UPCOMING_SAID = 3;

/**
 * The caller's upcoming bookings as said to them, each with its reference: "You have 2 upcoming
 * bookings: ... (reference N H C dash ...); and ...". More than three (a weekly series) are counted, the
 * next three read and the last one's time said; a full list (the engine lists the first
 * UPCOMING_BOOKINGS_LIMIT) may not be all of them, so it is "at least". No name: names are
 * caller-supplied (docs/mcp.md).
 */
function upcomingSentence(bookings: readonly SpokenBooking[], lastWhen: string | undefined): string {
  if (bookings.length === 0) return 'You have no upcoming bookings.';
  const each = bookings.map(
    (b) =>
      `${b.spoken}${isWaitlistOffer(b) ? WAITLIST_OFFER : (HELD_FOR[b.status as keyof typeof HELD_FOR] ?? '')} (reference ${b.reference_spoken})`,
  );
  if (bookings.length === 1) return `You have an upcoming booking: ${each[0]}.`;
  if (bookings.length <= UPCOMING_SAID || lastWhen === undefined) {
    return `You have ${bookings.length} upcoming bookings: ${inTurn(each)}.`;
  }
  const next = `the next ${UPCOMING_SAID} are: ${inTurn(each.slice(0, UPCOMING_SAID))}`;
  if (bookings.length >= UPCOMING_BOOKINGS_LIMIT) {
    return `You have at least ${bookings.length} upcoming bookings; ${next}; and more after them, until at least ${lastWhen}.`;
  }
  return `You have ${bookings.length} upcoming bookings; ${next}; and ${bookings.length - UPCOMING_SAID} more, the last on ${lastWhen}.`;
}

/** Bookings read one after another: "A; B; and C" (each holds commas of its own), not "A; and B; and C". */
function inTurn(each: readonly string[]): string {
  return each.length <= 1 ? (each[0] ?? '') : `${each.slice(0, -1).join('; ')}; and ${each.at(-1)}`;
}

/** When the last of more bookings than are read out is, as said where it is. */
async function lastOfMany(api: BookingApi, bookings: readonly Booking[]): Promise<string | undefined> {
  const last = bookings.at(-1);
  if (bookings.length <= UPCOMING_SAID || !last) return undefined;
  const place = await placeOfSlug(api, last.location_slug);
  return speakDateTime(Date.parse(last.starts_at), place.zone, place.locale, api.now());
}

export const lookupClientTool = defineTool({
  name: 'lookup_client',
  title: 'Look up a caller',
  description: `A client by phone (caller ID works) or e-mail, with upcoming bookings and their usual. ${CALLER_TEXT_NOTE}`,
  input: ContactInput,
  output: {
    client: SpokenClient,
    upcoming_bookings: z.array(SpokenBookingSchema),
    usual: SpokenUsual.optional(),
    spoken: z.string(),
  },
  annotations: READ_ONLY,
  formProblems: (given) => contactForms(given, false),
  callerSupplied: [
    ...callerTextAt('client', CLIENT_CALLER_TEXT),
    ...callerTextAt('upcoming_bookings[]', BOOKING_CALLER_TEXT),
  ],
  async run(args, { api }) {
    if (!args.phone?.trim() && !args.email?.trim())
      throw new BadArgument('phone', 'give a phone number or an e-mail address.');
    const { email } = await callerContact(api, { email: args.email });
    let client: Client | null = null;
    let phones: (string | undefined)[] = [undefined];
    try {
      if (args.phone?.trim()) phones = await callerPhoneReadings(api, args.phone);
    } catch (error) {
      // A phone that does not read (caller ID of a switchboard, a number misheard) beside an e-mail:
      // the e-mail finds them; only when it does not is the phone asked for again.
      if (!(error instanceof ToolFailure) || !email) throw error;
      client = await api.findClient({ email });
      if (!client) throw error;
    }
    for (const phone of phones) {
      client ??= await api.findClient({ ...(phone && { phone }), ...(email && { email }) });
    }
    if (!client) fail('client_not_found', { by: phones[0] ? 'phone' : 'email' });
    const [upcoming, usual] = await Promise.all([
      api.upcomingBookings(client.id),
      api.clientUsual(client.id),
    ]);
    const [bookings, said, lastWhen] = await Promise.all([
      speakBookings(api, upcoming),
      usual ? speakUsual(api, usual) : undefined,
      lastOfMany(api, upcoming),
    ]);
    return {
      client: await spokenClient(api, client),
      upcoming_bookings: bookings,
      ...(said && { usual: said }),
      // The usual is said when it adds something: not when it is only the booking just read out.
      spoken: `${upcomingSentence(bookings, lastWhen)}${said && Date.parse(usual!.last_starts_at) <= api.now() ? ` ${said.spoken}` : ''}`,
    };
  },
});

export const NewClientInput = z.object({
  first_name: z.string().min(1).max(60),
  last_name: z.string().min(1).max(60),
  ...ContactInput,
});

export const registerClientTool = defineTool({
  name: 'register_client',
  title: 'Register a caller',
  description: `Registers a client (name, phone or e-mail); one on file with that contact is returned (created false). ${CALLER_TEXT_NOTE}`,
  input: { ...NewClientInput.shape, marketing_consent: z.boolean().optional() },
  output: {
    client: SpokenClient,
    created: z.boolean(),
    name_mismatch: z.boolean().describe('The phone or e-mail is on file under another name.'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  callerSupplied: callerTextAt('client', CLIENT_CALLER_TEXT),
  formProblems: (given) => [...contactForms(given, false), ...nameForms(given, false)],
  async run(args, { api }) {
    const { client, created } = await register(api, args, args.marketing_consent);
    const mismatch = !created && !sameName(args, client);
    return {
      client: await spokenClient(api, client),
      created,
      name_mismatch: mismatch,
      ...(mismatch && { hint: nameMismatchHint(args, client) }),
    };
  },
});

/**
 * Registers (or finds) the client described; the contact read forgivingly first, a national number in
 * `country` (the location's the call is about) where there is one.
 */
export async function register(
  api: BookingApi,
  said: z.infer<typeof NewClientInput>,
  marketingConsent?: boolean,
  country?: string | null,
): Promise<{ client: Client; created: boolean }> {
  // Every name registering would refuse, named together (design.md 9.3), not the first alone, and
  // beside them a phone or e-mail that no country reads.
  const names = nameForms(said, false);
  if (names.length > 0) throwAll([...names, ...contactForms(said, false)]);
  const contact = await callerContact(api, said, country);
  if (!contact.phone && !contact.email) {
    throw new BadArgument('phone', 'give a phone number or an e-mail address for the client.');
  }
  return api.registerClient({
    first_name: said.first_name,
    last_name: said.last_name,
    ...contact,
    ...(marketingConsent !== undefined && { marketing_consent: marketingConsent }),
  });
}

/** What names the client of a booking or a waitlist entry: an id on file, or the caller described. */
type ClientArguments = {
  client_id?: string | undefined;
  client?: z.infer<typeof NewClientInput> | undefined;
};

/**
 * The client a booking is for: client_id as given, or the caller described (found by phone or e-mail,
 * or registered). A caller whose phone or e-mail is on file under another name is not booked under
 * that person: ok false, and the agent confirms who is calling.
 */
export async function clientForBooking(
  api: BookingApi,
  args: ClientArguments,
  /** The country of the location booked: a national number is read there. */
  country?: string | null,
): Promise<string> {
  const said = describedCaller(args);
  if (typeof said === 'string') return said;
  const { client, created } = await register(api, said, undefined, country).catch(namedInClient);
  if (!created) requireSameName(said, client);
  return client.id;
}

/**
 * The client a waitlist entry is for: client_id as given, the caller described when on file (found by
 * phone or e-mail, under their name as book requires), or else the new client for the entry to
 * register with itself (POST /waitlist's `client`), so that an entry refused (no offer could reach
 * them) leaves no client behind, nor a second one when they join again with an e-mail.
 */
export async function clientForEntry(
  api: BookingApi,
  args: ClientArguments,
  /** The country of the location waited at: a national number is read there. */
  country?: string | null,
): Promise<{ client_id: string } | { client: NewClient }> {
  const said = describedCaller(args);
  if (typeof said === 'string') return { client_id: said };
  const contact = await callerContact(api, said, country).catch(namedInClient);
  // A name registration would refuse (blank, a line break) is refused before the contact finds
  // someone on file, as register refuses it for book.
  try {
    throwAll(nameForms(said, false));
    newClientDetails({ firstName: said.first_name, lastName: said.last_name, ...contact });
  } catch (error) {
    namedInClient(error);
  }
  const onFile = await api.findClient(contact);
  if (!onFile) return { client: { first_name: said.first_name, last_name: said.last_name, ...contact } };
  requireSameName(said, onFile);
  return { client_id: onFile.id };
}

/**
 * The client_id given (checked, lower case), or the caller described: refused when both are given
 * or neither.
 */
function describedCaller(args: ClientArguments): string | z.infer<typeof NewClientInput> {
  const clientId = args.client_id?.trim() ?? '';
  // Both: which person is meant is not for the tool to guess (booking for the id's client sent the
  // confirmation to them, and dropped the caller described).
  if (clientId !== '' && args.client) {
    throw new BadArgument(
      'client',
      'client_id and client are both given; nothing was done. Give client_id alone for the client lookup_client found, or client alone for a new caller.',
    );
  }
  if (clientId !== '') {
    // A name or a phone number where the id belongs: said so in words, not as REST's "Invalid UUID".
    if (!CLIENT_ID.safeParse(clientId).success) {
      throw new BadArgument(
        'client_id',
        'give the client_id lookup_client or register_client returned (an id like 0b7e4c1a-…), or client with a name and phone or e-mail.',
      );
    }
    return clientId.toLowerCase();
  }
  if (!args.client) {
    // Neither: the agent may not have the caller's name and number yet, so it asks for them.
    throw new BadArgument(
      'client_id',
      'give client_id (from lookup_client) or client with a name and phone or e-mail.',
      [],
      'caller',
    );
  }
  return args.client;
}

/**
 * A caller whose phone or e-mail is on file under another name is not that person: refused, the name
 * on file offered as the one choice (written by whoever registered it, so marked as theirs).
 */
function requireSameName(said: z.infer<typeof NewClientInput>, onFile: Client): void {
  if (sameName(said, onFile)) return;
  fail(
    'name_mismatch',
    { said: fullName(said), onFile: fullName(onFile) },
    { choices: [fullName(onFile)], caller_supplied: ['choices'] },
  );
}

/**
 * A refusal of one of the client's own fields named as the caller sent it, inside `client`
 * ("client.first_name must be 1 to 60 characters."), as other nested argument errors are.
 */
function namedInClient(error: unknown): never {
  const fields = Object.keys(NewClientInput.shape);
  if (error instanceof BadArgument && fields.includes(error.param)) {
    const inClient = (bad: BadArgument) =>
      fields.includes(bad.param)
        ? new BadArgument(
            `client.${bad.param}`,
            bad.named ? `client.${bad.message}` : bad.message,
            [],
            bad.fault,
            bad.named,
          )
        : bad;
    throwAll([error, ...error.more].map(inClient));
  }
  if (isAppError(error) && error.code === 'invalid_request' && error.param && fields.includes(error.param)) {
    const param = `client.${error.param}`;
    const message = error.message.startsWith(`${error.param} `)
      ? `client.${error.message}`
      : `${param}: ${error.message}`;
    throw new AppError(error.code, message, param, error.details);
  }
  throw error;
}

function nameMismatchHint(said: { first_name: string; last_name: string }, onFile: Client): string {
  return failure('name_mismatch', { said: fullName(said), onFile: fullName(onFile) }).hint;
}

/** A name as hints and choices say it: plain, one line (it may be anyone's words). */
function fullName(person: { first_name: string; last_name: string }): string {
  return `${spokenName(person.first_name)} ${spokenName(person.last_name)}`;
}

/**
 * The same person as far as a name can tell: the same last name and a first name that is the same or
 * one the other begins with ("Jo" and "Joanne"), ignoring case, accents and spaces, each forgiving a
 * slip of hearing as staff and service names do ("Marcos Bell" for Marcus Bell: word-similarity.ts).
 */
function sameName(said: { first_name: string; last_name: string }, onFile: Client): boolean {
  const plain = (text: string) =>
    text
      .normalize('NFD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '');
  const [first, last] = [plain(said.first_name), plain(said.last_name)];
  const [fileFirst, fileLast] = [plain(onFile.first_name), plain(onFile.last_name)];
  // A word cut short by a slip's worth of letters ("Moor" for Moore) is a slip too, not a part.
  const slip = (said: string, onFile: string) => {
    const fit = wordFit(said, onFile)?.fit;
    return fit === 'slip' || (fit === 'part' && typos(said, onFile) <= typoBudget([...said].length));
  };
  return (
    (last === fileLast || slip(last, fileLast)) &&
    (first.startsWith(fileFirst) || fileFirst.startsWith(first) || slip(first, fileFirst))
  );
}
