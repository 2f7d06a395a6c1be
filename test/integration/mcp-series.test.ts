import { afterEach, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { payDepositByStaff } from '../../src/app/staff-actions.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { nightBarberCatalogue, smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import {
  connectInProcess,
  connectOverRest,
  demoCatalogue,
  type Era,
  type McpHarness,
} from '../helpers/mcp-harness.ts';
import { insertProtectedIslingtonCut } from '../helpers/protected-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookAna } from '../helpers/waitlist-fixtures.ts';

/**
 * Recurring appointments through the SDK's client (design.md 9.5): `book` with `repeat`, a clash named
 * with the free times that day, `reschedule` and `cancel` with scope following, and `lookup_client`
 * telling the caller's usual so that "my usual" is one `book` call. In process on both protocol
 * generations, and over REST (`booking mcp --base-url`). The small catalogue: Ana does Cuts at Soho,
 * London, on Mondays and Tuesdays 09:00-17:00; Monday 1 March 2027, 09:00 (the clocks go forward on
 * 28 March).
 */
const NOW = '2027-03-01T09:00:00Z';
const JO = { phone: '+447911123456' };

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

/** Jo's visits with Ana at Soho every 2 weeks from Tuesday 16 March at 10 am, 3 of them, over MCP `book`. */
async function bookJosSeries(mcp: McpHarness, services = 'cut') {
  const booked = await mcp.call('book', {
    location: 'soho',
    services,
    staff: 'Ana',
    starts_at: '2027-03-16T10:00:00Z',
    client_id: (await catalogueIds(t.database.db)).jo,
    repeat: { every_weeks: 2, count: 3 },
  });
  const series = booked.series as { occurrences: { reference: string }[] } | undefined;
  return { booked, refs: (series?.occurrences ?? []).map((o) => o.reference) };
}

/** Soho closed on `date` (a closure with its reason), written as the catalogue would. */
async function closeSoho(date: string, reason: string) {
  const ids = await catalogueIds(t.database.db);
  await t.database.db
    .insertInto('location_closures')
    .values({ organisation_id: ids.organisation, location_id: ids.locations.soho!, date, reason })
    .execute();
}

/** Jo's 26 weekly visits with Ana at Soho from Tuesday 2 March at 10 am, over MCP `book`, booked. */
async function bookJosWeekly(mcp: McpHarness) {
  const booked = await mcp.call('book', {
    location: 'soho',
    services: 'cut',
    staff: 'Ana',
    starts_at: '2027-03-02T10:00:00Z',
    client_id: (await catalogueIds(t.database.db)).jo,
    repeat: { every_weeks: 1, count: 26 },
  });
  expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true });
  return booked;
}

async function seriesScenario(mcp: McpHarness) {
  const { booked } = await bookJosSeries(mcp);
  expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true, status: 'confirmed' });
  expect(booked.spoken).toContain(
    'It repeats every 2 weeks, 3 visits: Tuesday 16 March, Tuesday 30 March and Tuesday 13 April at 10 am.',
  );
  expect(booked.spoken).toContain("The first visit's reference is");
  const series = booked.series as { id: string; occurrences: { reference: string; starts_at: string }[] };
  expect(series.occurrences.map((o) => o.starts_at)).toEqual([
    '2027-03-16T10:00:00+00:00',
    '2027-03-30T10:00:00+01:00',
    '2027-04-13T10:00:00+01:00',
  ]);
  // Every time a tool returns comes with its words too (design.md 7), and the series says its size.
  expect(booked.series).toMatchObject({ every_weeks: 2, count: 3 });
  expect((booked.series as { occurrences: { spoken: string }[] }).occurrences.map((o) => o.spoken)).toEqual([
    'Tuesday 16 March at 10 am',
    'Tuesday 30 March at 10 am',
    'Tuesday 13 April at 10 am',
  ]);

  // The caller's usual, from the series: "my usual" is then one book call, due after the third visit
  // (not on the second, booked already).
  const found = await mcp.call('lookup_client', JO);
  expect(found.usual).toMatchObject({
    location: 'Soho',
    services: ['Cut'],
    staff: 'Ana',
    every_weeks: 2,
    next_due_date: '2027-04-27',
  });
  expect(String((found.usual as { spoken: string }).spoken)).toMatch(
    /^Your usual: Cut with Ana at Soho, every 2 weeks \(booked for Tuesday 16 March at 10 am\); next due around Tuesday 27 April\.$/,
  );

  // The second visit and the third move a day earlier, to Monday at 11.
  const refs = series.occurrences.map((o) => o.reference);
  const moved = await mcp.call('reschedule', {
    reference: refs[1],
    starts_at: '2027-03-29T11:00:00+01:00',
    scope: 'following',
  });
  expect(moved, JSON.stringify(moved)).toMatchObject({ ok: true });
  expect(moved.spoken).toContain('Its 1 later visit moved too: Monday 12 April at 11 am.');

  const preview = await mcp.call('cancel', { reference: refs[0], scope: 'following', dry_run: true });
  expect(preview.spoken).toContain('Its 2 later visits would be cancelled too');
  const cancelled = await mcp.call('cancel', { reference: refs[1], scope: 'following' });
  expect(cancelled.spoken).toContain('Its 1 later visit is cancelled too: Monday 12 April at 11 am.');
  const first = (await t.request({ method: 'GET', url: `/v1/bookings/${refs[0]}` })).json().data;
  expect(first.status).toBe('confirmed');
  for (const ref of refs.slice(1)) {
    expect((await t.request({ method: 'GET', url: `/v1/bookings/${ref}` })).json().data.status).toBe(
      'cancelled',
    );
  }
  // The same ask again: nothing later is left, and it is answered, not refused.
  const again = await mcp.call('cancel', { reference: refs[1], scope: 'following' });
  expect(again, JSON.stringify(again)).toMatchObject({ ok: true });
  // Said as cancelled before, with what was sent then: no message went out again.
  expect(again.spoken).toBe(
    'Already cancelled: Cut with Ana at Soho, Monday 29 March at 11 am. The cancellation was sent then to the number ending 3456 and by e-mail. Nothing was sent again.',
  );
}

describe.each(['legacy', 'modern'] as Era[])('recurring series over MCP (%s protocol)', (era) => {
  it('books a series, tells the usual, and moves and cancels the following visits', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      await seriesScenario(mcp);
    } finally {
      await mcp.close();
    }
  });

  it('tells the usual due after the latest visit of its own series, not of another series of the same cut', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      await bookJosSeries(mcp);
      // A second series of cuts with Ana, every 4 weeks on Mondays, its last visit on 17 May.
      const other = await mcp.call('book', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        starts_at: '2027-03-22T10:00:00Z',
        client_id: (await catalogueIds(t.database.db)).jo,
        repeat: { every_weeks: 4, count: 3 },
      });
      expect(other, JSON.stringify(other)).toMatchObject({ ok: true });
      const found = await mcp.call('lookup_client', JO);
      // The usual is the first series (the soonest visit, every 2 weeks): due 2 weeks after its last
      // visit of 13 April, not 2 weeks after the other series' 17 May.
      expect(found.usual).toMatchObject({ staff: 'Ana', every_weeks: 2, next_due_date: '2027-04-27' });
    } finally {
      await mcp.close();
    }
  });

  it('cancels the visits after one cancelled before, saying that one as cancelled then', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const ids = await catalogueIds(t.database.db);
      const { refs } = await bookJosSeries(mcp, 'colour');
      await payDepositByStaff(t.database.db, ids.organisation, refs[0]!, t.clock.nowMs());
      const one = await mcp.call('cancel', { reference: refs[0] });
      expect(one.spoken).toContain('The deposit of 20 pounds will be refunded.');
      expect(one.spoken).toMatch(
        /^Cancelled: .* Cancellation sent to the number ending 3456 and by e-mail\.$/,
      );
      const following = await mcp.call('cancel', { reference: refs[0], scope: 'following' });
      expect(following, JSON.stringify(following)).toMatchObject({ ok: true });
      expect(following.spoken).toBe(
        'Already cancelled: Colour with Ana at Soho, Tuesday 16 March at 10 am. The deposit of 20 pounds was refunded. The cancellation was sent then to the number ending 3456 and by e-mail. Its 2 later visits are cancelled too: Tuesday 30 March at 10 am and Tuesday 13 April at 10 am. Cancellation sent to the number ending 3456 and by e-mail.',
      );
    } finally {
      await mcp.close();
    }
  });

  it('says each visit of a series owes its own deposit at its own link, not one deposit', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const { booked } = await bookJosSeries(mcp, 'colour');
      expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true, status: 'pending_payment' });
      // Paying the first link alone would let the other two visits lapse with their holds.
      expect(booked.spoken).toContain(
        'Each of the 3 visits has its own deposit of 20 pounds (60 pounds in all) and own payment link; a visit whose deposit is not paid by 9:30 am today lapses.',
      );
      // The first paid at the desk, the same ask again: the series held, two visits still owing.
      const ids = await catalogueIds(t.database.db);
      const first = (booked.series as { occurrences: { reference: string }[] }).occurrences[0]!.reference;
      await payDepositByStaff(t.database.db, ids.organisation, first, t.clock.nowMs());
      const again = (await bookJosSeries(mcp, 'colour')).booked;
      expect(again, JSON.stringify(again)).toMatchObject({ ok: true, existing: true, status: 'confirmed' });
      expect(again.spoken).toContain(
        '2 of the visits each have their own deposit of 20 pounds (40 pounds in all) and own payment link; a visit whose deposit is not paid in time lapses.',
      );
    } finally {
      await mcp.close();
    }
  });

  it('tells the agent, previewing a change of one visit of a series, that its later visits stay as they are', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const { refs } = await bookJosSeries(mcp);
      // "Cancel my appointment on the 16th": is that one visit, or the standing appointment?
      const cancel = await mcp.call('cancel', { reference: refs[0], dry_run: true });
      expect(cancel.hint).toBe(
        'Ask the caller whether to go ahead; if so, call again without dry_run. It is one visit of a series: its 2 later visits stay as they are unless the caller wants them changed too (scope following).',
      );
      const move = await mcp.call('reschedule', {
        reference: refs[1],
        starts_at: '2027-03-30T11:00:00+01:00',
        dry_run: true,
      });
      expect(move.hint).toContain(
        'It is one visit of a series: its 1 later visit stays as it is unless the caller wants it changed too (scope following).',
      );
      // Asked with following, or of the last visit, there is nothing more to ask.
      const following = await mcp.call('cancel', { reference: refs[0], dry_run: true, scope: 'following' });
      expect(following.hint).not.toContain('one visit of a series');
      const last = await mcp.call('cancel', { reference: refs[2], dry_run: true });
      expect(last.hint).not.toContain('one visit of a series');
    } finally {
      await mcp.close();
    }
  });

  it('says a later visit moved back when the one asked about keeps its time with scope following', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const { refs } = await bookJosSeries(mcp);
      // The third visit alone moves to 11 am.
      const alone = await mcp.call('reschedule', {
        reference: refs[2],
        starts_at: '2027-04-13T11:00:00+01:00',
      });
      expect(alone, JSON.stringify(alone)).toMatchObject({ ok: true });
      // "Keep this one at 10 and put the following ones at 10 too": the third is moved back.
      const ask = { reference: refs[0], starts_at: '2027-03-16T10:00:00Z', scope: 'following' };
      const asked = await mcp.call('reschedule', { ...ask, dry_run: true });
      // Only the visit that moves is said: the second already stands at 10.
      expect(asked.spoken).toBe(
        'It can be moved to Cut with Ana at Soho, Tuesday 16 March at 10 am. The 1 later visit would move too: Tuesday 13 April at 10 am.',
      );
      expect(asked.hint).toBeDefined();
      const again = await mcp.call('reschedule', ask);
      expect(again, JSON.stringify(again)).toMatchObject({ ok: true });
      const third = (await t.request({ method: 'GET', url: `/v1/bookings/${refs[2]}` })).json().data;
      expect(third.starts_at).toBe('2027-04-13T10:00:00+01:00');
      // ...which the answer says, with what was sent: not that nothing changed.
      expect(again.spoken).toBe(
        'Moved: Cut with Ana at Soho, Tuesday 16 March at 10 am. Its 1 later visit moved too: Tuesday 13 April at 10 am. New time sent to the number ending 3456 and by e-mail.',
      );
      // Asked once more, nothing moves: that is said, and nothing was sent.
      const retry = await mcp.call('reschedule', ask);
      expect(retry.spoken).toBe(
        'That is the time it already has, so nothing changed: Cut with Ana at Soho, Tuesday 16 March at 10 am.',
      );
    } finally {
      await mcp.close();
    }
  });

  it('answers a series the caller already holds with its own interval, not the one asked for', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const ask = {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        starts_at: '2027-03-16T10:00:00Z',
        client_id: (await catalogueIds(t.database.db)).jo,
      };
      const booked = await mcp.call('book', { ...ask, repeat: { every_weeks: 2, count: 3 } });
      expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true, existing: false });
      const again = await mcp.call('book', { ...ask, repeat: { every_weeks: 4, count: 5 } });
      expect(again, JSON.stringify(again)).toMatchObject({
        ok: true,
        existing: true,
        series: { id: (booked.series as { id: string }).id, every_weeks: 2 },
      });
      expect(again.spoken).toContain('It repeats every 2 weeks, 3 visits:');
      // One visit moved to another time of day: each visit is said with its own time.
      const third = (booked.series as { occurrences: { reference: string }[] }).occurrences[2]!.reference;
      const moved = await mcp.call('reschedule', {
        reference: third,
        starts_at: '2027-04-13T11:00:00+01:00',
      });
      expect(moved, JSON.stringify(moved)).toMatchObject({ ok: true });
      const held = await mcp.call('book', { ...ask, repeat: { every_weeks: 2, count: 3 } });
      expect(held.spoken).toContain(
        'It repeats every 2 weeks, 3 visits: Tuesday 16 March at 10 am, Tuesday 30 March at 10 am and Tuesday 13 April at 11 am.',
      );
    } finally {
      await mcp.close();
    }
  });

  it('moves nothing when a later visit would clash, and says which with the free times that day', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const booked = await mcp.call('book', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        starts_at: '2027-03-16T10:00:00Z',
        client: { first_name: 'Bea', last_name: 'Regular', phone: '07400 123987' },
        repeat: { every_weeks: 1, count: 2 },
      });
      expect(booked).toMatchObject({ ok: true });
      const taken = await bookAna(t, '2027-03-23T11:00:00Z');
      expect(taken.statusCode, taken.body).toBe(201);
      // The harness checks each member answered is one reschedule declares.
      const refused = await mcp.call('reschedule', {
        reference: booked.booking.reference,
        starts_at: '2027-03-16T11:00:00Z',
        scope: 'following',
      });
      expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'series_clash' });
      expect((refused.clashes as { date: string }[]).map((c) => c.date)).toEqual(['2027-03-23']);
      // A move is said as one: nothing was moved (a new series' clash says nothing was booked).
      expect(refused.hint).toMatch(/^Nothing was moved: Tuesday 23 March /);
    } finally {
      await mcp.close();
    }
  });

  it('says which later visit has a stylist who has left when the following cannot move', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const { refs } = await bookJosSeries(mcp);
      // The third visit (Tuesday 13 April) is with Cy, who has since left (inactive).
      const ids = await catalogueIds(t.database.db);
      await t.database.db
        .updateTable('bookings')
        .set({ staff_id: ids.staff.cy! })
        .where('reference', '=', refs[2]!)
        .execute();
      const refused = await mcp.call('reschedule', {
        reference: refs[0],
        starts_at: '2027-03-16T11:00:00Z',
        scope: 'following',
      });
      expect(refused).toMatchObject({ ok: false, reason: 'series_clash' });
      expect(refused.hint).toContain(
        'Tuesday 13 April: the stylist of that visit can no longer take it here; move it alone with another stylist (staff)',
      );
      expect(refused.hint).not.toMatch(/does not work at that time/);
    } finally {
      await mcp.close();
    }
  });

  it('says a date the caller already holds at that time is theirs, not "not free"', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      // Jo holds Tuesday 23 March at 10 on its own, and asks for the weekly series through it.
      const own = await bookAna(t, '2027-03-23T10:00:00Z');
      expect(own.statusCode, own.body).toBe(201);
      const refused = await mcp.call('book', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        starts_at: '2027-03-16T10:00:00Z',
        client_id: (await catalogueIds(t.database.db)).jo,
        repeat: { every_weeks: 1, count: 3 },
      });
      expect(refused).toMatchObject({ ok: false, reason: 'series_clash' });
      expect(refused.hint).toMatch(
        /^Nothing was booked: Tuesday 23 March: the caller already has a booking at that time \(free that day: /,
      );
    } finally {
      await mcp.close();
    }
  });

  it('books nothing when a date clashes, and says which with the free times that day', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const taken = await bookAna(t, '2027-03-23T10:00:00Z');
      expect(taken.statusCode, taken.body).toBe(201);
      const refused = await mcp.call('book', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        starts_at: 'Tuesday 16 March at 10am',
        client: { first_name: 'Bea', last_name: 'Regular', phone: '07400 123987' },
        repeat: { every_weeks: 1, count: 3 },
      });
      expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'series_clash' });
      expect(refused.hint).toMatch(
        /^Nothing was booked: Tuesday 23 March is not free \(free that day: .*11 am with Ana.*\)\./,
      );
      const clashes = refused.clashes as {
        date: string;
        starts_at: string | null;
        alternatives: { starts_at: string }[];
      }[];
      expect(clashes.map((c) => c.date)).toEqual(['2027-03-23']);
      expect(clashes[0]!.starts_at).toBe('2027-03-23T10:00:00+00:00');
      expect(clashes[0]!.alternatives.length).toBeGreaterThan(0);
      // Registered as book registers a new caller, but with nothing booked and no usual yet.
      const found = await mcp.call('lookup_client', { phone: '07400 123987' });
      expect(found).toMatchObject({ ok: true, upcoming_bookings: [] });
      expect(found.usual).toBeUndefined();
    } finally {
      await mcp.close();
    }
  });
});

/**
 * The small catalogue with Bo working Tuesdays at Soho too and Ana's Tuesday 9 March at 10 am taken
 * by Bea; an agent connected in process or over REST.
 */
async function withBoOnTuesdays(face: string) {
  const catalogue = smallCatalogue();
  const bo = catalogue.staff.find((member) => member.ref === 'bo')!;
  bo.working_hours = {
    soho: { wed: [['10:00', '18:00']], tue: [['09:00', '17:00']] },
  } as unknown as typeof bo.working_hours;
  t = await startTestApp({ catalogues: [catalogue], now: NOW });
  const bea = await t.request({
    method: 'POST',
    url: '/v1/clients',
    payload: { first_name: 'Bea', last_name: 'Other', email: 'bea@example.com' },
  });
  const beaId: string = bea.json().data.id;
  expect((await bookAna(t, '2027-03-09T10:00:00Z', beaId)).statusCode).toBe(201);
  const agent =
    face === 'in process' ? await connectInProcess(t, t.keys.readWrite) : await connectOverRest(t);
  return { mcp: agent, beaId };
}

describe('a series booked with no stylist named', () => {
  it.each(['in process', 'over REST'])(
    "says which visits are with another stylist than the first, not only the first one's (%s)",
    async (face) => {
      // Bo works Tuesdays at Soho too; Ana's Tuesday 9 March at 10 am is taken.
      const { mcp } = await withBoOnTuesdays(face);
      try {
        const booked = await mcp.call('book', {
          location: 'soho',
          services: 'cut',
          starts_at: 'Tuesday 2 March at 10am',
          client_id: (await catalogueIds(t.database.db)).jo,
          repeat: { every_weeks: 1, count: 3 },
        });
        expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true });
        expect(booked.spoken).toMatch(
          /^Booked: Cut with Ana at Soho, tomorrow, Tuesday 2 March at 10 am\. It repeats every week, 3 visits: tomorrow, Tuesday 2 March, Tuesday 9 March and Tuesday 16 March at 10 am; Tuesday 9 March is with Bo\. /,
        );
      } finally {
        await mcp.close();
      }
    },
  );
});

describe('a series with visits with several stylists, moved with scope following', () => {
  it.each(['in process', 'over REST'])(
    'says which moved visits are with another stylist than the one asked about, before and after (%s)',
    async (face) => {
      // Jo's weekly Tuesday cuts at 10 booked with no stylist named: Ana, then Bo on 9 March (Ana's
      // time taken by Bea), then Ana.
      const { mcp, beaId } = await withBoOnTuesdays(face);
      try {
        const booked = await mcp.call('book', {
          location: 'soho',
          services: 'cut',
          starts_at: 'Tuesday 2 March at 10am',
          client_id: (await catalogueIds(t.database.db)).jo,
          repeat: { every_weeks: 1, count: 3 },
        });
        expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true });
        const refs = (booked.series as { occurrences: { reference: string }[] }).occurrences.map(
          (o) => o.reference,
        );
        const preview = await mcp.call('reschedule', {
          reference: refs[0],
          starts_at: '2027-03-02T12:00:00Z',
          scope: 'following',
          dry_run: true,
        });
        expect(preview.spoken).toBe(
          'It can be moved to Cut with Ana at Soho, tomorrow, Tuesday 2 March at noon. The 2 later visits would move too: Tuesday 9 March at noon and Tuesday 16 March at noon; Tuesday 9 March is with Bo.',
        );
        // Ana is busy at 11 on 2 March: "anyone" there is Bo, and every later visit goes with him.
        expect((await bookAna(t, '2027-03-02T11:00:00Z', beaId)).statusCode).toBe(201);
        const toBo = await mcp.call('reschedule', {
          reference: refs[0],
          starts_at: '2027-03-02T11:00:00Z',
          staff: 'anyone',
          scope: 'following',
          dry_run: true,
        });
        expect(toBo.spoken).toBe(
          'It can be moved to Cut with Bo at Soho, tomorrow, Tuesday 2 March at 11 am. The 2 later visits would move too: Tuesday 9 March at 11 am and Tuesday 16 March at 11 am; they are with Bo too.',
        );
        const moved = await mcp.call('reschedule', {
          reference: refs[0],
          starts_at: '2027-03-02T12:00:00Z',
          scope: 'following',
        });
        expect(moved.spoken).toMatch(
          /^Moved: Cut with Ana at Soho, tomorrow, Tuesday 2 March at noon\. Its 2 later visits moved too: Tuesday 9 March at noon and Tuesday 16 March at noon; Tuesday 9 March is with Bo\. /,
        );
      } finally {
        await mcp.close();
      }
    },
  );
});

describe('lookup_client for a caller with a long series', () => {
  it('says how many visits they hold and reads the next few, not all twenty listed', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const booked = await bookJosWeekly(mcp);
      const found = await mcp.call('lookup_client', JO);
      const refs = (found.upcoming_bookings as { reference_spoken: string }[]).map((b) => b.reference_spoken);
      // The engine lists the first 20: the caller holds 26, so not "You have 20".
      expect(found.spoken).toMatch(
        /^You have at least 20 upcoming bookings; the next 3 are: .*; and more after them, until at least Tuesday 13 July at 10 am\.$/,
      );
      for (const ref of refs.slice(0, 3)) expect(found.spoken).toContain(ref);
      for (const ref of refs.slice(3)) expect(found.spoken).not.toContain(ref);
      expect(found.spoken.length).toBeLessThan(700);

      await mcp.call('cancel', { reference: booked.series.occurrences[5].reference, scope: 'following' });
      const fewer = await mcp.call('lookup_client', JO);
      expect(fewer.spoken).toMatch(
        /^You have 5 upcoming bookings; the next 3 are: .*; and 2 more, the last on Tuesday 30 March at 10 am\./,
      );
      // Read one after another as a list is ("A; B; and C"), not "A; and B; and C".
      const [a, b, c] = (fewer.upcoming_bookings as { reference_spoken: string }[]).map(
        (visit) => visit.reference_spoken,
      );
      expect(fewer.spoken).toContain(`(reference ${a}); Cut`);
      expect(fewer.spoken).toContain(`(reference ${b}); and Cut`);
      expect(fewer.spoken).toContain(`(reference ${c}); and 2 more`);
    } finally {
      await mcp.close();
    }
  });
});

describe('a long series said over MCP', () => {
  it('is said as its count, first and last dates and rhythm, naming only a visit at another time', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const booked = await bookJosWeekly(mcp);
      expect(booked.spoken).toContain(
        'It repeats every week, 26 visits from tomorrow, Tuesday 2 March to Tuesday 24 August at 10 am.',
      );
      expect(booked.spoken.length).toBeLessThan(400);
      // The structured answer keeps every visit.
      const refs = (booked.series.occurrences as { reference: string }[]).map((o) => o.reference);
      expect(refs).toHaveLength(26);

      // The fourth visit alone moves to 11: it is the one named.
      const alone = await mcp.call('reschedule', { reference: refs[3], starts_at: '2027-03-23T11:00:00Z' });
      expect(alone, JSON.stringify(alone)).toMatchObject({ ok: true });
      const cancel = await mcp.call('cancel', { reference: refs[0], scope: 'following', dry_run: true });
      expect(cancel.spoken).toContain(
        'Its 25 later visits would be cancelled too, every week from Tuesday 9 March to Tuesday 24 August at 10 am, except Tuesday 23 March at 11 am.',
      );
      expect(cancel.spoken.length).toBeLessThan(400);

      const move = await mcp.call('reschedule', {
        reference: refs[1],
        starts_at: '2027-03-09T11:00:00Z',
        scope: 'following',
        dry_run: true,
      });
      expect(move, JSON.stringify(move)).toMatchObject({ ok: true });
      expect(move.spoken).toContain(
        'The 24 later visits would move too, every week from Tuesday 16 March to Tuesday 24 August at 11 am.',
      );
      expect(move.spoken.length).toBeLessThan(400);

      // Four or fewer are still each said.
      const few = await mcp.call('cancel', { reference: refs[21], scope: 'following', dry_run: true });
      expect(few.spoken).toContain(
        'Its 4 later visits would be cancelled too: Tuesday 3 August at 10 am, Tuesday 10 August at 10 am, Tuesday 17 August at 10 am and Tuesday 24 August at 10 am.',
      );

      // A day before the second visit, the first cancelled before: the late one is named, not counted.
      expect((await mcp.call('cancel', { reference: refs[0] })).ok).toBe(true);
      t.clock.set('2027-03-08T11:00:00Z');
      const late = await mcp.call('cancel', { reference: refs[0], scope: 'following', dry_run: true });
      expect(late, JSON.stringify(late)).toMatchObject({ ok: true });
      expect(late.spoken).toContain(
        'Its 25 later visits would be cancelled too, every week from tomorrow, Tuesday 9 March to Tuesday 24 August at 10 am, except Tuesday 23 March at 11 am. Tomorrow, Tuesday 9 March at 10 am is late.',
      );
    } finally {
      await mcp.close();
    }
  });
});

describe('a series clash on a day the salon is closed or the stylist away', () => {
  it('says the closure with its reason, and the stylist away, not "is not free"', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    await closeSoho('2027-03-23', 'Staff training');
    await t.database.db
      .insertInto('staff_time_off')
      .values({
        id: crypto.randomUUID(),
        organisation_id: ids.organisation,
        staff_id: ids.staff.ana!,
        starts_at: Date.parse('2027-03-30T09:00:00+01:00'),
        ends_at: Date.parse('2027-03-30T12:00:00+01:00'),
        reason: 'Holiday',
      })
      .execute();
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const refused = await mcp.call('book', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        starts_at: '2027-03-16T10:00:00Z',
        client_id: ids.jo,
        repeat: { every_weeks: 1, count: 3 },
      });
      expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'series_clash' });
      const clashes = refused.clashes as { date: string; reason: string; spoken: string }[];
      expect(clashes.map((c) => [c.date, c.reason])).toEqual([
        ['2027-03-23', 'closed'],
        ['2027-03-30', 'staff_not_working'],
      ]);
      expect(clashes[0]!.spoken).toBe('Soho is closed on Tuesday 23 March (Staff training)');
      expect(clashes[1]!.spoken).toMatch(
        /^Ana is away at that time on Tuesday 30 March \(free that day: noon with Ana, .*\)$/,
      );
      expect(refused.hint).toMatch(
        /^Nothing was booked: Soho is closed on Tuesday 23 March \(Staff training\); Ana is away at that time on Tuesday 30 March/,
      );
      expect(refused.hint).not.toContain('is not free');
    } finally {
      await mcp.close();
    }
  });

  it('names up to 4 clashes in the hint and counts more, with the first and last clashing dates', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    // A holiday stretch: Soho closed five Tuesdays running, 6 April to 4 May.
    for (const date of ['2027-04-06', '2027-04-13', '2027-04-20', '2027-04-27', '2027-05-04']) {
      await closeSoho(date, 'Holiday');
    }
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const refused = await mcp.call('book', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        starts_at: '2027-03-02T10:00:00Z',
        client_id: ids.jo,
        repeat: { every_weeks: 1, count: 26 },
      });
      expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'series_clash' });
      // The structured answer keeps every clash; the words count them.
      const clashes = refused.clashes as { date: string; spoken: string }[];
      expect(clashes.map((c) => c.date)).toEqual([
        '2027-04-06',
        '2027-04-13',
        '2027-04-20',
        '2027-04-27',
        '2027-05-04',
      ]);
      expect(clashes[2]!.spoken).toBe('Soho is closed on Tuesday 20 April (Holiday)');
      expect(refused.hint).toMatch(
        /^Nothing was booked: 5 of the visits clash, from Tuesday 6 April to Tuesday 4 May\. /,
      );
      expect(refused.hint).not.toContain('20 April');
    } finally {
      await mcp.close();
    }
  });
});

describe('a series visit on the night the clocks go forward', () => {
  it('says the time does not exist as the clocks go forward that night, not that it "is not free"', async () => {
    // A London barber open through the small hours of Sundays (00:00-06:00); the clocks go forward at
    // 01:00 GMT on Sunday 28 March 2027, to 02:00 BST.
    t = await startTestApp({
      catalogues: [
        nightBarberCatalogue({
          sundayUntil: '06:00',
          clients: [{ ref: 'sam', first_name: 'Sam', last_name: 'Lee', phone: '+447911123456' }],
        }),
      ],
      now: '2027-03-15T09:00:00Z',
    });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const refused = await mcp.call('book', {
        location: 'soho',
        services: 'Trim',
        staff: 'Kit',
        starts_at: '2027-03-21T01:30:00+00:00',
        client: { first_name: 'Sam', last_name: 'Lee', phone: '+447911123456' },
        repeat: { every_weeks: 1, count: 2 },
      });
      expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'series_clash' });
      const clashes = refused.clashes as { date: string; reason: string; spoken: string }[];
      expect(clashes.map((c) => [c.date, c.reason])).toEqual([['2027-03-28', 'not_on_grid']]);
      expect(clashes[0]!.spoken).toBe(
        'Sunday 28 March: that time does not exist, as the clocks go forward that night (free nearest it: 12:30 am with Kit, 2 am with Kit and 2:30 am with Kit)',
      );
      expect(refused.hint).not.toContain('is not free');
    } finally {
      await mcp.close();
    }
  });
});

describe('a series of Booking Protection holds over MCP', () => {
  it('says one card saved on the booking page confirms every visit, not only "it"', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()] });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const slots = await mcp.call('find_slots', {
        location: 'islington',
        services: 'cut',
        date: 'wednesday',
      });
      expect(slots, JSON.stringify(slots)).toMatchObject({ ok: true });
      const held = await mcp.call('book', {
        location: 'islington',
        services: 'cut',
        starts_at: slots.slots[0].starts_at,
        client: { first_name: 'Bea', last_name: 'Regular', phone: '07400 123987' },
        repeat: { every_weeks: 2, count: 3 },
      });
      expect(held, JSON.stringify(held)).toMatchObject({ ok: true, status: 'pending_confirmation' });
      expect(held.series.occurrences).toHaveLength(3);
      expect(held.spoken).toContain(
        'This location needs Booking Protection: please save a card on the booking page; that one card confirms all 3 visits.',
      );
      expect(held.spoken).not.toContain('to confirm it.');

      // With a deposit, the card is saved for all; each visit's deposit is still paid on its page.
      const colour = await mcp.call('find_slots', {
        location: 'islington',
        services: 'colour',
        date: 'thursday',
      });
      const deposits = await mcp.call('book', {
        location: 'islington',
        services: 'colour',
        starts_at: colour.slots[0].starts_at,
        client: { first_name: 'Max', last_name: 'Ode', phone: '07911 778899' },
        repeat: { every_weeks: 4, count: 2 },
      });
      expect(deposits, JSON.stringify(deposits)).toMatchObject({ ok: true, status: 'pending_confirmation' });
      expect(deposits.spoken).toContain(
        "please save a card and pay the deposit on the booking page; that one card is saved for both visits, and each visit's own page asks for its deposit.",
      );
    } finally {
      await mcp.close();
    }
  });
});

describe('later visits of a series changed late', () => {
  /** Soho's window widened to 700 hours: from 1 March, the visits of 16 and 30 March are late, 13 April is not. */
  async function widenWindow() {
    await t.database.db
      .updateTable('locations')
      .set({ cancellation_window_hours: 700 })
      .where('slug', '=', 'soho')
      .execute();
  }

  it('reschedule with following names each later visit whose move is late, as cancel does', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const { booked, refs } = await bookJosSeries(mcp);
      expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true });
      await widenWindow();
      const move = await mcp.call('reschedule', {
        reference: refs[0],
        starts_at: '2027-03-16T11:00:00Z',
        scope: 'following',
        dry_run: true,
      });
      expect(move, JSON.stringify(move)).toMatchObject({ ok: true });
      expect(move.spoken).toContain(
        'The 2 later visits would move too: Tuesday 30 March at 11 am and Tuesday 13 April at 11 am. Tuesday 30 March at 11 am is late.',
      );
    } finally {
      await mcp.close();
    }
  });

  it('reschedule with following of a visit too late to move says so, offering no times that would be refused too', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const { booked, refs } = await bookJosSeries(mcp);
      expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true });
      await widenWindow();
      await t.database.db
        .updateTable('locations')
        .set({ late_reschedule: 'forbid' })
        .where('slug', '=', 'soho')
        .execute();
      const move = await mcp.raw('reschedule', {
        reference: refs[0],
        starts_at: '2027-03-16T11:00:00Z',
        scope: 'following',
      });
      const answer = move.structuredContent as { ok: boolean; reason: string; clashes?: unknown };
      expect(answer, JSON.stringify(answer)).toMatchObject({ ok: false, reason: 'late_change' });
      expect(answer.clashes).toBeUndefined();
    } finally {
      await mcp.close();
    }
  });

  it('cancel with following names the late visits of a short series rather than counting them', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const { booked, refs } = await bookJosSeries(mcp);
      expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true });
      await widenWindow();
      const cancel = await mcp.call('cancel', { reference: refs[0], scope: 'following', dry_run: true });
      expect(cancel, JSON.stringify(cancel)).toMatchObject({ ok: true });
      expect(cancel.spoken).toContain(
        'Its 2 later visits would be cancelled too: Tuesday 30 March at 10 am and Tuesday 13 April at 10 am. Tuesday 30 March at 10 am is late.',
      );
    } finally {
      await mcp.close();
    }
  });

  it('cancel with following says the late-cancellation fee of a later visit, naming it', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()] });
    const db = t.database.db;
    const ids = await catalogueIds(db);
    // Jo's three protected cuts with Ben at Islington (window 2 days, late cancellation 50% of £62),
    // from Monday 23 November at 9: the second is 47 hours away, the third 73.
    const refs = [];
    for (const at of ['2026-11-24T10:00:00Z', '2026-11-25T08:00:00Z', '2026-11-26T10:00:00Z']) {
      refs.push(await insertProtectedIslingtonCut(db, Date.parse(at)));
    }
    const seriesId = crypto.randomUUID();
    await db
      .insertInto('booking_series')
      .values({ id: seriesId, organisation_id: ids.organisation, every_weeks: 1, count: 3, created_at: 0 })
      .execute();
    await db.updateTable('bookings').set({ series_id: seriesId }).where('reference', 'in', refs).execute();
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const cancel = await mcp.call('cancel', { reference: refs[0], scope: 'following', dry_run: true });
      expect(cancel, JSON.stringify(cancel)).toMatchObject({ ok: true });
      expect(cancel.spoken).toContain(
        'Its 2 later visits would be cancelled too: Wednesday 25 November at 8 am and Thursday 26 November at 10 am. Wednesday 25 November at 8 am is late. A late-cancellation fee would be due for Wednesday 25 November at 8 am (31 pounds).',
      );
    } finally {
      await mcp.close();
    }
  });
});

describe('lookup_client usual from past visits', () => {
  it('reads the interval from the gaps between visits, and book takes it in one call', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    // Visits four weeks apart on Tuesdays at 10, each booked at the start of its month.
    for (const startsAt of [
      '2027-03-09T10:00:00Z',
      '2027-04-06T10:00:00+01:00',
      '2027-05-04T10:00:00+01:00',
    ]) {
      t.clock.set(`${startsAt.slice(0, 8)}01T09:00:00Z`);
      const booked = await bookAna(t, startsAt);
      expect(booked.statusCode, booked.body).toBe(201);
    }
    t.clock.set('2027-05-10T09:00:00Z');
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const found = await mcp.call('lookup_client', JO);
      const usual = found.usual as {
        service_ids: string[];
        staff_id: string;
        every_weeks: number;
        next_due_date: string;
      };
      expect(usual).toMatchObject({ every_weeks: 4, next_due_date: '2027-06-01', staff_id: ids.staff.ana });
      const booked = await mcp.call('book', {
        location: 'soho',
        services: usual.service_ids,
        staff: usual.staff_id,
        starts_at: `${usual.next_due_date}T10:00:00+01:00`,
        client_id: ids.jo,
      });
      expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true, status: 'confirmed' });
      // Booked on the date it was due: the next falls due four weeks after that one.
      const again = await mcp.call('lookup_client', JO);
      expect(again.usual).toMatchObject({ every_weeks: 4, next_due_date: '2027-06-29' });
    } finally {
      await mcp.close();
    }
  });

  it('reads no interval from two cuts booked the same day (a parent and a child under one number)', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const ids = await catalogueIds(t.database.db);
      for (const startsAt of ['2027-03-09T10:00:00Z', '2027-03-09T11:00:00Z']) {
        const booked = await mcp.call('book', {
          location: 'soho',
          services: 'cut',
          staff: 'Ana',
          starts_at: startsAt,
          client_id: ids.jo,
        });
        expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true, status: 'confirmed' });
      }
      const found = await mcp.call('lookup_client', JO);
      // Two visits of one day say nothing of how often the caller comes: not "every week".
      expect(found.usual).toMatchObject({ every_weeks: null, next_due_date: null });
      expect(String((found.usual as { spoken: string }).spoken)).toBe(
        'Your usual: Cut with Ana at Soho (booked for Tuesday 9 March at 10 am).',
      );
    } finally {
      await mcp.close();
    }
  });

  it('suggests no repeat book refuses: a gap of 18 weeks is told by its due date alone', async () => {
    t = await startTestApp({ now: NOW });
    for (const startsAt of ['2026-11-10T10:00:00Z', '2027-03-16T10:00:00Z']) {
      t.clock.set(`${startsAt.slice(0, 8)}01T09:00:00Z`);
      const booked = await bookAna(t, startsAt);
      expect(booked.statusCode, booked.body).toBe(201);
    }
    t.clock.set('2027-03-20T09:00:00Z');
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const found = await mcp.call('lookup_client', JO);
      expect(found.usual).toMatchObject({ every_weeks: null, next_due_date: '2027-07-20' });
      expect(String((found.usual as { spoken: string }).spoken)).toBe(
        'Your usual: Cut with Ana at Soho (last Tuesday 16 March at 10 am); next due around Tuesday 20 July.',
      );
    } finally {
      await mcp.close();
    }
  });
});

describe('lookup_client usual whose stylist no longer does it here', () => {
  it.each(['in process', 'over REST'])(
    'names no stylist, so "book my usual" with its staff_id books whoever is free (%s)',
    async (face) => {
      // Bo works Tuesdays at Soho too.
      const catalogue = smallCatalogue();
      const bo = catalogue.staff.find((member) => member.ref === 'bo')!;
      bo.working_hours = {
        soho: { wed: [['10:00', '18:00']], tue: [['09:00', '17:00']] },
      } as unknown as typeof bo.working_hours;
      t = await startTestApp({ catalogues: [catalogue], now: NOW });
      const ids = await catalogueIds(t.database.db);
      for (const startsAt of ['2027-03-02T10:00:00Z', '2027-03-09T10:00:00Z']) {
        expect((await bookAna(t, startsAt)).statusCode).toBe(201);
      }
      // Ana leaves (the catalogue imported again with her inactive).
      t.clock.set('2027-03-10T09:00:00Z');
      const ana = catalogue.staff.find((member) => member.ref === 'ana')!;
      (ana as { active?: boolean }).active = false;
      await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
      const mcp =
        face === 'in process' ? await connectInProcess(t, t.keys.readWrite) : await connectOverRest(t);
      try {
        const found = await mcp.call('lookup_client', JO);
        const usual = found.usual as {
          service_ids: string[];
          staff: string | null;
          staff_id: string | null;
          next_due_date: string;
          spoken: string;
        };
        expect(usual).toMatchObject({
          staff: null,
          staff_id: null,
          every_weeks: 1,
          next_due_date: '2027-03-16',
        });
        expect(usual.spoken).toBe(
          'Your usual: Cut at Soho, every week (last Tuesday 9 March at 10 am, with a stylist who no longer does it here); next due around Tuesday 16 March.',
        );
        const booked = await mcp.call('book', {
          location: 'soho',
          services: usual.service_ids,
          staff: usual.staff_id,
          starts_at: `${usual.next_due_date}T10:00:00Z`,
          client_id: ids.jo,
        });
        expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true, status: 'confirmed' });
        expect(booked.spoken).toContain('Cut with Bo at Soho');
      } finally {
        await mcp.close();
      }
    },
  );
});

describe('recurring series over REST (booking mcp --base-url)', () => {
  it('books, tells the usual, moves and cancels through the REST API', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectOverRest(t);
    try {
      await seriesScenario(mcp);
    } finally {
      await mcp.close();
    }
  });
});

describe('a usual at a location that no longer takes bookings', () => {
  it('is not offered, and the caller is still looked up, in process and over REST', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookAna(t, '2027-03-09T10:00:00Z');
    expect(booked.statusCode, booked.body).toBe(201);
    t.clock.set('2027-03-20T09:00:00Z');
    // Soho closed for good: "book my usual" there could only be refused.
    await t.database.db.updateTable('locations').set({ active: 0 }).where('slug', '=', 'soho').execute();
    for (const connect of [() => connectInProcess(t, t.keys.readWrite), () => connectOverRest(t)]) {
      const mcp = await connect();
      try {
        const found = await mcp.call('lookup_client', JO);
        expect(found.usual).toBeUndefined();
        expect(found.spoken).toBe('You have no upcoming bookings.');
      } finally {
        await mcp.close();
      }
    }
  });
});

describe('a usual whose services the line no longer books', () => {
  it.each([
    ['no longer bookable online', 'online'],
    ['no longer offered at its location', 'removed'],
  ])('is not offered when its service is %s, in process and over REST', async (_, change) => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    for (const startsAt of ['2027-03-02T10:00:00Z', '2027-03-09T10:00:00Z']) {
      expect((await bookAna(t, startsAt)).statusCode).toBe(201);
    }
    t.clock.set('2027-03-10T09:00:00Z');
    const cut = ids.services.cut!;
    // "Book my usual" with it could only be refused ("the salon's team books it themselves"), or was
    // said as "Your usual: a service at Soho".
    if (change === 'online') {
      await t.database.db.updateTable('services').set({ online_bookable: 0 }).where('id', '=', cut).execute();
    } else {
      await t.database.db
        .deleteFrom('service_locations')
        .where('service_id', '=', cut)
        .where('location_id', '=', ids.locations.soho!)
        .execute();
    }
    for (const connect of [() => connectInProcess(t, t.keys.readWrite), () => connectOverRest(t)]) {
      const mcp = await connect();
      try {
        const found = await mcp.call('lookup_client', JO);
        expect(found, JSON.stringify(found)).toMatchObject({ ok: true });
        expect(found.usual).toBeUndefined();
      } finally {
        await mcp.close();
      }
    }
  });
});
