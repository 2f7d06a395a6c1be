import { randomUUID } from 'node:crypto';
import {
  type ClientRow,
  deleteUnreferencedClient,
  findClientByEmail,
  findClientById,
  findClientByPhone,
  insertClient,
  updateClient,
} from '../data/client-repository.ts';
import type { Db } from '../data/database.ts';
import { clientContactTurns, takeTurn } from '../data/write-locks.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { type Client, NAME_MAX_LENGTH } from '../domain/client.ts';
import { AppError } from '../domain/errors.ts';
import { NOT_IN_A_NAME, VISIBLE } from '../domain/text-rules.ts';
import { invalidPhone, normaliseEmail, normaliseName, normalisePhone } from './contact.ts';
import { nonPersonalNumber } from './phone-destinations.ts';
import { publishClientCreated } from './webhooks/events.ts';

export interface ContactQuery {
  phone?: string | null | undefined;
  email?: string | null | undefined;
}

export interface NewClient extends ContactQuery {
  firstName: string;
  lastName: string;
  marketingConsent?: boolean | undefined;
}

/** The one mapper from a clients row to the domain Client. */
export function toClient(row: ClientRow): Client {
  return {
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
    phone: row.phone,
    email: row.email,
    marketingConsent: row.marketing_consent === 1,
    createdAt: row.created_at,
  };
}

/** Normalises the phone and e-mail of a lookup; 400 naming the field that is not valid. */
function normaliseContact(query: ContactQuery): { phone: string | null; email: string | null } {
  let phone: string | null = null;
  let email: string | null = null;
  if (query.phone != null) {
    phone = normalisePhone(query.phone) ?? null;
    if (!phone) {
      // Said for what it is: a number with no country code, too short, one of Ofcom's drama numbers...
      throw invalidPhone(query.phone);
    }
  }
  if (query.email != null) {
    email = normaliseEmail(query.email) ?? null;
    if (!email) throw new AppError('invalid_request', 'email must be an e-mail address.', 'email');
  }
  if (phone === null && email === null) {
    throw new AppError('invalid_request', 'Give a phone number or an e-mail address (or both).', 'phone');
  }
  return { phone, email };
}

/** The client with this phone, else with this e-mail: the phone wins when both are given. */
async function findMatch(
  db: Db,
  organisationId: string,
  contact: { phone: string | null; email: string | null },
) {
  const byPhone = contact.phone ? await findClientByPhone(db, organisationId, contact.phone) : undefined;
  return byPhone ?? (contact.email ? await findClientByEmail(db, organisationId, contact.email) : undefined);
}

export async function findClient(db: Db, organisationId: string, query: ContactQuery): Promise<Client> {
  const match = await findMatch(db, organisationId, normaliseContact(query));
  if (!match) throw new AppError('not_found', 'No client matches that phone number or e-mail address.');
  return toClient(match);
}

/** The client with this id, or 404. */
export async function getClient(db: Db, organisationId: string, clientId: string): Promise<Client> {
  const row = await findClientById(db, organisationId, clientId);
  if (!row) throw new AppError('not_found', 'No client has this id.', 'client_id');
  return toClient(row);
}

/**
 * Registers a client, or returns the existing one (unchanged) when the phone or e-mail is already on
 * file. The check and the insert share one write transaction, so two simultaneous registrations of
 * one phone make one client.
 */
export async function registerClient(
  db: Db,
  organisationId: string,
  input: NewClient,
  now: number,
): Promise<{ client: Client; created: boolean }> {
  const details = newClientDetails(input);
  return writeTransaction(db, (trx) => findOrRegisterClient(trx, organisationId, details, input, now));
}

/**
 * registerClient's work inside a transaction the caller holds, for a client registered only if what
 * follows in it (a booking) is made too: a refused booking leaves no client, nor a client.created event.
 */
export async function findOrRegisterClient(
  trx: Db,
  organisationId: string,
  details: NewClientDetails,
  input: Pick<NewClient, 'marketingConsent'>,
  now: number,
): Promise<{ client: Client; created: boolean }> {
  const { contact } = details;
  // Simultaneous registrations of one phone or e-mail take turns, so the later ones find the first.
  for (const turn of clientContactTurns(organisationId, contact)) await takeTurn(trx, turn);
  const existing = await findMatch(trx, organisationId, contact);
  if (existing) return { client: toClient(existing), created: false };
  const row = clientRow(organisationId, details, input.marketingConsent ? 1 : 0, 1, now);
  await insertClient(trx, row);
  const client = toClient(row);
  await publishClientCreated(trx, organisationId, client, now);
  return { client, created: true };
}

/** A new client's first and last name and contact, checked and normalised. */
export interface NewClientDetails {
  firstName: string;
  lastName: string;
  contact: { phone: string | null; email: string | null };
}

/** Why a number that is no person's own is refused, and what to give instead, after "is". */
export function notPersonalWords(notPersonal: string): string {
  return `${notPersonal}, which we never send messages to: give a mobile or landline number (or an e-mail address).`;
}

/**
 * The 400 for a name normaliseName refused, said for what is wrong with it: a name of three letters
 * and a line break, or of zero-width spaces, is not "must be 1 to 60 characters".
 */
function refuseName(field: 'first_name' | 'last_name', value: string): never {
  throw nameRefusal(field, value);
}

/**
 * The 400 (param `field`) for a first or last name that normaliseName refuses, or undefined for one it
 * takes: for callers that name every bad field at once (the MCP tools, design.md 9.3).
 */
export function nameRefusal(field: 'first_name' | 'last_name', value: string): AppError | undefined {
  if (normaliseName(value) !== undefined) return undefined;
  const trimmed = value.trim();
  const fits = trimmed !== '' && [...trimmed].length <= NAME_MAX_LENGTH;
  let said = `${field} must be 1 to ${NAME_MAX_LENGTH} characters.`;
  if (fits && NOT_IN_A_NAME.test(trimmed)) {
    said = `${field} holds a control character (a line break, a tab or the like): send the name as one line of text.`;
  } else if (fits && !VISIBLE.test(trimmed)) {
    said = `${field} shows nothing (it holds only zero-width or invisible characters): send the name as written.`;
  }
  return new AppError('invalid_request', said, field);
}

/**
 * A new client's details: 400 naming the field that is not valid, and a phone that is no person's own
 * (premium-rate, satellite...: phone-destinations.ts) refused with what it is, since nothing should
 * ever be sent to it.
 */
export function newClientDetails(input: NewClient): NewClientDetails {
  const firstName = normaliseName(input.firstName) ?? refuseName('first_name', input.firstName);
  const lastName = normaliseName(input.lastName) ?? refuseName('last_name', input.lastName);
  const contact = normaliseContact(input);
  const notPersonal = contact.phone === null ? null : nonPersonalNumber(contact.phone);
  if (notPersonal) {
    throw new AppError('invalid_request', `phone is ${notPersonalWords(notPersonal)}`, 'phone', {
      notPersonal,
    });
  }
  return { firstName, lastName, contact };
}

function clientRow(
  organisationId: string,
  details: NewClientDetails,
  marketingConsent: 0 | 1,
  contactProven: 0 | 1,
  now: number,
): ClientRow {
  return {
    id: randomUUID(),
    organisation_id: organisationId,
    ref: null,
    first_name: details.firstName,
    last_name: details.lastName,
    phone: details.contact.phone,
    email: details.contact.email,
    marketing_consent: marketingConsent,
    created_at: now,
    updated_at: now,
    contact_proven: contactProven,
  };
}

/**
 * Inside the caller's transaction: the client record of a public-page booking, of its own whatever
 * the contact (contact_proven 0: no lookup finds it, and it never takes another client's place).
 */
export async function insertUnprovenClient(
  trx: Db,
  organisationId: string,
  details: NewClientDetails,
  now: number,
): Promise<Client> {
  const row = clientRow(organisationId, details, 0, 0, now);
  await insertClient(trx, row);
  return toClient(row);
}

/**
 * Inside the caller's transaction, once a public booking's customer proved `proven` (their phone or
 * e-mail): the client the booking now belongs to. The client on file with that contact when there is
 * one (its record and name kept; `release` then deletes the unproven record, for the caller to call
 * once the booking no longer points at it, unless something else still does); otherwise the unproven
 * record itself goes on file with the proven contact only: the other one was typed, not proven, and a
 * record on file is what lookups by that contact find.
 */
export async function adoptProvenClient(
  trx: Db,
  organisationId: string,
  unprovenId: string,
  proven: { channel: 'sms' | 'email'; contact: string },
  now: number,
): Promise<{ clientId: string; release: () => Promise<void> }> {
  const contact = {
    phone: proven.channel === 'sms' ? proven.contact : null,
    email: proven.channel === 'email' ? proven.contact : null,
  };
  for (const turn of clientContactTurns(organisationId, contact)) await takeTurn(trx, turn);
  const onFile = await findMatch(trx, organisationId, contact);
  if (onFile) {
    return { clientId: onFile.id, release: () => deleteUnreferencedClient(trx, organisationId, unprovenId) };
  }
  await updateClient(trx, organisationId, unprovenId, { contact_proven: 1, ...contact, updated_at: now });
  // On file from now on: a client integrators hear of (an unproven record is nobody's yet).
  const adopted = await findClientById(trx, organisationId, unprovenId);
  if (adopted) await publishClientCreated(trx, organisationId, toClient(adopted), now);
  return { clientId: unprovenId, release: async () => {} };
}
