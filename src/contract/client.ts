import { z } from 'zod';
import type { Client } from '../domain/client.ts';
import { formatUtc } from '../domain/time-format.ts';
import { Uuid } from './common.ts';

export const ClientResource = z
  .object({
    id: Uuid,
    first_name: z.string(),
    last_name: z.string(),
    phone: z.string().nullable().describe('E.164.'),
    email: z.string().nullable(),
    marketing_consent: z.boolean(),
    created_at: z.string().describe('UTC, RFC 3339.'),
  })
  .meta({ id: 'Client' });

export const ClientQuery = z.strictObject({
  phone: z.string().max(40).optional().describe('E.164 with country code, e.g. +447911123456.'),
  email: z.string().max(254).optional(),
});

export const ClientIdParams = z.strictObject({ client_id: z.uuid().describe('The client id.') });

export const NewClientBody = z
  .strictObject({
    first_name: z.string().min(1).max(200).describe('1 to 60 characters.'),
    last_name: z.string().min(1).max(200).describe('1 to 60 characters.'),
    phone: z.string().max(40).nullable().optional().describe('E.164; phone or email is required.'),
    email: z.string().max(254).nullable().optional().describe('phone or email is required.'),
    marketing_consent: z.boolean().optional().describe('Default false.'),
  })
  .meta({ id: 'NewClient' });

export function presentClient(client: Client): z.infer<typeof ClientResource> {
  return {
    id: client.id,
    first_name: client.firstName,
    last_name: client.lastName,
    phone: client.phone,
    email: client.email,
    marketing_consent: client.marketingConsent,
    created_at: formatUtc(client.createdAt),
  };
}
