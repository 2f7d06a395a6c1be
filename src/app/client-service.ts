import { randomUUID } from 'node:crypto';
import {
  type ClientRow,
  findClientByEmail,
  findClientById,
  findClientByPhone,
  insertClient,
} from '../data/client-repository.ts';
import type { Db } from '../data/database.ts';
import { clientContactTurns, takeTurn } from '../data/write-locks.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import type { Client } from '../domain/client.ts';
import { AppError } from '../domain/errors.ts';
import { normaliseEmail, normaliseName, normalisePhone } from './contact.ts';

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
function toClient(row: ClientRow): Client {
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
      throw new AppError(
        'invalid_request',
        'phone must be an E.164 number with its country code, e.g. +447911123456.',
        'phone',
      );
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
  const firstName = normaliseName(input.firstName);
  if (!firstName)
    throw new AppError('invalid_request', 'first_name must be 1 to 60 characters.', 'first_name');
  const lastName = normaliseName(input.lastName);
  if (!lastName) throw new AppError('invalid_request', 'last_name must be 1 to 60 characters.', 'last_name');
  const contact = normaliseContact(input);
  return writeTransaction(db, async (trx) => {
    // Simultaneous registrations of one phone or e-mail take turns, so the later ones find the first.
    for (const turn of clientContactTurns(organisationId, contact)) await takeTurn(trx, turn);
    const existing = await findMatch(trx, organisationId, contact);
    if (existing) return { client: toClient(existing), created: false };
    const row: ClientRow = {
      id: randomUUID(),
      organisation_id: organisationId,
      ref: null,
      first_name: firstName,
      last_name: lastName,
      phone: contact.phone,
      email: contact.email,
      marketing_consent: input.marketingConsent ? 1 : 0,
      created_at: now,
      updated_at: now,
    };
    await insertClient(trx, row);
    return { client: toClient(row), created: true };
  });
}
