import { afterEach, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { connectInProcess, demoCatalogue } from '../helpers/mcp-harness.ts';
import {
  bookOnPage,
  deliver,
  deliveredCode,
  messagesOf,
  pagePathOf,
  pagePost,
  referenceOnPage,
} from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Messages go only where they may (design.md 9.1): no text to a premium-rate, shared-cost, satellite
 * or other number that is no person's own (refused where it is typed: REST, MCP, the public page; and
 * never sent, whatever holds it), texts only to the countries the organisation texts (its locations',
 * and `policies.sms_countries`), and a booking's link or code sent again at most three times an hour.
 * The demo catalogue (a London salon); Monday 23 November 2026, 09:00 in London.
 */
const NOW = '2026-11-23T09:00:00Z';
const ORG = 'northside-hair';

/** Numbers from the report: UK premium rate, a satellite phone, Latvian premium rate; and others. */
const NOT_PERSONAL = [
  ['+449098790879', 'premium-rate'],
  ['+881631700001', 'satellite'],
  ['+37190000001', 'premium-rate'],
  ['+448001234567', 'freephone'],
  ['+447012345678', 'call-forwarding'],
  ['+443001234567', 'company'],
] as const;

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function start(catalogue: unknown = demoCatalogue()) {
  t = await startTestApp({ catalogues: [catalogue], now: NOW });
}

/** A cut at Camden for Jo, the client on file, through REST. */
async function bookForJo() {
  const ids = await catalogueIds(t.database.db);
  return t.request({
    method: 'POST',
    url: '/v1/bookings',
    payload: {
      location_slug: 'camden',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-25T14:00:00+00:00',
    },
  });
}

describe('numbers that are no person’s own', () => {
  it.each(NOT_PERSONAL)('REST POST /v1/clients refuses %s (%s) naming phone', async (phone, kind) => {
    await start();
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Ann', last_name: 'Lee', phone },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param: 'phone' });
    expect(response.json().error.message).toContain(kind);
    expect(response.json().error.message).not.toContain(phone);
  });

  it('MCP register_client and book refuse them with a hint, and nothing is written', async () => {
    await start();
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const registered = await mcp.raw('register_client', {
        first_name: 'Ann',
        last_name: 'Lee',
        phone: '+449098790879',
      });
      expect(JSON.stringify(registered.content)).toMatch(/premium-rate/);
      const booked = await mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: 'Wednesday 25 November at 2 pm',
        client: { first_name: 'Ann', last_name: 'Lee', phone: '+881631700001' },
      });
      expect(JSON.stringify(booked.content)).toMatch(/satellite/);
    } finally {
      await mcp.close();
    }
    const clients = await t.database.db.selectFrom('clients').select('phone').execute();
    expect(clients.map((c) => c.phone)).toEqual(['+447911123456']);
  });

  it('the public page refuses them with the reason, and books nothing', async () => {
    await start();
    for (const [phone, kind] of NOT_PERSONAL) {
      const response = await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: '2026-11-25T14:00:00Z',
        phone,
      });
      expect(response.statusCode).toBe(400);
      expect(response.body).toContain(kind);
    }
    expect(await t.database.db.selectFrom('bookings').select('id').execute()).toEqual([]);
  });

  it('a number already on file that is not a person’s own is never texted: nothing is written for it', async () => {
    const catalogue = demoCatalogue() as { clients: { phone: string }[] };
    catalogue.clients[0]!.phone = '+449098790879';
    await start(catalogue);
    const booked = await bookForJo();
    expect(booked.statusCode, booked.body).toBe(201);
    await deliver(t);
    const messages = await messagesOf(t, booked.json().data.reference);
    expect(messages.map((m) => `${m.kind}:${m.channel}:${m.status}`).sort()).toEqual([
      'confirmed:email:logged',
      'reminder:email:pending',
    ]);
  });

  it('a text written while its country was texted fails at delivery once it no longer is, saying why', async () => {
    const catalogue = demoCatalogue() as {
      clients: { phone: string }[];
      policies?: Record<string, unknown>;
    };
    catalogue.clients[0]!.phone = '+33612345678';
    catalogue.policies = { sms_countries: ['FR'] };
    await start(catalogue);
    const booked = await bookForJo();
    await deliver(t);
    // The salon stops texting France before the reminder is due.
    delete catalogue.policies;
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    t.clock.advance({ hours: 30 });
    await deliver(t);
    const sms = (await messagesOf(t, booked.json().data.reference)).filter((m) => m.channel === 'sms');
    expect(sms.map((m) => `${m.kind}:${m.status}`).sort()).toEqual(['confirmed:logged', 'reminder:failed']);
    expect(sms.find((m) => m.kind === 'reminder')!.lastError).toMatch(/^Not sent: texts go only/);
  });
});

describe('channels with a provider', () => {
  it('asks for a contact a provider can reach, and sends the code there, never where nothing is sent', async () => {
    // SMS only (TWILIO_*, no SMTP_URL): an e-mail would never receive its code.
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW, messageProviders: new Set(['sms']) });
    const booking = { location: 'camden', service: 'cut', startsAt: '2026-11-25T14:00:00Z' };
    const byEmail = await bookOnPage(t, ORG, { ...booking, email: 'amelie@example.fr' });
    expect(byEmail.statusCode).toBe(400);
    expect(byEmail.body).toContain('We send messages by text only, to numbers in the United Kingdom');
    const both = pagePathOf(
      await bookOnPage(t, ORG, { ...booking, phone: '07400 123456', email: 'amelie@example.fr' }),
    );
    expect((await deliveredCode(t, await referenceOnPage(t, both))).message).toMatchObject({
      channel: 'sms',
      to: '+447400123456',
    });
    await t.close();
    // E-mail only: the code goes to the e-mail, though the phone could be texted.
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW, messageProviders: new Set(['email']) });
    const byPhone = await bookOnPage(t, ORG, { ...booking, phone: '07400 123456' });
    expect(byPhone.statusCode).toBe(400);
    expect(byPhone.body).toContain('We send messages by e-mail only: give an e-mail address');
    const mailed = pagePathOf(
      await bookOnPage(t, ORG, { ...booking, phone: '07400 123456', email: 'amelie@example.fr' }),
    );
    expect((await deliveredCode(t, await referenceOnPage(t, mailed))).message).toMatchObject({
      channel: 'email',
      to: 'amelie@example.fr',
    });
  });
});

describe('countries texted', () => {
  it('the page asks a caller with a number abroad for an e-mail, and sends the code there', async () => {
    await start();
    const abroad = await bookOnPage(t, ORG, {
      location: 'camden',
      service: 'cut',
      startsAt: '2026-11-25T14:00:00Z',
      phone: '+33 6 12 34 56 78',
    });
    expect(abroad.statusCode).toBe(400);
    expect(abroad.body).toContain('We can only send texts to numbers in the United Kingdom');
    const path = pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: '2026-11-25T14:00:00Z',
        phone: '+33 6 12 34 56 78',
        email: 'amelie@example.fr',
      }),
    );
    const reference = await referenceOnPage(t, path);
    const { message, code } = await deliveredCode(t, reference);
    expect(message).toMatchObject({ channel: 'email', to: 'amelie@example.fr' });
    expect((await pagePost(t, `${path}/verify`, { code })).statusCode).toBe(303);
    // Confirmed: the e-mail carries the news; the French mobile is not texted.
    await deliver(t);
    expect((await messagesOf(t, reference)).filter((m) => m.channel === 'sms')).toEqual([]);
  });

  it('a client with a number abroad is booked by MCP, told by e-mail only, and the answer says so', async () => {
    await start();
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const booked = await mcp.call('book', {
        location: 'camden',
        services: 'cut',
        starts_at: 'Wednesday 25 November at 2 pm',
        client: {
          first_name: 'Amélie',
          last_name: 'Roux',
          phone: '+33612345678',
          email: 'amelie@example.fr',
        },
      });
      expect(booked).toMatchObject({ ok: true, status: 'confirmed' });
      expect(booked.spoken).toMatch(/by e-mail/);
      expect(booked.spoken).not.toMatch(/number ending/);
      const messages = await messagesOf(t, booked.booking.reference);
      expect(messages.every((m) => m.channel === 'email')).toBe(true);
    } finally {
      await mcp.close();
    }
  });

  it('MCP book, with e-mail alone set up, says the confirmation went by e-mail, not to the phone', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW, messageProviders: new Set(['email']) });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const booked = await mcp.call('book', {
        location: 'camden',
        services: 'cut',
        starts_at: 'Wednesday 25 November at 2 pm',
        client: { first_name: 'Amy', last_name: 'Stone', phone: '07400 123456', email: 'amy@example.com' },
      });
      expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true, status: 'confirmed' });
      expect(booked.spoken).toMatch(/e-mail/);
      expect(booked.spoken).not.toMatch(/number ending/);
    } finally {
      await mcp.close();
    }
  });

  it('send_link for a client reached only by a number abroad says why nothing can be sent', async () => {
    const catalogue = demoCatalogue() as { clients: Record<string, unknown>[] };
    catalogue.clients[0]!.phone = '+33612345678';
    delete catalogue.clients[0]!.email;
    await start(catalogue);
    const reference = (await bookForJo()).json().data.reference as string;
    const link = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/send-link` });
    expect(link.statusCode).toBe(409);
    const { message } = link.json().error;
    expect(message).not.toContain('neither a phone number');
    expect(message).toContain('not one we send texts to');
    expect(message).not.toContain('+33612345678');
  });

  it('policies.sms_countries adds countries: the code goes by text to a French mobile', async () => {
    const catalogue = demoCatalogue() as Record<string, unknown>;
    catalogue.policies = { sms_countries: ['FR'] };
    await start(catalogue);
    const path = pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: '2026-11-25T14:00:00Z',
        phone: '+33 6 12 34 56 78',
      }),
    );
    const { message } = await deliveredCode(t, await referenceOnPage(t, path));
    expect(message).toMatchObject({ channel: 'sms', to: '+33612345678', status: 'logged' });
  });
});

describe('sending again', () => {
  it('send_link (REST and MCP) and the console share three sends an hour per booking', async () => {
    await start();
    const _ids = await catalogueIds(t.database.db);
    const booked = await bookForJo();
    const reference = booked.json().data.reference as string;
    const sendAgain = () => t.request({ method: 'POST', url: `/v1/bookings/${reference}/send-link` });
    expect((await sendAgain()).statusCode).toBe(200);
    expect((await sendAgain()).statusCode).toBe(200);
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      expect(await mcp.call('send_link', { reference })).toMatchObject({ ok: true });
      const fourth = await mcp.call('send_link', { reference });
      expect(fourth).toMatchObject({ ok: false, code: 'rate_limited' });
      expect(fourth.hint).toMatch(
        /^It was already sent again 3 times in the last hour; ask the caller to check/,
      );
    } finally {
      await mcp.close();
    }
    const refused = await sendAgain();
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBe(60 * 60);
    t.clock.advance({ hours: 1 });
    expect((await sendAgain()).statusCode).toBe(200);
  });

  it('says sent only by the channels this server sends by: e-mail alone set up, a text is not said sent', async () => {
    const catalogue = demoCatalogue() as { clients: Record<string, unknown>[] };
    t = await startTestApp({ catalogues: [catalogue], now: NOW, messageProviders: new Set(['email']) });
    const reference = (await bookForJo()).json().data.reference as string;
    const sent = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/send-link` });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json().data.sent_to.map((r: { channel: string }) => r.channel)).toEqual(['email']);
    expect(sent.json().data.spoken).not.toMatch(/number ending/);
    // A client with a phone only: nothing of this server reaches them, said as such, nothing written.
    delete catalogue.clients[0]!.email;
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    const before = (await messagesOf(t, reference)).length;
    const refused = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/send-link` });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.message).toBe(
      'This server sends e-mails only, and the client has no e-mail address.',
    );
    expect(await messagesOf(t, reference)).toHaveLength(before);
  });

  it('counts the last hour, not the clock’s: three sends just before the hour leave none just after it', async () => {
    await start();
    const reference = (await bookForJo()).json().data.reference as string;
    const sendAgain = () => t.request({ method: 'POST', url: `/v1/bookings/${reference}/send-link` });
    t.clock.advance({ minutes: 59, seconds: 30 }); // 09:59:30
    for (let i = 0; i < 3; i++) expect((await sendAgain()).statusCode).toBe(200);
    t.clock.advance({ minutes: 1 }); // 10:00:30, a new clock hour
    const refused = await sendAgain();
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toContain('3 times in the last hour');
    // Free when the sends of 09:59 leave the hour, at 10:59.
    expect(Number(refused.headers['retry-after'])).toBe(58 * 60 + 30);
    t.clock.advance({ minutes: 58 }); // 10:58:30
    expect((await sendAgain()).statusCode).toBe(429);
    t.clock.advance({ seconds: 30 }); // 10:59
    expect((await sendAgain()).statusCode).toBe(200);
    expect((await sendAgain()).statusCode).toBe(200);
    expect((await sendAgain()).statusCode).toBe(200);
    expect((await sendAgain()).statusCode).toBe(429);
  });

  it('a public booking waiting for its code is not sent a link; its page sends the code again, three times an hour', async () => {
    await start();
    const path = pagePathOf(
      await bookOnPage(t, ORG, {
        location: 'camden',
        service: 'cut',
        startsAt: '2026-11-25T14:00:00Z',
        phone: '07400 123456',
      }),
    );
    const reference = await referenceOnPage(t, path);
    const link = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/send-link` });
    expect(link.statusCode).toBe(409);
    expect(link.json().error.message).toContain('waits for the customer to confirm it');
    for (let i = 0; i < 3; i++) expect((await pagePost(t, `${path}/resend`)).statusCode).toBe(303);
    const fourth = await pagePost(t, `${path}/resend`);
    expect(fourth.statusCode).toBe(429);
    expect(fourth.headers['retry-after']).toBeDefined();
    // Only the latest code is waiting to go: each new one replaced the one before.
    const pending = (await messagesOf(t, reference)).filter((m) => m.status === 'pending');
    expect(pending.map((m) => m.kind)).toEqual(['verification_code']);
  });
});
