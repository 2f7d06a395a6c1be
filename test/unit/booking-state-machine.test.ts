import { describe, expect, it } from 'vitest';
import {
  type BookingEvent,
  type BookingStatus,
  effectiveStatus,
  holdEnd,
  TRANSITIONS,
  transition,
} from '../../src/domain/booking/state-machine.ts';

const STATUSES: BookingStatus[] = [
  'pending_payment',
  'pending_confirmation',
  'confirmed',
  'needs_checkout',
  'completed',
  'no_show',
  'cancelled',
  'expired',
];
const EVENTS = Object.keys(TRANSITIONS) as BookingEvent[];

const start = Date.parse('2026-11-24T10:00:00Z');
const before = start - 3_600_000;
const after = start + 3_600_000;
const booking = (status: BookingStatus, holdExpiresAt: number | null = null) => ({
  status,
  startsAt: start,
  holdExpiresAt,
});
const heldUntil = (status: BookingStatus) =>
  booking(
    status,
    status === 'pending_payment' || status === 'pending_confirmation' ? start + 86_400_000 : null,
  );

/**
 * The whole table, written out: event -> statuses it may start from, the result, and when. A hold
 * (held here a day past the start) lapses at the start all the same: it is confirmed before it or not
 * at all.
 */
const EXPECTED: Record<
  BookingEvent,
  { from: BookingStatus[]; to: BookingStatus | 'same'; when: 'before' | 'after' | 'any' }
> = {
  deposit_paid: { from: ['pending_payment'], to: 'confirmed', when: 'before' },
  requirements_completed: { from: ['pending_confirmation'], to: 'confirmed', when: 'before' },
  hold_lapsed: { from: ['pending_payment', 'pending_confirmation'], to: 'expired', when: 'after' },
  cancel: { from: ['pending_payment', 'pending_confirmation', 'confirmed'], to: 'cancelled', when: 'before' },
  reschedule: { from: ['pending_payment', 'pending_confirmation', 'confirmed'], to: 'same', when: 'before' },
  check_out: { from: ['confirmed'], to: 'needs_checkout', when: 'after' },
  complete: { from: ['confirmed', 'needs_checkout'], to: 'completed', when: 'after' },
  no_show: { from: ['confirmed'], to: 'no_show', when: 'after' },
};

describe('the booking state machine', () => {
  for (const event of EVENTS) {
    for (const status of STATUSES) {
      const rule = EXPECTED[event];
      for (const [label, now] of [
        ['before the start', before],
        ['after the start', after],
      ] as const) {
        const allowed =
          rule.from.includes(status) &&
          (rule.when === 'any' || (rule.when === 'before') === (now === before));
        it(`${event} from ${status} ${label}: ${allowed ? 'allowed' : 'refused'}`, () => {
          const result = transition(heldUntil(status), event, now);
          if (allowed)
            expect(result).toEqual({ ok: true, from: status, to: rule.to === 'same' ? status : rule.to });
          else expect(result).toMatchObject({ ok: false, reason: expect.any(String) });
        });
      }
    }
  }

  it('expires a pending hold once it lapses, and nothing else', () => {
    for (const status of ['pending_payment', 'pending_confirmation'] as const) {
      const held = booking(status, before + 1000);
      expect(transition(held, 'hold_lapsed', before)).toMatchObject({ ok: false });
      expect(transition(held, 'hold_lapsed', before + 1000)).toEqual({
        ok: true,
        from: status,
        to: 'expired',
      });
    }
    expect(transition(booking('confirmed'), 'hold_lapsed', after)).toMatchObject({ ok: false });
  });

  it('treats a lapsed hold as expired before anything has written it (lazy expiry)', () => {
    const lapsed = booking('pending_payment', before - 1);
    expect(effectiveStatus(lapsed, before)).toBe('expired');
    expect(transition(lapsed, 'deposit_paid', before)).toMatchObject({
      ok: false,
      reason: 'the booking has lapsed (its hold expired)',
    });
    expect(transition(lapsed, 'cancel', before)).toMatchObject({ ok: false });
  });

  it('treats a hold whose appointment has started as lapsed, whatever its stored expiry', () => {
    for (const status of ['pending_payment', 'pending_confirmation'] as const) {
      const held = booking(status, after);
      expect(effectiveStatus(held, start - 1)).toBe(status);
      expect(effectiveStatus(held, start)).toBe('expired');
    }
    expect(transition(booking('pending_payment', after), 'deposit_paid', start)).toMatchObject({
      ok: false,
      reason: 'the booking has lapsed (its hold expired)',
    });
    expect(effectiveStatus(booking('confirmed'), after)).toBe('confirmed');
  });

  it('ends a new hold after its minutes, or at the start when that comes first', () => {
    expect(holdEnd(before, 15, start)).toBe(before + 15 * 60_000);
    expect(holdEnd(before, 90, start)).toBe(start);
  });
});
