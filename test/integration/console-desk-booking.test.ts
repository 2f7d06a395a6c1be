import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { type SignedIn, signInToConsole } from '../helpers/console-session.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The desk's Book form (console), as a salon's front desk uses it for a phone caller or a walk-in,
 * through HTTP (inject). The demo catalogue: Islington has Booking Protection (a card saved through
 * the booking page), Ben works there on Mondays and Wednesdays; Monday 23 November 2026, 09:00 in
 * London.
 */
const NOW = '2026-11-23T09:00:00Z';
const PASSWORD = 'correct horse battery';

let t: TestApp;
let ids: CatalogueIds;
afterEach(async () => {
  await t?.close();
});

async function start() {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
  ids = await catalogueIds(t.database.db);
  await createUser(
    t.database.db,
    { organisationSlug: 'northside-hair', email: 'desk@northside.test', role: 'staff', password: PASSWORD },
    t.clock.nowMs(),
  );
  return signInToConsole(t, 'northside-hair', 'desk@northside.test', PASSWORD);
}

describe('booking a caller at a location with Booking Protection', () => {
  it('holds the time and sends the caller the booking page, as the phone agent does', async () => {
    const desk = await start();
    const booked = await desk.post('/console/book', {
      location: 'islington',
      service_id: ids.services.cut!,
      slot: `2026-11-25T10:00:00.000Z|${ids.staff.ben}`,
      first_name: 'Priya',
      last_name: 'Shah',
      phone: '07911 123987',
    });
    expect(booked.statusCode, booked.body).toBe(303);
    const page = (await desk.get(String(booked.headers.location))).body;
    expect(page).toContain('Booking NHC-');
    expect(page).toContain('Awaiting confirmation');
    expect(page).toContain('Send the booking-page link again');
    expect(page).toContain('<td>Booking-page link</td><td>SMS to +447911123987</td>');
    const row = await t.database.db
      .selectFrom('bookings')
      .select(['status', 'source', 'protection_applies'])
      .where('location_id', '=', ids.locations.islington!)
      .where('starts_at', '=', Date.parse('2026-11-25T10:00:00Z'))
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'pending_confirmation', source: 'staff', protection_applies: 1 });
  });

  it('says until when the hold keeps the time, so the desk knows how long the caller has', async () => {
    const desk = await start();
    const booked = await desk.post('/console/book', {
      location: 'islington',
      service_id: ids.services.cut!,
      slot: `2026-11-25T10:00:00.000Z|${ids.staff.ben}`,
      first_name: 'Priya',
      last_name: 'Shah',
      phone: '07911 123987',
    });
    const { hold_expires_at } = await t.database.db
      .selectFrom('bookings')
      .select('hold_expires_at')
      .where('starts_at', '=', Date.parse('2026-11-25T10:00:00Z'))
      .executeTakeFirstOrThrow();
    expect(hold_expires_at).toBeGreaterThan(t.clock.nowMs());
    const until = new Date(Number(hold_expires_at)).toISOString().replace('.000Z', 'Z');
    const page = (await desk.get(String(booked.headers.location))).body;
    expect(page).toContain(`<dt>Held until</dt><dd><time datetime="${until}">`);
  });
});

describe('a series form sent twice (a double click, a reload of its slow answer, a second tab)', () => {
  it('lands on the series booked by the first, booking nothing more, and says so', async () => {
    const desk = await start();
    const form = {
      location: 'camden',
      service_id: ids.services.cut!,
      slot: `2026-11-24T10:00:00.000Z|${ids.staff.amara}`,
      first_name: 'Ria',
      last_name: 'Kumar',
      phone: '07911 123988',
      repeat_every_weeks: '2',
      repeat_count: '3',
    };
    const first = await desk.post('/console/book', form);
    expect(first.statusCode, first.body).toBe(303);
    const again = await desk.post('/console/book', form);
    expect(again.statusCode, again.body).toBe(303);
    expect(again.headers.location).toBe(String(first.headers.location).replace('booked', 'already_booked'));
    const page = (await desk.get(String(again.headers.location))).body;
    expect(page).toContain('Already booked at that time: this is that booking, nothing new was booked.');
    const rows = await t.database.db
      .selectFrom('bookings')
      .select('id')
      .where('staff_id', '=', ids.staff.amara!)
      .execute();
    expect(rows).toHaveLength(3);
  });

  it('still refuses a series whose first time the caller holds as a single visit', async () => {
    const desk = await start();
    const form = {
      location: 'camden',
      service_id: ids.services.cut!,
      slot: `2026-11-24T10:00:00.000Z|${ids.staff.amara}`,
      first_name: 'Ria',
      last_name: 'Kumar',
      phone: '07911 123988',
    };
    expect((await desk.post('/console/book', form)).statusCode).toBe(303);
    const series = await desk.post('/console/book', { ...form, repeat_every_weeks: '2', repeat_count: '3' });
    expect(series.statusCode).toBe(409);
    expect(series.body).toContain('Nothing was booked');
  });
});

describe('the cancel page of a booking that can no longer be cancelled (the back button, a second tab)', () => {
  it('says why, without stating what a cancellation would cost', async () => {
    const desk = await start();
    const booked = await desk.post('/console/book', {
      location: 'camden',
      service_id: ids.services.cut!,
      slot: `2026-11-24T10:00:00.000Z|${ids.staff.amara}`,
      first_name: 'Ria',
      last_name: 'Kumar',
      phone: '07911 123988',
    });
    const reference = /bookings\/([^?]+)/.exec(String(booked.headers.location))![1]!;
    expect((await desk.post(`/console/bookings/${reference}/cancel`, {})).statusCode).toBe(303);
    const page = await desk.get(`/console/bookings/${reference}/cancel`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('This booking cannot be cancelled: the booking is cancelled.');
    expect(page.body).not.toContain('This cancellation is on time.');
    expect(page.body).not.toContain('No fee applies.');
    expect(page.body).not.toContain(`Cancel booking ${reference}?`);
    expect(page.body).toContain('>Back to the booking</a>');
  });
});

describe("an action's button pressed twice (a double click, a reload of its answer, a second tab)", () => {
  it('answers the second as done, since it is, rather than "Not done"', async () => {
    let desk = await start();
    // Full colour carries a £20 deposit: booked at the desk it awaits it.
    const booked = await desk.post('/console/book', {
      location: 'camden',
      service_id: ids.services.colour!,
      slot: `2026-11-23T10:00:00.000Z|${ids.staff.amara}`,
      first_name: 'Ria',
      last_name: 'Kumar',
      phone: '07911 123988',
    });
    const reference = /bookings\/([^?]+)/.exec(String(booked.headers.location))![1]!;
    const paid = `/console/bookings/${reference}?done=deposit_paid`;
    for (let i = 0; i < 2; i += 1) {
      const answer = await desk.post(`/console/bookings/${reference}/action`, { action: 'deposit_paid' });
      expect(answer.statusCode, answer.body).toBe(303);
      expect(answer.headers.location).toBe(paid);
    }
    t.clock.set('2026-11-23T10:30:00Z');
    desk = await signInToConsole(t, 'northside-hair', 'desk@northside.test', PASSWORD);
    for (let i = 0; i < 2; i += 1) {
      const answer = await desk.post(`/console/bookings/${reference}/action`, { action: 'complete' });
      expect(answer.statusCode, answer.body).toBe(303);
      expect(answer.headers.location).toBe(`/console/bookings/${reference}?done=completed`);
    }
    // Another action on it than the one done is still refused, saying why.
    const noShow = await desk.post(`/console/bookings/${reference}/action`, { action: 'no_show' });
    expect(noShow.statusCode).toBe(409);
    expect(noShow.body).toContain('Not done.');
  });
});

describe('the Connectors page of a staff account', () => {
  it('is refused, naming connectors (not API keys), on the page and to a direct POST', async () => {
    const desk = await start();
    const page = await desk.get('/console/connectors');
    expect(page.statusCode).toBe(403);
    expect(page.body).toContain('Only owners and admins manage connected apps.');
    const revoke = await desk.post('/console/connectors/00000000-0000-0000-0000-000000000000/revoke');
    expect(revoke.statusCode).toBe(403);
    expect(revoke.body).toContain('Only owners and admins manage connected apps.');
  });
});

/** The desk's Book form at Camden for a cut: the slot (`<start>|<staff id>`), the name and phone typed. */
function bookAtCamden(desk: SignedIn, slot: string, [first, last]: [string, string], phone: string) {
  return desk.post('/console/book', {
    location: 'camden',
    service_id: ids.services.cut!,
    slot,
    first_name: first,
    last_name: last,
    phone,
  });
}

describe('the client the desk types', () => {
  it('already on file under another name: the booking is theirs, and the page says so', async () => {
    const desk = await start();
    const booked = await bookAtCamden(
      desk,
      `2026-11-24T10:00:00.000Z|${ids.staff.ben}`,
      ['Joanne', 'Smith'],
      '07911 123456',
    );
    expect(booked.statusCode, booked.body).toBe(303);
    expect(String(booked.headers.location)).toMatch(/\?done=booked_client_on_file$/);
    const page = (await desk.get(String(booked.headers.location))).body;
    expect(page).toContain(
      'Booked for the client already on file with that phone or e-mail, under their name on file (below), not the name typed.',
    );
    expect(page).toContain('Jo Bloggs');
    const clients = await t.database.db.selectFrom('clients').select(['first_name', 'last_name']).execute();
    expect(clients).toEqual([{ first_name: 'Jo', last_name: 'Bloggs' }]);

    // The same name as on file, told in other case and spacing: just booked.
    const again = await bookAtCamden(
      desk,
      `2026-11-24T12:00:00.000Z|${ids.staff.ben}`,
      [' jo ', 'BLOGGS'],
      '07911 123456',
    );
    expect(String(again.headers.location)).toMatch(/\?done=booked$/);
  });

  it('a booking refused (the time taken meanwhile) registers no new client, nor tells webhooks of one', async () => {
    const desk = await start();
    const endpoint = await t.request({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      payload: { url: 'https://hooks.example.com/clients', events: ['client.created'] },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const slot = `2026-11-24T10:00:00.000Z|${ids.staff.ben}`;
    const first = await bookAtCamden(desk, slot, ['Ann', 'Other'], '07400 123001');
    expect(first.statusCode, first.body).toBe(303);
    const refused = await bookAtCamden(desk, slot, ['Rosa', 'Parks'], '07400 123002');
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('value="Rosa"');
    const names = await t.database.db
      .selectFrom('clients')
      .select('first_name')
      .orderBy('first_name')
      .execute();
    expect(names.map((c) => c.first_name)).toEqual(['Ann', 'Jo']);
    const created = await t.database.db
      .selectFrom('webhook_events')
      .select('payload')
      .where('type', '=', 'client.created')
      .execute();
    expect(created.map((e) => e.payload).join()).toContain('Ann');
    expect(created.map((e) => e.payload).join()).not.toContain('Rosa');
  });
});
