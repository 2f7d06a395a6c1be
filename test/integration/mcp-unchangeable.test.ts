import { describe, expect, it } from 'vitest';
import { connectOverRest, demoMcp } from '../helpers/mcp-harness.ts';
import { bookOnPage, pagePathOf, referenceOnPage } from '../helpers/public-booking.ts';

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
});
