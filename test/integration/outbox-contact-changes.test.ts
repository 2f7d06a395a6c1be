import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { customerLinks } from '../../src/app/customer-links.ts';
import { deliverAllDue, type OutboxDelivery } from '../../src/app/outbox-delivery.ts';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import type { OutboxMessage } from '../../src/domain/outbox.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A message goes to the client's phone and e-mail as they are when it goes, not as they were when it
 * was written: a reminder written a fortnight ahead, whose client's number was corrected meanwhile
 * (a re-import), goes to the corrected number, and never to the old one, which may be somebody
 * else's now, with the client's name, appointment and the link that cancels it. Likewise a reminder
 * goes as many hours before as the location's policy says when it goes (none once it sends none).
 */
let t: TestApp;
let ids: CatalogueIds;

beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
});
afterAll(async () => {
  await t.close();
});

function delivery(): OutboxDelivery {
  return {
    db: t.database.db,
    clock: t.clock,
    senders: { sms: null, email: null },
    links: customerLinks(localCheckout, 'https://book.example'),
  };
}

async function messagesOf(reference: string): Promise<OutboxMessage[]> {
  return (await listOutbox(t.database.db, ids.organisation)).filter((m) => m.reference === reference);
}

describe("messages follow the client's contact", () => {
  it("a reminder goes to the client's corrected phone and e-mail, not to the old ones a stranger now has", async () => {
    const response = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-24T10:00:00+00:00',
    });
    expect(response.statusCode, response.body).toBe(201);
    const { reference } = response.json().data;
    await deliverAllDue(delivery());

    // Jo's number and address are corrected; Jo's old number is now another client's.
    const catalogue = smallCatalogue();
    catalogue.clients = [
      { ...catalogue.clients[0]!, phone: '+447911123999', email: 'jo.bloggs@example.com' },
      {
        ref: 'sam',
        first_name: 'Sam',
        last_name: 'Other',
        phone: '+447911123456',
        email: 'sam@example.com',
        marketing_consent: false,
      },
    ];
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());

    t.clock.set('2026-11-23T10:00:00Z');
    await deliverAllDue(delivery());
    const reminders = (await messagesOf(reference)).filter((m) => m.kind === 'reminder');
    expect(reminders.map((m) => `${m.channel}:${m.status}:${m.to}`).sort()).toEqual([
      'email:logged:jo.bloggs@example.com',
      'sms:logged:+447911123999',
    ]);
  });

  it('a message for a channel the client no longer has is not sent to the contact they gave up', async () => {
    t.clock.set('2026-11-23T11:00:00Z');
    const response = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-25T12:00:00+00:00',
    });
    expect(response.statusCode, response.body).toBe(201);
    const { reference } = response.json().data;
    await deliverAllDue(delivery());

    // Jo's mobile is taken off file (given up, or somebody else's all along).
    const catalogue = smallCatalogue();
    const { phone: _phone, ...withoutPhone } = catalogue.clients[0]!;
    await importCatalogue(
      t.database.db,
      { ...catalogue, clients: [{ ...withoutPhone, email: 'jo.bloggs@example.com' }] },
      t.clock.nowMs(),
    );

    t.clock.set('2026-11-24T12:00:00Z');
    await deliverAllDue(delivery());
    const reminders = (await messagesOf(reference)).filter((m) => m.kind === 'reminder');
    expect(reminders.map((m) => `${m.channel}:${m.to}`)).toEqual(['email:jo.bloggs@example.com']);
    expect(reminders[0]!.status).toBe('logged');
  });
});

describe("reminders follow the location's reminder policy", () => {
  let app: TestApp;
  afterEach(async () => {
    await app?.close();
  });

  /** A Cut at Soho for Jo on Tuesday 24 November at 10:00 (its reminder due Monday 10:00), then Soho's policy is re-imported. */
  async function bookThenPolicy(policy: Record<string, unknown>): Promise<string> {
    app = await startTestApp();
    const appIds = await catalogueIds(app.database.db);
    const response = await postBooking(app, {
      location_slug: 'soho',
      service_ids: [appIds.services.cut],
      client_id: appIds.jo,
      starts_at: '2026-11-24T10:00:00+00:00',
    });
    expect(response.statusCode, response.body).toBe(201);
    const catalogue = smallCatalogue();
    (catalogue.locations[0] as Record<string, unknown>).policy = policy;
    await importCatalogue(app.database.db, catalogue, app.clock.nowMs());
    return response.json().data.reference;
  }

  async function remindersAt(at: string, reference: string): Promise<string[]> {
    app.clock.set(at);
    await deliverAllDue({ ...delivery(), db: app.database.db, clock: app.clock });
    const appIds = await catalogueIds(app.database.db);
    return (await listOutbox(app.database.db, appIds.organisation))
      .filter((m) => m.reference === reference && m.kind === 'reminder')
      .map((m) => `${m.channel}:${m.status}`)
      .sort();
  }

  it('sends no reminder once the location sends none (reminder_hours_before 0)', async () => {
    const reference = await bookThenPolicy({ reminder_hours_before: 0 });
    expect(await remindersAt('2026-11-23T10:00:00Z', reference)).toEqual([]);
  });

  it('sends the reminder as many hours before as the policy says now, not as it said then', async () => {
    const reference = await bookThenPolicy({ reminder_hours_before: 2 });
    expect(await remindersAt('2026-11-23T10:00:00Z', reference)).toEqual(['email:pending', 'sms:pending']);
    expect(await remindersAt('2026-11-24T08:00:00Z', reference)).toEqual(['email:logged', 'sms:logged']);
  });
});
