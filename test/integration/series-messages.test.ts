import { afterEach, describe, expect, it } from 'vitest';
import { listOutbox } from '../../src/app/outbox-service.ts';
import type { OutboxMessage } from '../../src/domain/outbox.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { deliver } from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookAna } from '../helpers/waitlist-fixtures.ts';

/**
 * What the customer of a series hears (design.md 8.3, 9.5): one message for a change, however many
 * visits it takes along, saying what became of them; each visit keeps its own reminder. On the small
 * catalogue: Ana does Cuts at Soho, London, on Mondays and Tuesdays; Jo has a phone and an e-mail.
 * The clock stands on Monday 1 March 2027; the clocks go forward on Sunday 28 March.
 */
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const json = (response: { body: string }) => JSON.parse(response.body);

async function bookSeries(
  startsAt: string,
  repeat: { every_weeks: number; count: number },
  service: 'cut' | 'colour' = 'cut',
  stylist: 'ana' | 'anyone' = 'ana',
) {
  const ids = await catalogueIds(t.database.db);
  const booked = await t.request({
    method: 'POST',
    url: '/v1/bookings',
    payload: {
      location_slug: 'soho',
      service_ids: [ids.services[service]],
      ...(stylist === 'ana' && { staff_id: ids.staff.ana }),
      client_id: ids.jo,
      starts_at: startsAt,
      repeat,
    },
  });
  expect(booked.statusCode, booked.body).toBe(201);
  return (json(booked).data.series.occurrences as { reference: string }[]).map((o) => o.reference);
}

async function outbox(): Promise<OutboxMessage[]> {
  return listOutbox(t.database.db, (await catalogueIds(t.database.db)).organisation);
}

/** What was said, per channel, in the delivered messages of this kind (of any visit). */
async function said(
  kind: OutboxMessage['kind'],
): Promise<{ reference: string; sms?: string; email?: string }[]> {
  await deliver(t);
  const words = new Map<string, { reference: string; sms?: string; email?: string }>();
  for (const m of (await outbox()).filter((m) => m.kind === kind && m.status === 'logged')) {
    const entry = words.get(m.reference) ?? { reference: m.reference };
    const body = JSON.parse(m.body!) as { text: string };
    if (m.channel === 'sms') entry.sms = body.text;
    else entry.email = body.text;
    words.set(m.reference, entry);
  }
  return [...words.values()];
}

/** Moves a visit (with scope following: it and the later ones), as REST's PATCH does. */
async function move(reference: string, startsAt: string, scope: 'one' | 'following' = 'one') {
  const moved = await t.request({
    method: 'PATCH',
    url: `/v1/bookings/${reference}`,
    payload: { starts_at: startsAt, scope },
  });
  expect(moved.statusCode, moved.body).toBe(200);
}

const pendingReminders = async (reference: string) =>
  (await outbox()).filter(
    (m) => m.kind === 'reminder' && m.status === 'pending' && m.reference === reference,
  );

describe('the messages of a series', () => {
  it('confirms a new series once, naming how many visits follow, how often and the last one', async () => {
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const refs = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 2, count: 3 });
    const confirmations = await said('confirmed');
    expect(confirmations.map((c) => c.reference)).toEqual([refs[0]]);
    for (const text of [confirmations[0]!.sms!, confirmations[0]!.email!]) {
      expect(text).toContain('Tuesday 16 March at 10:00 GMT');
      expect(text).toContain(
        'Also booked: the 2 visits after it, every 2 weeks, the last on Tuesday 13 April.',
      );
    }
    expect(confirmations[0]!.sms!.length).toBeLessThanOrEqual(306);
  });

  it('says which later visits are with another stylist when the series named nobody', async () => {
    // Bo works Tuesdays at Soho too; Ana's Tuesday 9 March at 10:00 is taken.
    const catalogue = smallCatalogue();
    const bo = catalogue.staff.find((member) => member.ref === 'bo')!;
    bo.working_hours = {
      soho: { wed: [['10:00', '18:00']], tue: [['09:00', '17:00']] },
    } as unknown as typeof bo.working_hours;
    t = await startTestApp({ catalogues: [catalogue], now: '2027-03-01T09:00:00Z' });
    const bea = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Bea', last_name: 'Other', email: 'bea@example.com' },
    });
    expect((await bookAna(t, '2027-03-09T10:00:00Z', bea.json().data.id)).statusCode).toBe(201);
    await deliver(t);
    const refs = await bookSeries('2027-03-02T10:00:00Z', { every_weeks: 1, count: 3 }, 'cut', 'anyone');
    const confirmations = (await said('confirmed')).filter((c) => c.reference === refs[0]);
    expect(confirmations).toHaveLength(1);
    const { sms, email } = confirmations[0]!;
    expect(email).toContain('Cut with Ana on Tuesday 2 March');
    expect(email).toContain(
      'Also booked: the 2 visits after it, every week, the last on Tuesday 16 March. One of them is with Bo.',
    );
    // The SMS, short of room, names no stylist rather than Ana alone.
    expect(sms).toContain('Also booked: the 2 visits after it, every week, the last on Tuesday 16 March.');
    expect(sms!.includes('with Ana')).toBe(sms!.includes('One of them is with Bo.'));
  });

  it('tells a cancellation of "this and the following" in one message, the later visits quiet', async () => {
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const refs = await bookSeries('2027-03-02T10:00:00Z', { every_weeks: 1, count: 4 });
    await deliver(t);
    for (const ref of refs) expect(await pendingReminders(ref)).toHaveLength(2);

    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${refs[1]}/cancel`,
      payload: { scope: 'following' },
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    const told = await said('cancelled');
    expect(told.map((c) => c.reference)).toEqual([refs[1]]);
    expect(told[0]!.sms).toContain('Cancelled: Cut with Ana on Tuesday 9 March at 10:00 GMT, at Soho.');
    expect(told[0]!.sms).toContain('The 2 visits after it are cancelled too.');
    expect(told[0]!.email).toContain('The 2 visits after it are cancelled too.');
    // Nothing more is said of the cancelled visits; the first, not cancelled, is still reminded of.
    for (const ref of refs.slice(1)) expect(await pendingReminders(ref)).toEqual([]);
    expect(await pendingReminders(refs[0]!)).toHaveLength(2);
  });

  it('names the visits left when "this and the following" is asked of a visit cancelled before', async () => {
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const refs = await bookSeries('2027-03-02T10:00:00Z', { every_weeks: 1, count: 4 });
    const one = await t.request({ method: 'POST', url: `/v1/bookings/${refs[1]}/cancel`, payload: {} });
    expect(one.statusCode, one.body).toBe(200);
    await deliver(t);
    const following = await t.request({
      method: 'POST',
      url: `/v1/bookings/${refs[1]}/cancel`,
      payload: { scope: 'following' },
    });
    expect(following.statusCode, following.body).toBe(200);
    const told = (await said('cancelled')).filter((c) => c.reference !== refs[1]);
    // The first visit this ask cancelled tells it, naming the one after it.
    expect(told.map((c) => c.reference)).toEqual([refs[2]]);
    expect(told[0]!.sms).toContain('The visit after it is cancelled too.');
  });

  it('still tells each later visit cancelled with the series what becomes of its own deposit', async () => {
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const refs = await bookSeries('2027-03-15T10:00:00Z', { every_weeks: 1, count: 3 }, 'colour');
    // The first two visits' deposits paid (the local checkout), the third's not.
    for (const ref of refs.slice(0, 2)) {
      const session = await t.database.db
        .selectFrom('checkout_sessions as s')
        .innerJoin('bookings as b', 'b.id', 's.booking_id')
        .select('s.id')
        .where('b.reference', '=', ref)
        .executeTakeFirstOrThrow();
      const paid = await t.app.inject({
        method: 'POST',
        url: `/checkout/${session.id}/pay`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
        payload: '',
      });
      expect(paid.statusCode, paid.body).toBe(303);
    }
    await deliver(t);
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${refs[0]}/cancel`,
      payload: { scope: 'following' },
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    const told = await said('cancelled');
    expect(told.map((c) => c.reference).sort()).toEqual(refs.slice(0, 2).sort());
    const first = told.find((c) => c.reference === refs[0])!;
    expect(first.sms).toContain('The 2 visits after it are cancelled too.');
    expect(first.sms).toContain('Your deposit of £20.00 will be refunded.');
    const second = told.find((c) => c.reference === refs[1])!;
    expect(second.sms).toContain('Cancelled: Colour with Ana on Monday 22 March at 10:00 GMT, at Soho.');
    expect(second.sms).toContain('Your deposit of £20.00 will be refunded.');
    expect(second.sms).not.toContain('after it');
  });

  it('tells a move of "this and the following" in one message, each later visit reminded at its new time', async () => {
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const refs = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 1, count: 3 });
    await deliver(t);
    await move(refs[0]!, '2027-03-22T11:00:00Z', 'following');
    const told = await said('rescheduled');
    expect(told.map((c) => c.reference)).toEqual([refs[0]]);
    expect(told[0]!.sms).toContain('Moved: Cut with Ana is now on Monday 22 March at 11:00 GMT, at Soho.');
    // 11:00 on the wall clock for each, after the clocks go forward too.
    expect(told[0]!.sms).toContain('The 2 visits after it moved with it, each to 11:00.');
    const reminders = await pendingReminders(refs[2]!);
    expect(reminders.map((m) => m.dueAt)).toEqual([
      Date.parse('2027-04-04T10:00:00Z'),
      Date.parse('2027-04-04T10:00:00Z'),
    ]);
  });

  it('says which visits moved with it are with another stylist when the series named nobody', async () => {
    // Bo works Tuesdays at Soho too; Ana's Tuesday 9 March at 10:00 is taken: that visit is Bo's.
    const catalogue = smallCatalogue();
    const bo = catalogue.staff.find((member) => member.ref === 'bo')!;
    bo.working_hours = {
      soho: { wed: [['10:00', '18:00']], tue: [['09:00', '17:00']] },
    } as unknown as typeof bo.working_hours;
    t = await startTestApp({ catalogues: [catalogue], now: '2027-03-01T09:00:00Z' });
    const bea = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Bea', last_name: 'Other', email: 'bea@example.com' },
    });
    expect((await bookAna(t, '2027-03-09T10:00:00Z', bea.json().data.id)).statusCode).toBe(201);
    const refs = await bookSeries('2027-03-02T10:00:00Z', { every_weeks: 1, count: 3 }, 'cut', 'anyone');
    await deliver(t);
    await move(refs[0]!, '2027-03-02T12:00:00Z', 'following');
    const told = await said('rescheduled');
    expect(told.map((c) => c.reference)).toEqual([refs[0]]);
    const { sms, email } = told[0]!;
    expect(email).toContain('Cut with Ana is now on Tuesday 2 March at 12:00 GMT');
    expect(email).toContain('The 2 visits after it moved with it, each to 12:00. One of them is with Bo.');
    // The SMS names no stylist rather than Ana alone, short of room.
    expect(sms!.includes('with Ana')).toBe(sms!.includes('One of them is with Bo.'));
  });

  it('tells a move of "this and the following" by the first visit that moves, when the one asked about stays', async () => {
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const refs = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 1, count: 3 });
    await move(refs[1]!, '2027-03-23T11:00:00Z');
    await deliver(t);
    // The first visit "moved" to where it is: only the second moves, back in line at 10:00.
    await move(refs[0]!, '2027-03-16T10:00:00Z', 'following');
    await deliver(t);
    const moves = (await outbox()).filter((m) => m.kind === 'rescheduled' && m.channel === 'sms');
    expect(moves.map((m) => m.reference)).toEqual([refs[1], refs[1]]);
    const last = JSON.parse(moves[1]!.body!).text as string;
    expect(last).toContain('Moved: Cut with Ana is now on Tuesday 23 March at 10:00 GMT, at Soho.');
    expect(last).not.toContain('after it');
  });

  it('still tells the move of the later visits when the visit telling it moves again alone before it is sent', async () => {
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const refs = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 1, count: 3 });
    await deliver(t);
    await move(refs[0]!, '2027-03-22T11:00:00Z', 'following');
    // Not delivered yet: the first visit moves again, alone.
    await move(refs[0]!, '2027-03-22T14:00:00Z');
    const told = await said('rescheduled');
    expect(told.map((c) => c.reference)).toEqual([refs[0]]);
    expect(told[0]!.sms).toContain('is now on Monday 22 March at 14:00 GMT');
    expect(told[0]!.sms).toContain('The 2 visits after it moved with it, each to 11:00.');
  });

  it('tells a move of one visit of a series as a move of that visit alone', async () => {
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const refs = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 1, count: 3 });
    await move(refs[1]!, '2027-03-22T11:00:00Z');
    const told = await said('rescheduled');
    expect(told.map((c) => c.reference)).toEqual([refs[1]]);
    expect(told[0]!.sms).not.toContain('after it');
  });
});
