import { z } from 'zod';
import { SPOKEN_REFERENCE_MAX_LENGTH } from '../domain/booking/reference.ts';
import { CALLER_NAME_MAX_LENGTH, MESSAGE_MAX_LENGTH, type StaffMessage } from '../domain/message.ts';
import { formatUtc } from '../domain/time-format.ts';
import { omittable, Uuid } from './common.ts';

/**
 * A message for staff that a caller left with the receptionist: what the MCP tool take_message
 * stores, also open to any front end as POST /messages (an addition to the v1 contract).
 */
export const NewMessageBody = z
  .strictObject({
    caller_name: z.string().min(1).max(CALLER_NAME_MAX_LENGTH).describe("The caller's name as given."),
    phone: omittable(z.string().max(40)).describe(
      'A number to call back: international, or national in the country of the location.',
    ),
    message: z.string().min(1).max(MESSAGE_MAX_LENGTH).describe("What to pass on, in the caller's words."),
    reference: omittable(z.string().max(SPOKEN_REFERENCE_MAX_LENGTH)).describe(
      'The booking it is about, if any, as said (NHC-7KQ2MX, or spelled word by word).',
    ),
    location_slug: omittable(z.string()).describe(
      "The location it is about; without one, the booking's, if a reference is given.",
    ),
  })
  .meta({ id: 'NewMessage' });

export const MessageResource = z
  .object({
    id: Uuid,
    caller_name: z.string(),
    phone: z.string().nullable().describe('E.164.'),
    message: z.string(),
    reference: z.string().nullable(),
    location_slug: z.string().nullable(),
    status: z.enum(['open', 'done']),
    created_at: z.string().describe('UTC.'),
  })
  .meta({ id: 'Message' });

export function presentMessage(message: StaffMessage): z.infer<typeof MessageResource> {
  return {
    id: message.id,
    caller_name: message.callerName,
    phone: message.phone,
    message: message.message,
    reference: message.reference,
    location_slug: message.locationSlug,
    status: message.status,
    created_at: formatUtc(message.createdAt),
  };
}
