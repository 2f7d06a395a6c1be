import { randomUUID } from 'node:crypto';
import type { CountryCode } from 'libphonenumber-js';
import type { Db } from '../data/database.ts';
import { findLocationById } from '../data/location-repository.ts';
import {
  findMessageById,
  insertMessage,
  listMessagesOf,
  markMessageDoneAt,
  toStaffMessage,
} from '../data/message-repository.ts';
import type { MessagesTable } from '../data/tables.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { AppError } from '../domain/errors.ts';
import { CALLER_NAME_MAX_LENGTH, MESSAGE_MAX_LENGTH, type StaffMessage } from '../domain/message.ts';
import { getBooking } from './booking-service.ts';
import { invalidPhone, normaliseName, normalisePhone } from './contact.ts';
import { requireLocation } from './directory-service.ts';
import { nonPersonalNumber } from './phone-destinations.ts';
import { publishMessageCreated } from './webhooks/events.ts';

/**
 * Messages for staff: a caller who wants something the receptionist cannot do (call me back, tell
 * my stylist ...) leaves a message, which staff list and mark done. A message holds personal data
 * (a name, a phone number, free text): it is stored, shown to staff, and never logged.
 */
export interface NewMessage {
  callerName: string;
  /** International (+...), or national in the country of the message's location. */
  phone?: string | undefined;
  message: string;
  /** A booking the message is about (as a caller says it); it must exist. */
  reference?: string | undefined;
  /** The location the call is about; without one, the booking's (if a reference is given). */
  locationSlug?: string | undefined;
}

export async function takeMessage(
  db: Db,
  organisationId: string,
  input: NewMessage,
  now: number,
): Promise<StaffMessage> {
  const [refused] = messageRefusals(input);
  if (refused) throw refused;
  const callerName = normaliseName(input.callerName, CALLER_NAME_MAX_LENGTH)!;
  const message = normaliseMessage(input.message)!;
  return writeTransaction(db, async (trx) => {
    const booking =
      input.reference === undefined ? undefined : await getBooking(trx, organisationId, input.reference);
    const location =
      input.locationSlug !== undefined
        ? await requireLocation(trx, organisationId, input.locationSlug, 'location_slug')
        : booking && (await findLocationById(trx, organisationId, booking.locationId));
    const row: MessagesTable = {
      id: randomUUID(),
      organisation_id: organisationId,
      location_id: location?.id ?? null,
      caller_name: callerName,
      phone: phoneOf(input.phone, location?.country ?? null),
      message,
      reference: booking?.reference ?? null,
      status: 'open',
      created_at: now,
      done_at: null,
    };
    await insertMessage(trx, row);
    const taken = toStaffMessage({ ...row, location_slug: location?.slug ?? null });
    await publishMessageCreated(trx, organisationId, taken, now);
    return taken;
  });
}

/**
 * The organisation's messages, oldest first; only open or done ones with `status`, and only the
 * `latest` so many of them.
 */
export function listMessages(
  db: Db,
  organisationId: string,
  options: { status?: StaffMessage['status'] | undefined; latest?: number } = {},
): Promise<StaffMessage[]> {
  return listMessagesOf(db, organisationId, options.status, options.latest);
}

/**
 * Marks a message done (again: no change); 404 (param id) for an unknown id, or for another
 * organisation's when `organisationId` scopes it (the console; the operator's CLI passes none).
 */
export async function markMessageDone(
  db: Db,
  messageId: string,
  now: number,
  organisationId?: string,
): Promise<StaffMessage> {
  return writeTransaction(db, async (trx) => {
    const found = await findMessageById(trx, messageId.trim().toLowerCase());
    if (!found || (organisationId !== undefined && found.organisationId !== organisationId)) {
      throw new AppError('not_found', `No message has the id "${messageId}".`, 'id');
    }
    await markMessageDoneAt(trx, found.organisationId, found.id, now);
    return found.status === 'done' ? found : { ...found, status: 'done', doneAt: now };
  });
}

/**
 * The 400s (param caller_name, message) for what takeMessage refuses of a message's caller name and
 * words, each of them: for callers that name every bad field at once (the MCP tools, design.md 9.3).
 */
export function messageRefusals(input: Pick<NewMessage, 'callerName' | 'message'>): AppError[] {
  const refused: AppError[] = [];
  if (normaliseName(input.callerName, CALLER_NAME_MAX_LENGTH) === undefined) {
    refused.push(
      new AppError(
        'invalid_request',
        `caller_name must be 1 to ${CALLER_NAME_MAX_LENGTH} characters, without control characters.`,
        'caller_name',
      ),
    );
  }
  if (normaliseMessage(input.message) === undefined) {
    refused.push(
      new AppError(
        'invalid_request',
        `message must be 1 to ${MESSAGE_MAX_LENGTH} characters (line breaks and tabs are fine, other control characters are not).`,
        'message',
      ),
    );
  }
  return refused;
}

/** The text trimmed, or undefined when empty, too long or holding control characters but \n and \t. */
function normaliseMessage(value: string): string | undefined {
  const trimmed = value.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this rejects.
  const control = /[\u0000-\u0008\u000b-\u001f\u007f]/;
  if (trimmed === '' || [...trimmed].length > MESSAGE_MAX_LENGTH || control.test(trimmed)) return undefined;
  return trimmed;
}

/**
 * E.164, null when none was given, or 400 (param phone); a blank number is not a number, and one that
 * is no person's own (premium-rate, satellite...: design.md 9.1) is refused with what it is, since
 * staff calling it back would pay for it.
 */
function phoneOf(value: string | undefined, country: string | null): string | null {
  if (value === undefined) return null;
  const dialledIn = (country ?? undefined) as CountryCode | undefined;
  const phone = normalisePhone(value, dialledIn);
  if (phone === undefined) {
    throw invalidPhone(value, dialledIn);
  }
  const notPersonal = nonPersonalNumber(phone);
  if (notPersonal !== null) {
    throw new AppError(
      'invalid_request',
      `phone is ${notPersonal}, which staff never call back: give a mobile or landline number.`,
      'phone',
      { notPersonal },
    );
  }
  return phone;
}
