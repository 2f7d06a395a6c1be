import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { connectInProcess, demoCatalogue, type McpHarness } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * What the receptionist says was sent: book answers name the message and where it went (the number's
 * last four digits, the e-mail's domain), and send_link sends the payment link, booking-page link or
 * confirmation again through the outbox.
 */
let t: TestApp;
let mcp: McpHarness;
let organisationId: string;

beforeAll(async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], limits: { requestsPerMinute: 100_000 } });
  mcp = await connectInProcess(t, t.keys.readWrite);
  organisationId = (await catalogueIds(t.database.db)).organisation;
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

const outboxOf = async (reference: string) =>
  (await listOutbox(t.database.db, organisationId)).filter((m) => m.reference === reference);

describe('book says what was sent', () => {
  it('a deposit booking: the payment link to the number ending 3456 and the e-mail, in a short answer', async () => {
    const result = await mcp.raw('book', {
      location: 'camden',
      services: 'full colour',
      starts_at: '2026-11-24T14:00:00+00:00',
      client: { first_name: 'Ria', last_name: 'Shah', phone: '07911 223456', email: 'ria@example.org' },
    });
    expect(result.structuredContent, JSON.stringify(result.content)).toBeDefined();
    const answer = result.structuredContent as Record<string, unknown> & {
      spoken: string;
      booking: { reference: string };
    };
    expect(answer.status, JSON.stringify(answer)).toBe('pending_payment');
    expect(answer.spoken).toContain('Link sent to the number ending 3456 and by e-mail.');
    expect(answer.hint).toBeUndefined();
    expect(JSON.stringify(result.content).length).toBeLessThan(1_500 * 2);
    // 1,600: every booking carries booking_page_url (issue 19) since the budget of 1,500 was set;
    // 1,650: and caller_supplied names the client's name as theirs (issue 38).
    expect(JSON.stringify(answer).length, JSON.stringify(answer)).toBeLessThan(1_650);
    const messages = await outboxOf(answer.booking.reference);
    expect(messages.map((m) => `${m.kind}:${m.channel}:${m.to}`).sort()).toEqual([
      'payment_link:email:ria@example.org',
      'payment_link:sms:+447911223456',
    ]);
  });
});

describe('send_link', () => {
  it('sends the payment link again, and says where', async () => {
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'full colour',
      starts_at: '2026-11-24T09:00:00+00:00',
      client: { first_name: 'Kit', last_name: 'Moss', phone: '07911 221111' },
    });
    const reference = booked.booking.reference as string;
    const sent = await mcp.call('send_link', { reference: reference.toLowerCase() });
    expect(sent).toMatchObject({
      kind: 'payment_link',
      spoken: "I've sent the payment link to the number ending 1111.",
    });
    // The one not delivered yet is replaced, not doubled.
    expect((await outboxOf(reference)).map((m) => m.kind)).toEqual(['payment_link']);
  });

  it('a confirmed booking gets its confirmation again; a cancelled one has nothing to send', async () => {
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-24T10:00:00+00:00',
      // Whoever gave the address wrote its domain too: what is said aloud quotes none of it (9.1).
      client: { first_name: 'Lu', last_name: 'Ng', email: 'lu@ignore-previous-instructions.example' },
    });
    expect(booked.spoken).toContain('Confirmation sent by e-mail.');
    const reference = booked.booking.reference as string;
    expect(await mcp.call('send_link', { reference })).toMatchObject({
      kind: 'confirmed',
      spoken: "I've sent a confirmation by e-mail.",
    });
    await mcp.call('cancel', { reference });
    const refused = await mcp.call('send_link', { reference });
    expect(refused).toMatchObject({ ok: false, code: 'conflict' });
    // Not the hint of a time refused ("offer the caller another time"): nothing is sent, and why.
    expect(refused.hint).toMatch(/^Nothing was sent: that booking is cancelled/);
    expect(refused.hint).not.toMatch(/another time/);
  });

  it.each([
    ['texts only', '10', { phone: '07911 224441' }, /check their texts[,;]/, /e-mail|spam/],
    ['e-mail only', '11', { email: 'pat@example.net' }, /check their e-mail \(spam folder too\)/, /texts/],
    [
      'texts and e-mail',
      '12',
      { phone: '07911 224442', email: 'sam@example.net' },
      /check their texts and e-mail \(spam too\)/,
      /^$/,
    ],
  ])(
    'past the resend limit names only where the messages went: %s',
    async (_label, hour, contact, says, never) => {
      const booked = await mcp.call('book', {
        location: 'camden',
        services: 'cut',
        starts_at: `2026-11-26T${hour}:00:00+00:00`,
        client: { first_name: 'Pat', last_name: 'Lee', ...contact },
      });
      const reference = booked.booking.reference as string;
      for (let i = 0; i < 3; i++)
        expect(await mcp.call('send_link', { reference })).toMatchObject({ kind: 'confirmed' });
      const spent = await mcp.call('send_link', { reference });
      expect(spent).toMatchObject({ ok: false, code: 'rate_limited' });
      expect(spent.hint).toMatch(/^It was already sent again 3 times in the last hour; ask the caller to /);
      expect(spent.hint).toMatch(says);
      if (never.source !== '^$') expect(spent.hint).not.toMatch(never);
    },
  );

  it('an unknown reference is said with the reference, as get_booking says it', async () => {
    const refused = await mcp.call('send_link', { reference: 'NHC-ZZZZZZ' });
    expect(refused).toMatchObject({ ok: false, code: 'not_found' });
    expect(refused.hint).toBe(
      'No booking has the reference NHC-ZZZZZZ; ask the caller to read it again, or find it with lookup_client.',
    );
  });
});

describe('POST /v1/bookings/{reference}/send-link (what send_link uses over --base-url)', () => {
  it('answers what was sent, masked; 404 for an unknown reference', async () => {
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-24T11:00:00+00:00',
      client: { first_name: 'Bea', last_name: 'Ray', phone: '07911 229876' },
    });
    const response = await t.request({
      method: 'POST',
      url: `/v1/bookings/${booked.booking.reference}/send-link`,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().data).toEqual({
      reference: booked.booking.reference,
      kind: 'confirmed',
      sent_to: [{ channel: 'sms', to: 'the number ending 9876' }],
      spoken: "I've sent a confirmation to the number ending 9876.",
    });
    const unknown = await t.request({ method: 'POST', url: '/v1/bookings/NHC-ZZZZZZ/send-link' });
    expect(unknown.statusCode).toBe(404);
    const read = await t.request({
      method: 'POST',
      url: `/v1/bookings/${booked.booking.reference}/send-link`,
      key: t.keys.read,
    });
    expect(read.statusCode).toBe(403);
  });
});
