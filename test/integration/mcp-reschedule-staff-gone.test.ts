import { describe, expect, it } from 'vitest';
import { demoMcp } from '../helpers/mcp-harness.ts';

/**
 * reschedule (no staff named) of a booking whose stylist can no longer take it (made inactive since),
 * or one of whose services is no longer bookable online: the engine refuses it as a conflict about the
 * booking (REST 409, param staff_id or service_ids). The hint says so, with a reason, not the generic
 * "That time ... is not possible; offer the caller another time", which sends the agent round offering
 * times that will all be refused, nor "give staff_id", an argument reschedule does not take. Through the
 * SDK's client on the demo catalogue; Monday 23 November 2026, 09:00 in London.
 */
const demo = demoMcp();

async function amarasCut(startsAt: string): Promise<{ reference: string; staff_id: string }> {
  const jo = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
  const booked = await demo.mcp.call('book', {
    location: 'camden',
    services: 'cut',
    staff: 'Amara',
    starts_at: startsAt,
    client_id: jo.client.id,
  });
  expect(booked.ok, JSON.stringify(booked)).toBe(true);
  return booked.booking;
}

describe('reschedule when the catalogue changed since the booking was made', () => {
  it('a stylist who can no longer take it: said so, and someone else offered', async () => {
    const booking = await amarasCut('2026-11-24T10:00:00+00:00');
    await demo.t.database.db
      .updateTable('staff')
      .set({ active: 0 })
      .where('id', '=', booking.staff_id)
      .execute();
    try {
      for (const dryRun of [true, false]) {
        const refused = await demo.mcp.call('reschedule', {
          reference: booking.reference,
          starts_at: '2026-11-24T11:00:00+00:00',
          ...(dryRun && { dry_run: true }),
        });
        expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'staff_not_working' });
        expect(refused.hint).toMatch(/someone else/);
        expect(refused.hint).not.toMatch(/another time|staff_id/);
      }
    } finally {
      await demo.t.database.db
        .updateTable('staff')
        .set({ active: 1 })
        .where('id', '=', booking.staff_id)
        .execute();
    }
  });

  it('a stylist who can no longer take it, the caller minding not who: moved to whoever is free then', async () => {
    const booking = await amarasCut('2026-11-26T18:00:00+00:00');
    await demo.t.database.db
      .updateTable('staff')
      .set({ active: 0 })
      .where('id', '=', booking.staff_id)
      .execute();
    try {
      // The hint above offers someone else: "anyone" is that, not the same refusal again.
      const moved = await demo.mcp.call('reschedule', {
        reference: booking.reference,
        starts_at: '2026-11-26T10:00:00+00:00',
        staff: 'anyone',
      });
      expect(moved, JSON.stringify(moved)).toMatchObject({ ok: true, dry_run: false });
      expect(moved.booking).toMatchObject({
        staff_name: 'Ben Carter',
        starts_at: '2026-11-26T10:00:00+00:00',
      });
      // Nobody who cuts is in then (Ben leaves at 6 pm): said of everyone, with anyone's times.
      const late = await demo.mcp.call('reschedule', {
        reference: booking.reference,
        starts_at: '2026-11-26T19:00:00+00:00',
        staff: 'anyone',
      });
      expect(late, JSON.stringify(late)).toMatchObject({ ok: false, reason: 'slot_unavailable' });
      expect(late.hint).toMatch(/^Nobody who does that is free at that time on Thursday 26 November/);
    } finally {
      await demo.t.database.db
        .updateTable('staff')
        .set({ active: 1 })
        .where('id', '=', booking.staff_id)
        .execute();
    }
  });

  it('a service no longer bookable online: said so, not as a time to change', async () => {
    const booking = await amarasCut('2026-11-24T12:00:00+00:00');
    const { service_ids } = (await demo.mcp.call('get_booking', { reference: booking.reference })).booking;
    await demo.t.database.db
      .updateTable('services')
      .set({ online_bookable: 0 })
      .where('id', 'in', service_ids)
      .execute();
    try {
      const refused = await demo.mcp.call('reschedule', {
        reference: booking.reference,
        starts_at: '2026-11-24T14:00:00+00:00',
      });
      expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'not_changeable' });
      expect(refused.hint).toMatch(/online/);
      expect(refused.hint).not.toMatch(/another time|service_ids/);
    } finally {
      await demo.t.database.db
        .updateTable('services')
        .set({ online_bookable: 1 })
        .where('id', 'in', service_ids)
        .execute();
    }
  });
});

describe('a booking at a location that no longer takes bookings (made inactive since)', () => {
  it('is still read, looked up and cancelled; a move is refused as closed for good, with no times offered', async () => {
    const booking = await amarasCut('2026-11-24T15:00:00+00:00');
    const camden = () => demo.t.database.db.updateTable('locations').where('slug', '=', 'camden');
    await camden().set({ active: 0 }).execute();
    try {
      const read = await demo.mcp.call('get_booking', { reference: booking.reference });
      expect(read).toMatchObject({ ok: true, booking: { location_name: 'Northside Camden' } });
      expect(read.booking.spoken).toMatch(/Cut & blow-dry with Amara Okafor at Northside Camden/);

      const jo = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
      expect(jo.upcoming_bookings.map((b: { reference: string }) => b.reference)).toContain(
        booking.reference,
      );

      for (const dryRun of [true, false]) {
        const refused = await demo.mcp.call('reschedule', {
          reference: booking.reference,
          starts_at: '2026-11-24T16:00:00+00:00',
          ...(dryRun && { dry_run: true }),
        });
        expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'closed' });
        expect(refused.hint).toMatch(/Northside Camden no longer takes bookings.*cancel/);
        expect(refused.hint).not.toMatch(/another day|closed on/);
        expect(refused.alternatives).toBeUndefined();
      }

      const asked = await demo.mcp.call('cancel', { reference: booking.reference, dry_run: true });
      expect(asked).toMatchObject({ ok: true, dry_run: true, late: false });
      const cancelled = await demo.mcp.call('cancel', { reference: booking.reference });
      expect(cancelled).toMatchObject({ ok: true, dry_run: false, booking: { status: 'cancelled' } });
    } finally {
      await camden().set({ active: 1 }).execute();
    }
  });
});
