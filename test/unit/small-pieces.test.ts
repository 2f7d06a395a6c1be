import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { parseTrustProxy, readConfig } from '../../src/app/config.ts';
import { normaliseEmail, normaliseName, normalisePhone } from '../../src/app/contact.ts';
import { countryInSentence } from '../../src/app/phone-destinations.ts';
import { formatLocal, formatUtc } from '../../src/domain/time-format.ts';
import { isLoopback } from '../../src/http/https-guard.ts';
import { withPublicPaths } from '../../src/http/pages/page-shell.ts';
import { publicPath } from '../../src/http/public-base-url.ts';

describe('time formats', () => {
  it('writes UTC with Z and whole seconds', () => {
    expect(formatUtc(Date.parse('2026-11-23T09:00:00.789Z'))).toBe('2026-11-23T09:00:00Z');
  });

  it('writes local times with the offset in force at that instant', () => {
    expect(formatLocal(Date.parse('2026-03-29T00:30:00Z'), 'Europe/London')).toBe(
      '2026-03-29T00:30:00+00:00',
    );
    expect(formatLocal(Date.parse('2026-03-29T01:30:00Z'), 'Europe/London')).toBe(
      '2026-03-29T02:30:00+01:00',
    );
    expect(formatLocal(Date.parse('2026-11-23T09:00:00Z'), 'Asia/Kathmandu')).toBe(
      '2026-11-23T14:45:00+05:45',
    );
    expect(formatLocal(Date.parse('2026-10-04T15:00:00Z'), 'Australia/Lord_Howe')).toBe(
      '2026-10-05T02:00:00+11:00',
    );
  });
});

describe('formatLocal agrees with luxon', () => {
  it('at any whole second of 2026-2027 in zones with odd offsets and DST changes', () => {
    const zones = [
      'Europe/London',
      'America/New_York',
      'Australia/Lord_Howe',
      'Asia/Kathmandu',
      'America/Santiago',
      'Pacific/Chatham',
      'America/St_Johns',
      'UTC',
    ];
    const from = Date.parse('2026-01-01T00:00:00Z') / 1000;
    const to = Date.parse('2028-01-01T00:00:00Z') / 1000;
    fc.assert(
      fc.property(fc.constantFrom(...zones), fc.integer({ min: from, max: to }), (zone, seconds) => {
        // Appointment times always carry a numeric offset; luxon writes Z for the zone named UTC.
        const expected = DateTime.fromMillis(seconds * 1000, { zone })
          .toISO({ suppressMilliseconds: true })!
          .replace(/Z$/, '+00:00');
        expect(formatLocal(seconds * 1000, zone)).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });

  it('around every offset change, minute by minute', () => {
    for (const [zone, iso] of [
      ['Europe/London', '2026-03-29T01:00:00Z'],
      ['Australia/Lord_Howe', '2026-10-03T15:30:00Z'],
      ['America/Santiago', '2026-04-05T03:00:00Z'],
    ] as const) {
      for (let t = Date.parse(iso) - 7_200_000; t <= Date.parse(iso) + 7_200_000; t += 60_000) {
        expect(formatLocal(t, zone)).toBe(
          DateTime.fromMillis(t, { zone }).toISO({ suppressMilliseconds: true }),
        );
      }
    }
  });
});

describe('contact normalisation', () => {
  it('normalises international phones to E.164 and refuses national ones without a country', () => {
    expect(normalisePhone('+44 (0)7911 123456')).toBe('+447911123456');
    expect(normalisePhone('+1 415-555-2671')).toBe('+14155552671');
    expect(normalisePhone('07911 123456')).toBeUndefined();
    expect(normalisePhone('07911 123456', 'GB')).toBe('+447911123456');
    expect(normalisePhone('+44 12')).toBeUndefined();
    expect(normalisePhone('not a phone')).toBeUndefined();
  });

  it('trims and lower-cases e-mails', () => {
    expect(normaliseEmail('  Jo@Example.COM ')).toBe('jo@example.com');
    expect(normaliseEmail('jo@')).toBeUndefined();
  });

  it('trims names and limits them to 60 characters', () => {
    expect(normaliseName('  Jo ')).toBe('Jo');
    expect(normaliseName('')).toBeUndefined();
    expect(normaliseName('😀'.repeat(60))).toBe('😀'.repeat(60));
    expect(normaliseName('a'.repeat(61))).toBeUndefined();
  });
});

describe('countries named in a sentence', () => {
  it('says "the" where English does', () => {
    expect(['GB', 'US', 'NL', 'AE', 'DO', 'KY', 'FR', 'IE', 'DE'].map(countryInSentence)).toEqual([
      'the United Kingdom',
      'the United States',
      'the Netherlands',
      'the United Arab Emirates',
      'the Dominican Republic',
      'the Cayman Islands',
      'France',
      'Ireland',
      'Germany',
    ]);
  });
});

describe('configuration', () => {
  it('reads the environment with the documented defaults', () => {
    expect(readConfig({})).toMatchObject({
      databaseUrl: 'sqlite:db/booking.sqlite',
      port: 8080,
      host: '127.0.0.1',
      tls: null,
      trustProxy: false,
      secret: null,
      logLevel: 'info',
    });
    expect(() => readConfig({ TLS_CERT: 'cert.pem' })).toThrow(/together/);
    expect(() => readConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });

  it('reaches Twilio and Stripe over https, or over plain http on this machine only', () => {
    const twilio = (base: string) =>
      readConfig({
        TWILIO_ACCOUNT_SID: 'AC123',
        TWILIO_AUTH_TOKEN: 'token',
        TWILIO_FROM: '+15005550006',
        TWILIO_API_BASE: base,
      });
    const stripe = (base: string) =>
      readConfig({
        PAYMENT_PROVIDER: 'stripe',
        STRIPE_SECRET_KEY: 'sk_test_x',
        STRIPE_WEBHOOK_SECRET: 'whsec_x',
        STRIPE_API_BASE: base,
      });
    for (const allowed of [
      'https://api.example.com',
      'https://10.0.0.5:8443',
      'http://127.0.0.1:4010',
      'http://127.8.9.10',
      'http://localhost:4010',
      'http://[::1]:4010',
    ]) {
      expect(twilio(allowed).sms?.apiBase, allowed).toBe(allowed);
      expect(stripe(allowed).stripe?.apiBase.origin, allowed).toBe(new URL(allowed).origin);
    }
    for (const refused of [
      'http://api.example.com',
      'http://10.0.0.5:8080',
      'http://128.0.0.1',
      'http://localhost.example.com',
      'http://[::2]',
      'http://[::ffff:10.0.0.1]',
    ]) {
      expect(() => twilio(refused), refused).toThrow(
        /^TWILIO_API_BASE must be an https URL \(plain http only to this machine: 127\.0\.0\.1, \[::1\] or localhost\)/,
      );
      expect(() => stripe(refused), refused).toThrow(/^STRIPE_API_BASE must be an https URL/);
    }
    expect(readConfig({}).stripe).toBeNull();
  });

  it('reads the organisation budgets: whole numbers in digits, within their bounds', () => {
    expect(readConfig({})).toMatchObject({ organisationRequestsPerMinute: 600, organisationSseStreams: 10 });
    expect(
      readConfig({ ORGANISATION_REQUESTS_PER_MINUTE: ' 2400 ', ORGANISATION_SSE_STREAMS: '3' }),
    ).toMatchObject({ organisationRequestsPerMinute: 2400, organisationSseStreams: 3 });
    expect(readConfig({ ORGANISATION_REQUESTS_PER_MINUTE: '100000000' }).organisationRequestsPerMinute).toBe(
      100_000_000,
    );
    // Never below a key's default limit (120), which the budget never holds a key below.
    expect(readConfig({ ORGANISATION_REQUESTS_PER_MINUTE: '120' }).organisationRequestsPerMinute).toBe(120);
    for (const bad of ['119', '0', '-5', '1e3', '0x10', '12.5', 'lots', '100000001']) {
      expect(() => readConfig({ ORGANISATION_REQUESTS_PER_MINUTE: bad })).toThrow(
        `ORGANISATION_REQUESTS_PER_MINUTE must be a whole number from 120 to 100000000, got "${bad}".`,
      );
    }
    expect(() => readConfig({ ORGANISATION_SSE_STREAMS: '0' })).toThrow(/ORGANISATION_SSE_STREAMS/);
  });

  it('reads the calendar settings: the refresh period in seconds, loopback off unless asked', () => {
    expect(readConfig({})).toMatchObject({ calendarRefreshMs: 300_000, calendarAllowLoopback: false });
    expect(readConfig({ CALENDAR_REFRESH_SECONDS: '60', CALENDAR_ALLOW_LOOPBACK: '1' })).toMatchObject({
      calendarRefreshMs: 60_000,
      calendarAllowLoopback: true,
    });
    for (const bad of ['0', '86401', '1.5', 'often']) {
      expect(() => readConfig({ CALENDAR_REFRESH_SECONDS: bad })).toThrow(
        `CALENDAR_REFRESH_SECONDS must be a whole number from 1 to 86400, got "${bad}".`,
      );
    }
    expect(() => readConfig({ CALENDAR_ALLOW_LOOPBACK: 'yes' })).toThrow(
      'CALENDAR_ALLOW_LOOPBACK must be 1 or 0, got "yes".',
    );
  });

  it('parses TRUST_PROXY as a flag, a hop count or addresses', () => {
    expect(parseTrustProxy(undefined)).toBe(false);
    expect(parseTrustProxy('true')).toBe(true);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('10.0.0.0/8, 127.0.0.1')).toBe('10.0.0.0/8, 127.0.0.1');
    // What proxy-addr (Fastify's trustProxy) takes, as it takes it.
    for (const list of [
      'loopback, linklocal,uniquelocal',
      '192.168.0.0/255.255.0.0',
      'fe80::/10,::1',
      '10.1.2.3/32',
    ]) {
      expect(parseTrustProxy(list), list).toBe(list);
    }
    // What it refuses, named: Fastify's own refusal ("invalid IP address: maybe") named no setting.
    for (const [list, wrong] of [
      ['maybe', 'maybe'],
      ['10.0.0.0/8, proxy.internal', 'proxy.internal'],
      ['10.0.0.0/33', '10.0.0.0/33'],
      ['::1/255.0.0.0', '::1/255.0.0.0'],
      ['yes', 'yes'],
    ]) {
      expect(() => parseTrustProxy(list), list).toThrow(
        `TRUST_PROXY must be true, a hop count, or comma-separated addresses and CIDRs (or loopback, linklocal, uniquelocal), got "${wrong}".`,
      );
    }
  });
});

describe('loopback addresses', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['128.0.0.1', false],
    [undefined, false],
  ])('%s is loopback: %s', (address, expected) => expect(isLoopback(address)).toBe(expected));
});

describe('public paths under PUBLIC_BASE_URL', () => {
  const under = (publicBaseUrl: string | null) =>
    ({ server: { publicLinks: { publicBaseUrl, allowedHosts: new Set() } } }) as unknown as Parameters<
      typeof publicPath
    >[0];

  it('puts its path before this server’s paths only, and nothing without one', () => {
    const booking = under('https://example.com/booking');
    expect(publicPath(booking, '/p/acme')).toBe('/booking/p/acme');
    expect(publicPath(booking, '/console/diary?location=soho')).toBe('/booking/console/diary?location=soho');
    for (const other of ['https://pay.example/x', '//evil.example/x', '/\\evil.example', 'tel:+44']) {
      expect(publicPath(booking, other)).toBe(other);
    }
    expect(publicPath(under('https://example.com'), '/p/acme')).toBe('/p/acme');
    expect(publicPath(under(null), '/p/acme')).toBe('/p/acme');
  });

  it('rewrites the markup’s own href, action and src, never text or another host’s address', () => {
    const html = [
      '<a href="/p/acme?location=soho&amp;date=2026-11-23">Book</a>',
      '<form method="post" action="/p/manage/t/pay"><input type="hidden" name="next" value="/console/diary">',
      '<script src="/console/assets/console.js" defer></script>',
      '<a href="https://pay.example/x">Pay</a><a href="//evil.example/">x</a><a href="tel:+44">Call</a>',
      '<p>a note: href=&quot;/p/x&quot;</p><div data-src="/p/y"></div>',
    ].join('\n');
    expect(withPublicPaths(under(null), html)).toBe(html);
    expect(withPublicPaths(under('https://example.com/a$&b'), html)).toBe(
      [
        '<a href="/a$&amp;b/p/acme?location=soho&amp;date=2026-11-23">Book</a>',
        '<form method="post" action="/a$&amp;b/p/manage/t/pay"><input type="hidden" name="next" value="/console/diary">',
        '<script src="/a$&amp;b/console/assets/console.js" defer></script>',
        '<a href="https://pay.example/x">Pay</a><a href="//evil.example/">x</a><a href="tel:+44">Call</a>',
        '<p>a note: href=&quot;/p/x&quot;</p><div data-src="/p/y"></div>',
      ].join('\n'),
    );
  });
});
