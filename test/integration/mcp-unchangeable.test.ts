import { describe, expect, it } from 'vitest';
import { checkOut, complete, markNoShow } from '../../src/app/staff-actions.ts';
import {
  connectInProcess,
  connectOverRest,
  demoCatalogue,
  demoMcp,
  type Json,
} from '../helpers/mcp-harness.ts';
import { bookOnPage, pagePathOf, referenceOnPage } from '../helpers/public-booking.ts';
import { startTestApp } from '../helpers/test-app.ts';

/**
 * A booking the engine will not change (conflict, not_changeable) for another reason than its status:
 * an appointment that has started, and a public-page booking still waiting for its customer's code.
 * The hint says that reason, not "it is confirmed (or pending payment) and can no longer be changed",
 * which an agent reads to the caller as a refusal without a way on. Through the SDK's client on the
 * demo catalogue; Monday 23 November 2026, 09:00 in London.
 */
const demo = demoMcp();

describe('a booking that cannot be changed says why', () => {
  it('an appointment that has started: said as started, not as confirmed', async () => {
    const jo = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const booked = await demo.mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-24T10:00:00+00:00',
      client_id: jo.client.id,
    });
    expect(booked.ok, JSON.stringify(booked)).toBe(true);
    demo.t.clock.set('2026-11-24T10:20:00Z');
    for (const [tool, args] of [
      ['cancel', {}],
      ['reschedule', { starts_at: '2026-11-26T10:00:00+00:00' }],
    ] as const) {
      const refused = await demo.mcp.call(tool, { reference: booked.booking.reference, ...args });
      expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'not_changeable' });
      expect(refused.hint).toMatch(/already started/);
      expect(refused.hint).not.toMatch(/is confirmed/);
    }
  });

  it('a public booking waiting for its code: moved once confirmed, and may be cancelled now', async () => {
    const path = pagePathOf(
      await bookOnPage(demo.t, 'northside-hair', {
        location: 'camden',
        service: 'cut',
        startsAt: '2026-11-25T14:00:00Z',
        firstName: 'Nia',
        lastName: 'Obi',
        phone: '07911 123461',
      }),
    );
    const reference = await referenceOnPage(demo.t, path);
    const refused = await demo.mcp.call('reschedule', {
      reference,
      starts_at: '2026-11-25T15:00:00+00:00',
    });
    expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'not_changeable' });
    expect(refused.hint).toMatch(/code/);
    expect(refused.hint).toMatch(/can be cancelled/);
    expect(refused.hint).not.toMatch(/can no longer be changed/);
    // The same over REST (`booking mcp --base-url`), whose refusal carries the engine's words.
    const overRest = await connectOverRest(demo.t);
    try {
      const again = await overRest.call('reschedule', { reference, starts_at: '2026-11-25T15:00:00+00:00' });
      expect(again.hint).toBe(refused.hint);
    } finally {
      await overRest.close();
    }
  });

  it('an appointment that took place, or was missed: said in words, never as its status ("is no show")', async () => {
    const jo = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const references: string[] = [];
    for (const hour of ['10', '12', '14']) {
      const booked = await demo.mcp.call('book', {
        location: 'camden',
        services: 'cut',
        staff: 'Amara',
        starts_at: `2026-11-24T${hour}:00:00+00:00`,
        client_id: jo.client.id,
      });
      references.push(booked.booking.reference);
    }
    demo.t.clock.set('2026-11-24T16:00:00Z');
    const organisation = (
      await demo.t.database.db.selectFrom('organisations').select('id').executeTakeFirstOrThrow()
    ).id;
    const [missed, atTheDesk, done] = references as [string, string, string];
    const now = demo.t.clock.nowMs();
    await markNoShow(demo.t.database.db, organisation, missed, now);
    await checkOut(demo.t.database.db, organisation, atTheDesk, now);
    await complete(demo.t.database.db, organisation, done, now);
    for (const [reference, became] of [
      [missed, 'was missed (marked as a no-show)'],
      [atTheDesk, 'has already taken place and awaits payment at the desk'],
      [done, 'has already taken place'],
    ] as const) {
      for (const [tool, args] of [
        ['cancel', {}],
        ['reschedule', { starts_at: 'Thursday at 3pm' }],
      ] as const) {
        const refused = await demo.mcp.call(tool, { reference, ...args });
        expect(refused).toMatchObject({ ok: false, code: 'conflict', reason: 'not_changeable' });
        expect(refused.hint).toBe(
          `That booking ${became} and can no longer be changed; check the details with the caller.`,
        );
      }
      const unsent = await demo.mcp.call('send_link', { reference });
      expect(unsent).toMatchObject({ ok: false, code: 'conflict' });
      expect(unsent.hint).toBe(
        `Nothing was sent: that booking ${became}; tell the caller, and offer to take a message for the salon if they need more.`,
      );
    }
  });
});

describe('a policy of one hour or one day is said in the singular', () => {
  it('"1 hour" and "1 day", not "1 hours" and "1 days"', async () => {
    const catalogue = demoCatalogue() as Json;
    Object.assign(catalogue.locations[0].policy, {
      max_advance_days: 1,
      cancellation_window_hours: 1,
      late_cancellation: 'forbid',
      late_reschedule: 'forbid',
    });
    const t = await startTestApp({ catalogues: [catalogue], now: '2026-11-23T09:00:00Z' });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const info = await mcp.call('get_location_info', { location: 'camden' });
      expect(info.policy_spoken).toContain(
        'Cancelling or changing less than 1 hour before the appointment is late',
      );
      expect(info.policy_spoken).toContain('are taken up to 1 day ahead');
      const booked = await mcp.call('book', {
        location: 'camden',
        services: 'cut',
        starts_at: 'today at 10am',
        client: { first_name: 'Nia', last_name: 'Obi', phone: '07911 123461' },
      });
      t.clock.set('2026-11-23T09:30:00Z');
      const cancel = await mcp.call('cancel', { reference: booked.booking.reference, dry_run: true });
      expect(cancel).toMatchObject({ ok: false, reason: 'late_change' });
      expect(cancel.hint).toMatch(
        /^Cancellations less than 1 hour before the appointment are not allowed here\. /,
      );
      const move = await mcp.call('reschedule', {
        reference: booked.booking.reference,
        starts_at: 'today at 11am',
        dry_run: true,
      });
      expect(move.hint).toMatch(/^Changes less than 1 hour before the appointment are not allowed here\. /);
      // REST says it the same way.
      const rest = await t.request({
        method: 'POST',
        url: `/v1/bookings/${booked.booking.reference}/cancel`,
      });
      expect(rest.statusCode).toBe(409);
      expect(rest.json().error.message).toBe(
        'Cancellations less than 1 hour before the appointment are not allowed here.',
      );
    } finally {
      await mcp.close();
      await t.close();
    }
  });
});
