import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { connectInProcess, demoCatalogue, type Json, type McpHarness } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Conversations as a voice agent holds them: each test is the sequence of tool calls an agent makes
 * for one caller, with the outcome and the number of calls checked (a caller waits for each one).
 * The demo catalogue; the clock stands at Monday 23 November 2026, 09:00 in London.
 */
let t: TestApp;
let ids: CatalogueIds;
beforeAll(async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], limits: { requestsPerMinute: 100_000 } });
  ids = await catalogueIds(t.database.db);
});
afterAll(async () => {
  await t.close();
});

async function agent(): Promise<McpHarness> {
  return connectInProcess(t, t.keys.readWrite);
}

async function bookingRow(reference: string) {
  return t.database.db
    .selectFrom('bookings')
    .innerJoin('clients', 'clients.id', 'bookings.client_id')
    .select(['bookings.status', 'bookings.starts_at', 'clients.first_name', 'clients.phone'])
    .where('bookings.reference', '=', reference)
    .executeTakeFirstOrThrow();
}

describe('conversations', () => {
  it('a new caller books a cut tomorrow afternoon in at most three calls', async () => {
    const mcp = await agent();
    // "Hi, I'd like a cut tomorrow afternoon at Camden." -> the agent looks.
    const offered = await mcp.call('find_slots', {
      location: 'Camden',
      services: 'a cut',
      date: 'tomorrow',
      time_of_day: 'afternoon',
    });
    expect(offered.ok).toBe(true);
    const chosen: Json = offered.slots[1];
    expect(chosen.spoken).toMatch(/^tomorrow, Tuesday 24 November at \d/);
    // "The second one, please. I'm Priya Shah, 07911 223355." -> the agent books.
    const booked = await mcp.call('book', {
      location: 'Camden',
      services: 'a cut',
      starts_at: chosen.starts_at,
      client: { first_name: 'Priya', last_name: 'Shah', phone: '07911 223355' },
    });
    expect(booked).toMatchObject({ ok: true, status: 'confirmed' });
    expect(booked.spoken).toContain(chosen.spoken);
    expect(mcp.calls).toBeLessThanOrEqual(3);
    expect(await bookingRow(booked.booking.reference)).toEqual({
      status: 'confirmed',
      starts_at: Date.parse(chosen.starts_at),
      first_name: 'Priya',
      phone: '+447911223355',
    });
    await mcp.close();
  });

  it('a known caller, identified by phone, moves their appointment', async () => {
    const existing = await postBooking(t, {
      location_slug: 'camden',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.amara,
      client_id: ids.jo,
      starts_at: '2026-11-25T10:00:00+00:00',
    });
    expect(existing.statusCode).toBe(201);
    const mcp = await agent();
    // The caller ID gives the number: the agent finds them and their appointment.
    const caller = await mcp.call('lookup_client', { phone: '07911 123456' });
    expect(caller.client.first_name).toBe('Jo');
    const [appointment] = caller.upcoming_bookings;
    expect(appointment.spoken).toBe(
      'Cut & blow-dry with Amara Okafor at Northside Camden, Wednesday 25 November at 10 am',
    );
    // "Can I move it to Friday afternoon, same stylist?"
    const offered = await mcp.call('find_slots', {
      location: appointment.location_slug,
      services: appointment.service_names,
      staff: appointment.staff_name,
      date: 'friday',
      time_of_day: 'afternoon',
    });
    const moved = await mcp.call('reschedule', {
      reference: appointment.reference,
      starts_at: offered.slots[0].starts_at,
    });
    expect(moved.ok).toBe(true);
    expect(moved.spoken).toBe(
      'Moved: Cut & blow-dry with Amara Okafor at Northside Camden, Friday 27 November at noon. New time sent to the number ending 3456 and by e-mail.',
    );
    expect(mcp.calls).toBe(3);
    expect(await bookingRow(appointment.reference)).toMatchObject({
      status: 'confirmed',
      starts_at: Date.parse('2026-11-27T12:00:00Z'),
    });
    await mcp.close();
  });

  it('a caller cancels without knowing the reference', async () => {
    const registered = await agent();
    const rae = await registered.call('register_client', {
      first_name: 'Rae',
      last_name: 'Okoro',
      phone: '+447911778800',
    });
    const booked = await registered.call('book', {
      location: 'camden',
      services: 'beard trim',
      starts_at: '2026-11-28T11:00:00+00:00',
      client_id: rae.client.id,
    });
    expect(booked.ok).toBe(true);
    await registered.close();

    const mcp = await agent();
    const caller = await mcp.call('lookup_client', { phone: '07911 778800' });
    expect(caller.upcoming_bookings.map((b: Json) => b.spoken)).toEqual([
      'Beard trim with Ben Carter at Northside Camden, Saturday 28 November at 11 am',
    ]);
    const cancelled = await mcp.call('cancel', {
      reference: caller.upcoming_bookings[0].reference,
      reason: 'Called to cancel',
    });
    expect(cancelled).toMatchObject({ ok: true, booking: { status: 'cancelled' } });
    expect(mcp.calls).toBe(2);
    expect((await bookingRow(booked.booking.reference)).status).toBe('cancelled');
    await mcp.close();
  });

  it('the chosen slot is taken meanwhile, and the agent books one of the alternatives', async () => {
    const mcp = await agent();
    const offered = await mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      staff: 'Ben',
      date: 'thursday',
      time_of_day: 'morning',
    });
    const wanted: Json = offered.slots[0];
    // Someone else (the salon's website) takes it while the caller decides.
    const rival = await postBooking(t, {
      location_slug: 'camden',
      service_ids: [ids.services.cut],
      staff_id: wanted.staff_id,
      client_id: ids.jo,
      starts_at: wanted.starts_at,
    });
    expect(rival.statusCode).toBe(201);
    const caller = { first_name: 'Lee', last_name: 'Grant', email: 'lee.grant@example.com' };
    const refused = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'Ben',
      starts_at: wanted.starts_at,
      client: caller,
    });
    expect(refused).toMatchObject({ ok: false, code: 'conflict' });
    expect(refused.alternatives.length).toBeGreaterThan(0);
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'Ben',
      starts_at: refused.alternatives[0].starts_at,
      client: caller,
    });
    expect(booked).toMatchObject({ ok: true, booking: { staff_name: 'Ben Carter' } });
    expect(mcp.calls).toBe(3);
    await mcp.close();
  });

  it('a caller of a protected location gets a hold and the booking-page link', async () => {
    const mcp = await agent();
    const offered = await mcp.call('find_slots', {
      location: 'Islington',
      services: 'colour',
      date: 'wednesday',
    });
    expect(offered.ok).toBe(true);
    const held = await mcp.call('book', {
      location: 'Islington',
      services: 'colour',
      starts_at: offered.slots[0].starts_at,
      client: { first_name: 'Max', last_name: 'Ode', phone: '07911 778899' },
    });
    expect(held).toMatchObject({ ok: true, status: 'pending_confirmation', existing: false });
    expect(held.booking.pending_confirmation.requirements).toEqual(['protection_setup', 'deposit']);
    expect(held.booking_page_url).toMatch(/\/p\/manage\/[A-Za-z0-9_-]{43}$/);
    expect(held.spoken).toMatch(
      /please save a card and pay the deposit on the booking page to confirm it\. A late cancellation \(less than 2 days before\) costs 47 pounds 50, and a no-show 95 pounds\. Link sent to the number ending 8899\./,
    );
    // spoken says the link went out: no hint repeats it.
    expect(held.hint).toBeUndefined();
    expect(mcp.calls).toBe(2);
    const rows = await t.database.db
      .selectFrom('bookings')
      .select(['status', 'hold_expires_at', 'protection_applies'])
      .where('location_id', '=', ids.locations.islington!)
      .execute();
    // Islington holds for its pending_confirmation_hold_minutes (the catalogue's default, 15).
    expect(rows).toEqual([
      {
        status: 'pending_confirmation',
        hold_expires_at: t.clock.nowMs() + 15 * 60_000,
        protection_applies: 1,
      },
    ]);
    await mcp.close();
  });
});
