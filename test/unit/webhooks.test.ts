import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressKind, addressRefusal, checkEndpointUrl } from '../../src/app/webhooks/destinations.ts';
import { httpSender } from '../../src/app/webhooks/sender.ts';
import { newWebhookSecret, signatureHeader, verifySignature } from '../../src/app/webhooks/signature.ts';
import { AppError } from '../../src/domain/errors.ts';
import {
  bookingEventType,
  failedTooLong,
  firstTryBy,
  nextAttemptAt,
  RETRY_WINDOW_UNITS,
  retryDelayUnits,
} from '../../src/domain/webhooks.ts';

const MINUTE = 60_000;
const STRICT = { allowInsecure: false, allowPrivateNetworks: false };

describe('the retry schedule', () => {
  it('waits 1, 2, 4, 8, 16, 32 minutes, then an hour', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 40].map(retryDelayUnits)).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
  });

  it('tries until 72 hours after the event, never after', () => {
    const created = Date.UTC(2026, 2, 29, 0, 30); // across Europe's clock change: the schedule is in UTC
    let at = created;
    let attempts = 1;
    const tries = [at];
    for (;;) {
      const next = nextAttemptAt(created, attempts, at, MINUTE);
      if (next === null) break;
      tries.push(next);
      at = next;
      attempts += 1;
    }
    expect(tries.slice(0, 8).map((t) => (t - created) / MINUTE)).toEqual([0, 1, 3, 7, 15, 31, 63, 123]);
    expect(tries[tries.length - 1]! - created).toBeLessThanOrEqual(72 * 60 * MINUTE);
    expect(tries.length).toBe(7 + Math.floor((72 * 60 - 63) / 60));
  });

  it('never schedules past the window, and always later than now, whatever the unit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 0, max: 72 * 60 }),
        fc.integer({ min: 1, max: MINUTE }),
        (attempts, elapsedUnits, unitMs) => {
          const created = 1_800_000_000_000;
          const now = created + elapsedUnits * unitMs;
          const next = nextAttemptAt(created, attempts, now, unitMs);
          if (next === null)
            return now + retryDelayUnits(attempts) * unitMs > created + RETRY_WINDOW_UNITS * unitMs;
          return next > now && next <= created + RETRY_WINDOW_UNITS * unitMs;
        },
      ),
    );
  });

  it('disables after 3 days of failures', () => {
    const since = Date.UTC(2026, 10, 1);
    expect(failedTooLong(since, since + 3 * 24 * 60 * MINUTE - 1, MINUTE)).toBe(false);
    expect(failedTooLong(since, since + 3 * 24 * 60 * MINUTE, MINUTE)).toBe(true);
    // At an event's last try: failing since its first try, however late that came.
    const lastTry = since + 70 * 60 * MINUTE;
    expect(failedTooLong(since, lastTry, MINUTE, since)).toBe(true);
    expect(failedTooLong(since, lastTry, MINUTE, since - 1)).toBe(false);
    // An event that waited behind another of its booking, given up after a few tries in its last
    // moments: every try failed, but the endpoint has been failing for minutes, not days.
    const moments = since + 31 * MINUTE;
    expect(failedTooLong(since, moments, MINUTE, since)).toBe(false);
    expect(failedTooLong(since, since + 36 * 60 * MINUTE, MINUTE, since)).toBe(true);
  });

  it('tells when the first try of a delivery came at the latest, from its schedule', () => {
    const now = Date.UTC(2026, 10, 4);
    expect(firstTryBy(1, now, MINUTE)).toBe(now);
    // Six doubling retries (63 minutes), then hourly ones.
    expect(firstTryBy(7, now, MINUTE)).toBe(now - 63 * MINUTE);
    expect(firstTryBy(9, now, MINUTE)).toBe(now - (63 + 120) * MINUTE);
  });
});

describe('which change is which event', () => {
  it.each([
    [null, 'confirmed', undefined, 'booking.created'],
    [null, 'pending_payment', undefined, 'booking.created'],
    ['pending_payment', 'confirmed', undefined, 'booking.confirmed'],
    ['pending_confirmation', 'confirmed', undefined, 'booking.confirmed'],
    ['confirmed', 'confirmed', { rescheduled: {} }, 'booking.rescheduled'],
    ['confirmed', 'confirmed', { fee: 'no_show' }, null],
    ['confirmed', 'cancelled', undefined, 'booking.cancelled'],
    ['pending_payment', 'expired', undefined, 'booking.expired'],
    ['confirmed', 'completed', undefined, 'booking.completed'],
    ['confirmed', 'no_show', undefined, 'booking.no_show'],
  ] as const)('%s → %s %o: %s', (from, to, details, type) => {
    expect(bookingEventType({ from, to, details })).toBe(type);
  });
});

describe('where deliveries may go', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12::1', 'private'],
    ['fec0::1', 'private'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::808:808', 'public'],
    ['::7f00:1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['2002:808:808::1', 'public'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['224.0.0.1', 'reserved'],
  ])('%s is %s', (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });

  it('allows private ranges only by setting, and metadata never', () => {
    const open = { allowInsecure: true, allowPrivateNetworks: true };
    expect(addressRefusal('10.0.0.1', STRICT)).toMatch(/private/);
    expect(addressRefusal('10.0.0.1', open)).toBeNull();
    expect(addressRefusal('127.0.0.1', STRICT)).toMatch(/loopback/);
    expect(addressRefusal('127.0.0.1', { allowInsecure: true, allowPrivateNetworks: false })).toBeNull();
    expect(addressRefusal('169.254.169.254', open)).toMatch(/never/);
  });

  const refusal = async (url: string, policy = STRICT) => {
    try {
      await checkEndpointUrl(url, policy);
      return null;
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).param).toBe('url');
      return (error as AppError).message;
    }
  };

  it('keeps loopback to WEBHOOK_ALLOW_INSECURE: private networks allowed are not this machine', async () => {
    const privateOnly = { allowInsecure: false, allowPrivateNetworks: true };
    expect(addressRefusal('10.0.0.1', privateOnly)).toBeNull();
    expect(addressRefusal('127.0.0.1', privateOnly)).toMatch(/loopback.*WEBHOOK_ALLOW_INSECURE=1/);
    expect(addressRefusal('::1', privateOnly)).toMatch(/loopback/);
    expect(await refusal('https://10.1.2.3/hook', privateOnly)).toBeNull();
    expect(await refusal('https://127.0.0.1:9/hook', privateOnly)).toMatch(/loopback/);
    expect(await refusal('https://[::1]:9/hook', privateOnly)).toMatch(/loopback/);
    expect(await refusal('https://localhost:9/hook', privateOnly)).toMatch(/this machine/);
    // Nor is anything sent there (an endpoint saved under other settings).
    const sender = httpSender(privateOnly, 1_000);
    try {
      expect(await sender.post('https://127.0.0.1:9/hook', {}, '{}')).toEqual({
        error: expect.stringMatching(/loopback/),
      });
      expect(await sender.post('https://localhost:9/hook', {}, '{}')).toEqual({
        error: expect.stringMatching(/loopback/),
      });
    } finally {
      sender.close();
    }
  });

  it('takes https to a public address, and plain http to loopback only when insecure is allowed', async () => {
    expect(await refusal('https://8.8.8.8/hook')).toBeNull();
    expect(await refusal('http://8.8.8.8/hook')).toMatch(/https/);
    expect(await refusal('http://127.0.0.1:9/hook')).toMatch(/https/);
    expect(
      await refusal('http://127.0.0.1:9/hook', { allowInsecure: true, allowPrivateNetworks: false }),
    ).toBeNull();
    expect(
      await refusal('http://localhost:9/hook', { allowInsecure: true, allowPrivateNetworks: false }),
    ).toBeNull();
    expect(await refusal('https://localhost/hook')).toMatch(/this machine/);
    expect(await refusal('https://[::ffff:169.254.169.254]/')).toMatch(/metadata/);
    expect(await refusal('ftp://8.8.8.8/')).toMatch(/https/);
    expect(await refusal('https://8.8.8.8/x\nhttps://8.8.4.4/y')).toMatch(/one address/);
    expect(await refusal('https://8.8.8.8/a\tb')).toMatch(/one address/);
  });
});

describe('the signature', () => {
  it('verifies what was signed, within the tolerance, and nothing else', () => {
    const secret = newWebhookSecret();
    const body = '{"id":"e1","type":"booking.created"}';
    const header = signatureHeader(secret, body, 1_800_000_000);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature(secret, header, body, 1_800_000_100)).toBe(true);
    expect(verifySignature(secret, header, `${body} `, 1_800_000_100)).toBe(false);
    expect(verifySignature(newWebhookSecret(), header, body, 1_800_000_100)).toBe(false);
    expect(verifySignature(secret, header, body, 1_800_000_301)).toBe(false);
    expect(verifySignature(secret, header.replace('t=1800000000', 't=1800000001'), body, 1_800_000_000)).toBe(
      false,
    );
  });
});
