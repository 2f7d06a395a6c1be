import { z } from 'zod';
import type { BookingApi, Client } from '../booking-api.ts';
import { callerContact } from '../resolution.ts';
import { speakPhone } from '../speech.ts';
import { SpokenBookingSchema, speakBookings } from '../spoken-bookings.ts';
import { BadArgument, fail } from '../tool-kit.ts';
import { defineTool, READ_ONLY } from '../tool-spec.ts';

const SpokenClient = z.object({
  id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  phone: z.string().nullable(),
  phone_spoken: z.string().nullable().describe('The number digit by digit, to read back.'),
  email: z.string().nullable(),
});

const ContactInput = {
  phone: z
    .string()
    .optional()
    .describe('As the caller said it: international (+44...) or national (07911...).'),
  email: z.string().optional(),
};

/** A client as the tools return it, the phone also digit by digit (national where the shop is). */
async function spokenClient(api: BookingApi, client: Client): Promise<z.infer<typeof SpokenClient>> {
  const countries = (await api.listLocations()).map((l) => l.country);
  return {
    id: client.id,
    first_name: client.first_name,
    last_name: client.last_name,
    phone: client.phone,
    phone_spoken: client.phone ? speakPhone(client.phone, countries[0]) : null,
    email: client.email,
  };
}

export const lookupClientTool = defineTool({
  name: 'lookup_client',
  title: 'Look up a caller',
  description:
    'Finds a client by phone (the caller ID works) or e-mail, with their upcoming appointments (soonest first), so a caller can ' +
    'move or cancel one without knowing its reference. ok false with code not_found: nobody on file; register them.',
  input: ContactInput,
  output: { client: SpokenClient, upcoming_bookings: z.array(SpokenBookingSchema) },
  annotations: READ_ONLY,
  async run(args, { api }) {
    if (!args.phone?.trim() && !args.email?.trim())
      throw new BadArgument('phone', 'give a phone number or an e-mail address.');
    const contact = await callerContact(api, args);
    const client = await api.findClient(contact);
    if (!client) fail('client_not_found', { by: contact.phone ? 'phone' : 'email' });
    const upcoming = await api.upcomingBookings(client.id);
    return { client: await spokenClient(api, client), upcoming_bookings: await speakBookings(api, upcoming) };
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
  description:
    'Registers a new client (first and last name, and a phone number or e-mail). If one with that phone or e-mail ' +
    'exists already, that client is returned unchanged (created false): safe to call for anyone.',
  input: { ...NewClientInput.shape, marketing_consent: z.boolean().optional().describe('Default false.') },
  output: { client: SpokenClient, created: z.boolean() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, { api }) {
    const { client, created } = await register(api, args, args.marketing_consent);
    return { client: await spokenClient(api, client), created };
  },
});

/** Registers (or finds) the client described; the contact read forgivingly first. */
export async function register(
  api: BookingApi,
  said: z.infer<typeof NewClientInput>,
  marketingConsent?: boolean,
): Promise<{ client: Client; created: boolean }> {
  const contact = await callerContact(api, said);
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
