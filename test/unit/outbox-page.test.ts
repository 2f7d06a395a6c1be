import { expect, it } from 'vitest';
import type { OutboxMessage } from '../../src/domain/outbox.ts';
import { messagesTable } from '../../src/http/console/outbox-page.ts';
import { formats } from '../../src/http/console/page.ts';

/**
 * The console's list of messages says why one waiting for a retry failed its last try (a provider
 * refusing its credentials: docs/messages.md asks operators to mend them within the hour), as it says
 * why a failed one failed.
 */
const NOW = Date.parse('2026-11-23T09:00:00Z');
const message = (changes: Partial<OutboxMessage>): OutboxMessage => ({
  id: '00000000-0000-7000-8000-000000000001',
  organisationId: 'org',
  bookingId: 'booking',
  reference: 'AC-ABC234',
  channel: 'sms',
  to: '+447911123456',
  kind: 'confirmed',
  status: 'pending',
  attempts: 0,
  dueAt: NOW + 30_000,
  lastError: null,
  body: null,
  createdAt: NOW - 60_000,
  sentAt: null,
  ...changes,
});

it('says why the last try of a message waiting for its retry failed, and nothing of one never tried', () => {
  const f = formats('en-GB', 'Europe/London');
  const retrying = messagesTable(
    [message({ attempts: 1, lastError: 'Twilio HTTP 401: the credentials were refused <mend them>' })],
    f,
    NOW,
    { withBooking: true },
  );
  expect(retrying).toContain('(last try: Twilio HTTP 401: the credentials were refused &lt;mend them&gt;)');
  const waiting = messagesTable([message({})], f, NOW, { withBooking: true });
  expect(waiting).not.toContain('last try');
});
