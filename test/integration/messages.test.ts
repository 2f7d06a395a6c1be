import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMessages, markMessageDone, takeMessage } from '../../src/app/message-service.ts';
import { postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Messages for staff (MCP take_message): validated and stored by the service layer, listed and marked
 * done with `booking messages`. Two organisations, so that each sees only its own.
 */
let t: TestApp;
let ids: Awaited<ReturnType<typeof idsOf>>;
let otherOrganisation: string;
const now = () => t.clock.nowMs();

beforeAll(async () => {
  t = await startTestApp({
    catalogues: [smallCatalogue(), smallCatalogue({ slug: 'other-hair', prefix: 'OT' })],
    limits: { requestsPerMinute: 100_000 },
  });
  ids = await idsOf('acme-hair');
  otherOrganisation = (await idsOf('other-hair')).organisation;
});
afterAll(async () => {
  await t.close();
});

describe('takeMessage', () => {
  it('stores a message with the phone in E.164 and the booking it is about', async () => {
    const booked = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.cut],
      client_id: ids.jo,
      starts_at: '2026-11-24T10:00:00+00:00',
    });
    expect(booked.statusCode, booked.body).toBe(201);
    const reference = booked.json().data.reference as string;
    const message = await takeMessage(
      t.database.db,
      ids.organisation,
      {
        callerName: '  Jo Bloggs ',
        // National, read in the country of the booking's location (GB).
        phone: '07911 123456',
        message: 'Please call me back about my colour.\nAfter 5 pm is best.',
        reference: reference.toLowerCase().replace('-', ' '),
      },
      now(),
    );
    expect(message).toEqual({
      id: expect.any(String),
      organisationId: ids.organisation,
      locationId: ids.soho,
      locationSlug: 'soho',
      callerName: 'Jo Bloggs',
      phone: '+447911123456',
      message: 'Please call me back about my colour.\nAfter 5 pm is best.',
      reference,
      status: 'open',
      createdAt: now(),
      doneAt: null,
    });
  });

  it('takes a message without phone, reference or location', async () => {
    const message = await takeMessage(
      t.database.db,
      ids.organisation,
      { callerName: 'Sam', message: 'Hi' },
      now(),
    );
    expect(message).toMatchObject({ phone: null, reference: null, locationId: null });
  });

  it.each([
    ['an empty caller name', { callerName: '  ', message: 'Hi' }, 'invalid_request', 'caller_name'],
    [
      'a caller name of 121 characters',
      { callerName: 'x'.repeat(121), message: 'Hi' },
      'invalid_request',
      'caller_name',
    ],
    ['an empty message', { callerName: 'Sam', message: ' \n ' }, 'invalid_request', 'message'],
    [
      'a message over 2000 characters',
      { callerName: 'Sam', message: 'x'.repeat(2001) },
      'invalid_request',
      'message',
    ],
    ['a control character', { callerName: 'Sam', message: 'Hi\u0007' }, 'invalid_request', 'message'],
    ['a phone that is none', { callerName: 'Sam', message: 'Hi', phone: '12' }, 'invalid_request', 'phone'],
    [
      'a national phone with no location to read it in',
      { callerName: 'Sam', message: 'Hi', phone: '07911 123456' },
      'invalid_request',
      'phone',
    ],
    [
      'an unknown reference',
      { callerName: 'Sam', message: 'Hi', reference: 'AC-222222' },
      'not_found',
      'reference',
    ],
    [
      'an unknown location',
      { callerName: 'Sam', message: 'Hi', locationSlug: 'nowhere' },
      'not_found',
      'location_slug',
    ],
    ['a blank phone', { callerName: 'Sam', message: 'Hi', phone: '  ' }, 'invalid_request', 'phone'],
  ])('refuses %s, naming the field', async (_, input, code, param) => {
    await expect(takeMessage(t.database.db, ids.organisation, input, now())).rejects.toMatchObject({
      code,
      param,
    });
  });

  it('accepts exactly 2000 characters, and a national number with the location given', async () => {
    const message = await takeMessage(
      t.database.db,
      ids.organisation,
      { callerName: 'Sam', message: 'é'.repeat(2000), phone: '020 7123 4567', locationSlug: 'soho' },
      now(),
    );
    expect(message).toMatchObject({ phone: '+442071234567', locationId: ids.soho });
  });
});

describe('listMessages and markMessageDone', () => {
  it('lists the organisation’s own messages, oldest first, and marks one done once', async () => {
    const other = await takeMessage(
      t.database.db,
      otherOrganisation,
      { callerName: 'Other', message: 'Elsewhere' },
      now(),
    );
    t.clock.advance({ minutes: 1 });
    const mine = await takeMessage(
      t.database.db,
      ids.organisation,
      { callerName: 'Later', message: 'Newest' },
      now(),
    );
    const list = await listMessages(t.database.db, ids.organisation);
    expect(list.at(-1)).toEqual(mine);
    expect(list.map((m) => m.id)).not.toContain(other.id);
    expect(list.map((m) => m.createdAt)).toEqual([...list.map((m) => m.createdAt)].sort((a, b) => a - b));

    const done = await markMessageDone(t.database.db, mine.id, now() + 1000);
    expect(done).toMatchObject({ status: 'done', doneAt: now() + 1000 });
    expect(await markMessageDone(t.database.db, mine.id, now() + 5000)).toEqual(done);
    expect(
      (await listMessages(t.database.db, ids.organisation, { status: 'open' })).map((m) => m.id),
    ).not.toContain(mine.id);
    expect(
      (await listMessages(t.database.db, ids.organisation, { status: 'done' })).map((m) => m.id),
    ).toEqual([mine.id]);
    await expect(markMessageDone(t.database.db, 'no-such-id', now())).rejects.toMatchObject({
      code: 'not_found',
      param: 'id',
    });
  });
});

describe('booking messages (the command)', () => {
  it('lists as JSON and as text, and marks a message done', async () => {
    const env = { DATABASE_URL: t.database.url };
    const taken = await takeMessage(
      t.database.db,
      otherOrganisation,
      { callerName: 'Ines Cruz', phone: '+447400123456', message: 'Running late\nby ten minutes' },
      Date.parse('2026-11-23T09:30:00.250Z'),
    );
    const json = await runCliAsync(['messages', 'list', '--org', 'other-hair', '--json'], env);
    expect(json.status, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(listed.at(-1)).toEqual({
      id: taken.id,
      caller_name: 'Ines Cruz',
      phone: '+447400123456',
      message: 'Running late\nby ten minutes',
      reference: null,
      status: 'open',
      created_at: '2026-11-23T09:30:00Z',
    });

    const text = await runCliAsync(['messages', 'list', '--org', 'other-hair'], env);
    expect(text.stdout).toContain(`${taken.id}  open  2026-11-23T09:30:00Z  Ines Cruz  +447400123456\n`);
    expect(text.stdout).toContain('    Running late\n    by ten minutes\n');

    const done = await runCliAsync(['messages', 'done', taken.id], env);
    expect(done.status, done.stderr).toBe(0);
    expect(done.stdout).toBe(`Message ${taken.id} is done.\n`);
    const open = await runCliAsync(
      ['messages', 'list', '--org', 'other-hair', '--status', 'open', '--json'],
      env,
    );
    expect(JSON.parse(open.stdout).map((m: { id: string }) => m.id)).not.toContain(taken.id);
    // Nothing personal goes to the logs (stderr) on the way.
    for (const result of [json, text, done, open]) expect(result.stderr).not.toMatch(/Ines|\+4474/);

    const unknown = await runCliAsync(['messages', 'list', '--org', 'nobody'], env);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('No organisation has the slug "nobody".');
    const missing = await runCliAsync(['messages', 'done', 'no-such-id'], env);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('No message has the id "no-such-id".');
  });
});

/** The rows of one organisation's small catalogue the tests name. */
async function idsOf(slug: string) {
  const db = t.database.db;
  const organisation = await db
    .selectFrom('organisations')
    .select('id')
    .where('slug', '=', slug)
    .executeTakeFirstOrThrow();
  const of = (table: 'services' | 'clients' | 'locations', column: 'ref' | 'slug', value: string) =>
    db
      .selectFrom(table)
      .select('id')
      .where('organisation_id', '=', organisation.id)
      .where(column, '=', value)
      .executeTakeFirstOrThrow();
  return {
    organisation: organisation.id,
    soho: (await of('locations', 'slug', 'soho')).id,
    cut: (await of('services', 'ref', 'cut')).id,
    jo: (await of('clients', 'ref', 'jo')).id,
  };
}

describe('POST /v1/messages', () => {
  it('stores a message of the key’s organisation, names the field of a bad one, and needs read_write', async () => {
    const created = await t.request({
      method: 'POST',
      url: '/v1/messages',
      payload: { caller_name: 'Sam', phone: '07911 123456', message: 'Call me back', location_slug: 'soho' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data).toEqual({
      id: expect.any(String),
      caller_name: 'Sam',
      phone: '+447911123456',
      message: 'Call me back',
      reference: null,
      location_slug: 'soho',
      status: 'open',
      created_at: new Date(now()).toISOString().replace('.000Z', 'Z'),
    });
    const listed = await listMessages(t.database.db, ids.organisation);
    expect(listed.map((m) => m.id)).toContain(created.json().data.id);

    const blank = await t.request({
      method: 'POST',
      url: '/v1/messages',
      payload: { caller_name: 'Sam', message: 'Hi', phone: '' },
    });
    expect(blank.statusCode).toBe(400);
    expect(blank.json().error).toMatchObject({ code: 'invalid_request', param: 'phone' });
    const readOnly = await t.request({
      method: 'POST',
      url: '/v1/messages',
      payload: { caller_name: 'Sam', message: 'Hi' },
      key: t.keys.read,
    });
    expect(readOnly.statusCode).toBe(403);
  });

  // design.md 9.1: staff calling back a premium-rate or satellite number would pay for it.
  it('refuses a number that is no person’s own, saying what it is, and stores nothing', async () => {
    const before = (await listMessages(t.database.db, ids.organisation)).length;
    for (const [phone, what] of [
      ['0909 123 4567', 'a premium-rate number'],
      ['+33 8 10 12 34 56', 'a shared-cost number'],
      ['+881 6 1234 5678', 'a satellite or global-service number'],
    ]) {
      const refused = await t.request({
        method: 'POST',
        url: '/v1/messages',
        payload: { caller_name: 'Pat', phone, message: 'Call me back', location_slug: 'soho' },
      });
      expect(refused.statusCode, phone).toBe(400);
      expect(refused.json().error).toEqual({
        code: 'invalid_request',
        message: `phone is ${what}, which staff never call back: give a mobile or landline number.`,
        param: 'phone',
      });
    }
    expect(await listMessages(t.database.db, ids.organisation)).toHaveLength(before);
  });
});
