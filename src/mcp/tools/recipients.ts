import { isTextable } from '../../app/phone-destinations.ts';
import { type OutboxChannel, recipientsOf } from '../../domain/outbox.ts';
import type { BookingApi } from '../booking-api.ts';

/**
 * Where a client's messages go, as the outbox writes and sends them: each contact they have, a phone
 * only where the organisation may text it, and only by a channel this server sends by when it has a
 * provider for one (the other's messages are kept as logged and reach nobody). What the API cannot
 * tell (over HTTP) is not held against a contact.
 */
export async function recipientsReached(
  api: BookingApi,
  clientId: string,
): Promise<{ channel: OutboxChannel; to: string }[]> {
  const [client, texted, channels] = await Promise.all([
    api.getClient(clientId),
    api.textedCountries(),
    api.messageChannels(),
  ]);
  return recipientsOf(client).filter(
    (r) =>
      (r.channel !== 'sms' || texted === null || isTextable(r.to, texted)) &&
      (channels === null || channels.size === 0 || channels.has(r.channel)),
  );
}
