import { z } from 'zod';
import {
  maskedRecipient,
  OUTBOX_CHANNELS,
  OUTBOX_KINDS,
  type OutboxNotice,
  sentSentence,
} from '../domain/outbox.ts';

/**
 * What (re)sending a booking's link did (POST /bookings/{reference}/send-link, MCP send_link; an
 * addition to v1): which message, and where it went, said without reading the address out.
 */
export const LinkSentResource = z
  .object({
    reference: z.string(),
    kind: z.enum(OUTBOX_KINDS).describe('payment_link, booking_page_link or confirmed.'),
    sent_to: z
      .array(
        z.object({
          channel: z.enum(OUTBOX_CHANNELS),
          to: z.string().describe('Masked: "the number ending 3456", "your e-mail at example.com".'),
        }),
      )
      .describe('One per channel the client has.'),
    spoken: z.string(),
  })
  .meta({ id: 'LinkSent' });

export type LinkSent = z.infer<typeof LinkSentResource>;

export function presentLinkSent(sent: {
  reference: string;
  kind: OutboxNotice['kind'];
  notices: OutboxNotice[];
}): LinkSent {
  return {
    reference: sent.reference,
    kind: sent.kind,
    sent_to: sent.notices.map((n) => ({ channel: n.channel, to: maskedRecipient(n.channel, n.to) })),
    spoken: sentSentence(sent.notices),
  };
}
