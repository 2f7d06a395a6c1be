import { describe, expect, it } from 'vitest';
import { parseTrustProxy, readConfig } from '../../src/app/config.ts';
import { normaliseEmail, normaliseName, normalisePhone } from '../../src/domain/contact.ts';
import { formatLocal, formatUtc } from '../../src/domain/time-format.ts';
import { isLoopback } from '../../src/http/https-guard.ts';

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

  it('parses TRUST_PROXY as a flag, a hop count or addresses', () => {
    expect(parseTrustProxy(undefined)).toBe(false);
    expect(parseTrustProxy('true')).toBe(true);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('10.0.0.0/8, 127.0.0.1')).toBe('10.0.0.0/8, 127.0.0.1');
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
