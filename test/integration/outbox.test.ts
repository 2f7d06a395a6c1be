import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelBooking, rescheduleBooking } from '../../src/app/booking-changes.ts';
import { payDeposit } from '../../src/app/checkout-service.ts';
import { customerLinks } from '../../src/app/customer-links.ts';
import { expireLapsedHolds } from '../../src/app/hold-sweeper.ts';
import { deliverAllDue, deliverDueMessages, type OutboxDelivery } from '../../src/app/outbox-delivery.ts';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { openDatabase } from '../../src/data/database.ts';
import type { OutboxMessage } from '../../src/domain/outbox.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The outbox's writes: each change a customer should hear about writes its messages in the change's
 * own transaction (one per channel the client has), the reminder follows the booking, and nothing is
 * said for a hold that expired. Delivered here without providers: `logged`, with what was said.
 */
let t: TestApp;
let ids: CatalogueIds;
const changer = () => ({ organisationId: ids.organisation, actor: 'test' });
const HOUR = 3_600_000;

beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
});
afterAll(async () => {
  await t.close();
});

async function book(
  startsAt: string,
  service = 'cut',
): Promise<{ reference: string; paymentUrl: string | null }> {
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services[service]],
    client_id: ids.jo,
    starts_at: startsAt,
  });
  expect(response.statusCode, response.body).toBe(201);
  const data = response.json().data;
  return { reference: data.reference, paymentUrl: data.payment_url };
}

async function messagesOf(reference: string, status?: OutboxMessage['status']): Promise<OutboxMessage[]> {
  return (await listOutbox(t.database.db, ids.organisation, status)).filter((m) => m.reference === reference);
}

const summary = (messages: OutboxMessage[]) =>
  messages.map((m) => `${m.kind}:${m.channel}:${m.status}`).sort();

function delivery(): OutboxDelivery {
  return {
    db: t.database.db,
    clock: t.clock,
    senders: { sms: null, email: null },
    links: customerLinks(localCheckout, 'https://book.example'),
  };
}

describe('messages written with the change', () => {
  it('a confirmed booking: confirmed by SMS and e-mail, and a reminder 24 hours before', async () => {
    // Tuesday 24 November 10:00 London; now is Monday 09:00 UTC.
    const { reference } = await book('2026-11-24T10:00:00+00:00');
    const messages = await messagesOf(reference);
    expect(summary(messages)).toEqual([
      'confirmed:email:pending',
      'confirmed:sms:pending',
      'reminder:email:pending',
      'reminder:sms:pending',
    ]);
    expect(messages.find((m) => m.channel === 'sms')!.to).toBe('+447911123456');
    expect(messages.find((m) => m.channel === 'email')!.to).toBe('jo@example.com');
    const reminders = messages.filter((m) => m.kind === 'reminder');
    expect(reminders.map((m) => m.dueAt)).toEqual([
      Date.parse('2026-11-23T10:00:00Z'),
      Date.parse('2026-11-23T10:00:00Z'),
    ]);
  });

  it('no reminder for a booking made later than reminder_hours_before before its start', async () => {
    const { reference } = await book('2026-11-23T15:00:00+00:00');
    expect(summary(await messagesOf(reference))).toEqual([
      'confirmed:email:pending',
      'confirmed:sms:pending',
    ]);
  });

  it('a refused booking writes nothing', async () => {
    const before = (await listOutbox(t.database.db, ids.organisation)).length;
    const response = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-24T10:00:00+00:00',
    });
    expect(response.statusCode).toBe(409);
    expect((await listOutbox(t.database.db, ids.organisation)).length).toBe(before);
  });

  it('a deposit: the payment link; once paid, confirmed with its reminder and the unsent link dropped', async () => {
    const { reference, paymentUrl } = await book('2026-11-24T12:00:00+00:00', 'colour');
    expect(summary(await messagesOf(reference))).toEqual([
      'payment_link:email:pending',
      'payment_link:sms:pending',
    ]);
    const session = new URL(paymentUrl!).pathname.split('/').pop()!;
    await payDeposit(t.database.db, session, t.clock.nowMs());
    expect(summary(await messagesOf(reference))).toEqual([
      'confirmed:email:pending',
      'confirmed:sms:pending',
      'reminder:email:pending',
      'reminder:sms:pending',
    ]);
  });

  /** A booking's pending messages once it has been moved: each said once, the move included. */
  const MOVED_ONCE = [
    'confirmed:email:pending',
    'confirmed:sms:pending',
    'reminder:email:pending',
    'reminder:sms:pending',
    'rescheduled:email:pending',
    'rescheduled:sms:pending',
  ];

  it('a reschedule moves the reminder; a cancellation drops it', async () => {
    const { reference } = await book('2026-11-24T14:00:00+00:00');
    await rescheduleBooking(
      t.database.db,
      changer(),
      reference,
      { startsAt: Date.parse('2026-11-24T15:00:00Z') },
      t.clock.nowMs(),
    );
    let messages = await messagesOf(reference);
    expect(summary(messages)).toEqual(MOVED_ONCE);
    expect(messages.filter((m) => m.kind === 'reminder').map((m) => m.dueAt)).toEqual([
      Date.parse('2026-11-24T15:00:00Z') - 24 * HOUR,
      Date.parse('2026-11-24T15:00:00Z') - 24 * HOUR,
    ]);
    await cancelBooking(t.database.db, changer(), reference, undefined, t.clock.nowMs());
    messages = await messagesOf(reference);
    // Nothing pending is said any more but the cancellation.
    expect(summary(messages)).toEqual(['cancelled:email:pending', 'cancelled:sms:pending']);
  });

  it('a booking moved again before the first move was sent says it has moved once', async () => {
    const { reference } = await book('2026-11-25T14:00:00+00:00');
    for (const hour of [15, 16]) {
      await rescheduleBooking(
        t.database.db,
        changer(),
        reference,
        { startsAt: Date.parse(`2026-11-25T${hour}:00:00Z`) },
        t.clock.nowMs(),
      );
    }
    // Each message says the booking as it is when it goes: two would say the same move twice.
    expect(summary(await messagesOf(reference))).toEqual(MOVED_ONCE);
  });

  it('an expired hold: its link is dropped and nothing is sent', async () => {
    const { reference } = await book('2026-11-30T10:00:00+00:00', 'colour');
    expect(summary(await messagesOf(reference))).toHaveLength(2);
    t.clock.advance({ minutes: 31 });
    try {
      expect(await expireLapsedHolds(t.database.db, t.clock.nowMs())).toBeGreaterThan(0);
      expect(await messagesOf(reference)).toEqual([]);
    } finally {
      t.clock.advance({ minutes: -31 });
    }
  });
});

describe('delivery without providers', () => {
  it('logs each due message with what it says; the reminder waits for its time', async () => {
    const { reference } = await book('2026-11-24T11:00:00+00:00');
    const counts = await deliverAllDue(delivery());
    expect(counts.logged).toBeGreaterThanOrEqual(2);
    const logged = await messagesOf(reference, 'logged');
    expect(summary(logged)).toEqual(['confirmed:email:logged', 'confirmed:sms:logged']);
    const sms = JSON.parse(logged.find((m) => m.channel === 'sms')!.body!).text as string;
    // It leads back to the booking's own page: a customer who closed the tab needs no phone call.
    expect(sms).toMatch(
      new RegExp(
        // The time names its zone: a customer reading it elsewhere knows which clock it is on.
        '^Org acme-hair: Booked: Cut with Ana on Tuesday 24 November at 11:00 GMT, at Soho\\. ' +
          'See, move or cancel it: https://book\\.example/p/manage/[A-Za-z0-9_-]{43} ' +
          `Ref ${reference}\\. Questions or changes: \\+442071234567$`,
      ),
    );
    const email = JSON.parse(logged.find((m) => m.channel === 'email')!.body!);
    expect(email.subject).toBe(`Org acme-hair: Your booking is confirmed (${reference})`);
    expect(email.text).toContain('Hello Jo,');
    expect(email.text).toContain('Booked: Cut with Ana on Tuesday 24 November at 11:00 GMT, at Soho.');
    expect(email.html).toContain('<p>Hello Jo,</p>');
    expect(summary(await messagesOf(reference, 'pending'))).toEqual([
      'reminder:email:pending',
      'reminder:sms:pending',
    ]);

    // The injected clock reaches the reminder's time (24 h before 11:00 on Tuesday).
    t.clock.set('2026-11-23T11:00:00Z');
    try {
      await deliverAllDue(delivery());
      const reminder = (await messagesOf(reference, 'logged')).find(
        (m) => m.kind === 'reminder' && m.channel === 'sms',
      );
      expect(JSON.parse(reminder!.body!).text).toContain(
        'Reminder: Cut with Ana on Tuesday 24 November at 11:00 GMT,',
      );
    } finally {
      t.clock.set('2026-11-23T09:00:00Z');
    }
  });

  it('the payment link carries the link and the time the hold ends', async () => {
    const { reference, paymentUrl } = await book('2026-12-01T09:00:00+00:00', 'colour');
    await deliverAllDue(delivery());
    const [sms] = (await messagesOf(reference, 'logged')).filter((m) => m.channel === 'sms');
    const session = new URL(paymentUrl!).pathname.split('/').pop();
    expect(JSON.parse(sms!.body!).text).toContain(
      `Pay the deposit (£20.00) by Monday 23 November at 9:30 GMT to confirm: https://book.example/checkout/${session}`,
    );
  });
});

describe('a message that outlived its appointment', () => {
  /** A Cut with Jo at `hour`:00 on Tuesday 8 December, and when it ends. */
  async function bookedAt(hour: number): Promise<{ reference: string; endsAt: string }> {
    const response = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: `2026-12-08T${hour}:00:00+00:00`,
    });
    expect(response.statusCode, response.body).toBe(201);
    return { reference: response.json().data.reference, endsAt: response.json().data.ends_at };
  }

  /** Delivers what is due at `at` (the injected clock), then puts the clock back. */
  async function deliverAt(at: string) {
    t.clock.set(at);
    try {
      return await deliverAllDue(delivery());
    } finally {
      t.clock.set('2026-11-23T09:00:00Z');
    }
  }

  it('a confirmation that could only go once the appointment had ended is dropped, not sent', async () => {
    const { reference, endsAt } = await bookedAt(10);
    // The provider was out until after the appointment: "You're booked for 10:00" at 14:00 helps nobody.
    expect(Date.parse(endsAt)).toBeLessThan(Date.parse('2026-12-08T14:00:00Z'));
    const counts = await deliverAt('2026-12-08T14:00:00Z');
    expect(counts.dropped).toBeGreaterThanOrEqual(4);
    expect(await messagesOf(reference)).toEqual([]);
  });

  it('a move that could only go once the appointment had ended is dropped; so is its confirmation', async () => {
    const { reference } = await bookedAt(12);
    await rescheduleBooking(
      t.database.db,
      changer(),
      reference,
      { startsAt: Date.parse('2026-12-08T13:00:00Z') },
      t.clock.nowMs(),
    );
    await deliverAt('2026-12-08T17:00:00Z');
    expect(await messagesOf(reference)).toEqual([]);
  });

  it('a confirmation still goes while the appointment is under way', async () => {
    const { reference, endsAt } = await bookedAt(15);
    // A booking made at 14:55 for 15:00 whose message goes late: still of use until the very end.
    await deliverAt(new Date(Date.parse(endsAt) - 1).toISOString());
    expect(summary(await messagesOf(reference, 'logged'))).toEqual([
      'confirmed:email:logged',
      'confirmed:sms:logged',
    ]);
  });

  it('a cancellation note goes even once the appointment would have ended', async () => {
    const { reference } = await bookedAt(16);
    await cancelBooking(t.database.db, changer(), reference, undefined, t.clock.nowMs());
    await deliverAt('2026-12-08T20:00:00Z');
    expect(summary(await messagesOf(reference))).toEqual(['cancelled:email:logged', 'cancelled:sms:logged']);
  });
});

describe('what a batch costs the database', () => {
  it('the claim, the facts of its bookings, the outcomes known together in one write; no BEGIN or COMMIT on PostgreSQL', async () => {
    await deliverAllDue(delivery());
    const references: string[] = [];
    for (const start of ['12:00', '13:00', '14:00'])
      references.push((await book(`2026-12-01T${start}:00+00:00`)).reference);
    const statements: string[] = [];
    const counted = openDatabase(t.database.url, {
      onQuery: (sql) => statements.push(sql.trim().toLowerCase()),
    });
    try {
      const counts = await deliverDueMessages({ ...delivery(), db: counted.db });
      expect(counts).toEqual({ sent: 0, logged: 6, retried: 0, failed: 0, dropped: 0 });
    } finally {
      await counted.close();
    }
    for (const reference of references) {
      const logged = await messagesOf(reference, 'logged');
      expect(summary(logged)).toEqual(['confirmed:email:logged', 'confirmed:sms:logged']);
      // Each with its own words.
      for (const message of logged) expect(message.body).toContain(reference);
    }
    const transactionControl = /^(begin|commit|savepoint|release|rollback)\b/;
    const work = statements.filter((s) => !transactionControl.test(s));
    // The claim (one UPDATE), the bookings and their services (no payment link: no checkouts; one
    // statement on PostgreSQL), the countries the organisation texts (its policies, its locations:
    // read once per catalogue version and database handle, this one new), and the outcomes: logged at
    // once, all known in the same turn, so one write.
    expect(work.filter((s) => s.startsWith('update "outbox" set "claimed_by"'))).toHaveLength(1);
    expect(work.filter((s) => s.startsWith('select'))).toHaveLength(onPostgres ? 3 : 4);
    if (onPostgres) {
      // One statement updating the six rows by their keys, each with its own values, and nothing
      // else: single statements are atomic without BEGIN and COMMIT.
      const outcomes = work.filter((s) => s.startsWith('with m0 as (update outbox set'));
      expect(outcomes).toHaveLength(1);
      expect(outcomes[0]!.match(/\bupdate outbox set\b/g)).toHaveLength(6);
      expect(statements).toHaveLength(5);
    } else {
      // One transaction (group commit's), an UPDATE per row.
      expect(work.filter((s) => s.startsWith('update "outbox" set "status"'))).toHaveLength(6);
      expect(statements.filter((s) => s.startsWith('begin'))).toHaveLength(2);
    }
  });
});

describe("a time's zone in the organisation's language", () => {
  /** The SMS and e-mail confirming a Cut booked at `startsAt` at Soho, for an organisation in `locale`. */
  async function confirmationTexts(locale: string, startsAt: string, timezone?: string) {
    const catalogue = smallCatalogue();
    catalogue.organisation.locale = locale;
    if (timezone) catalogue.locations[0]!.timezone = timezone;
    const app = await startTestApp({ catalogues: [catalogue] });
    try {
      const own = await catalogueIds(app.database.db);
      const response = await postBooking(app, {
        location_slug: 'soho',
        service_ids: [own.services.cut],
        client_id: own.jo,
        starts_at: startsAt,
      });
      expect(response.statusCode, response.body).toBe(201);
      const reference = response.json().data.reference as string;
      await deliverAllDue({ ...delivery(), db: app.database.db, clock: app.clock });
      const logged = (await listOutbox(app.database.db, own.organisation, 'logged')).filter(
        (m) => m.reference === reference,
      );
      const text = (channel: string) =>
        JSON.parse(logged.find((m) => m.channel === channel)!.body!).text as string;
      return [text('sms'), text('email')];
    } finally {
      await app.close();
    }
  }

  it('names the place of a London salon in French and German words, not by its English name', async () => {
    for (const [locale, said] of [
      // No abbreviation for London's clock in either ("UTC+0", "GMT+0"): its place, as ICU names it.
      ['fr-FR', 'le mardi 24 novembre à 11:00 (heure : Royaume-Uni), à Soho.'],
      ['de-DE', 'am Dienstag, 24. November um 11:00 (Ortszeit Vereinigtes Königreich), in Soho.'],
    ] as const) {
      for (const text of await confirmationTexts(locale, '2026-11-24T11:00:00+00:00')) {
        expect(text).toContain(said);
        expect(text).not.toMatch(/heure de London|Ortszeit London/);
      }
    }
  });

  it('names the clock of a Spanish organisation’s New York salon in Spanish, as its date is', async () => {
    // es-ES has no letters for New York's clock ("GMT-5"): its place, in ICU's Spanish words.
    for (const text of await confirmationTexts('es-ES', '2026-11-24T11:00:00-05:00', 'America/New_York')) {
      expect(text).toContain('martes, 24 de noviembre, 11:00 (hora de Nueva York), at Soho.');
      expect(text).not.toContain('New York time');
    }
  });
});
