import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
let lines: string[];
beforeEach(async () => {
  lines = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  t = await startTestApp({ http: { logger: pino({ level: 'debug' }, sink) } });
});
afterEach(async () => {
  await t.close();
});

describe('request logs', () => {
  it('carry request id, route, status and duration for every request', async () => {
    const response = await t.request({ method: 'GET', url: '/v1/locations/soho/services' });
    const entry = lines
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'request completed' && l.request_id === response.headers['x-request-id']);
    expect(entry).toMatchObject({
      request_id: response.headers['x-request-id'],
      method: 'GET',
      route: '/v1/locations/:slug/services',
      status: 200,
      duration_ms: expect.any(Number),
    });
  });

  it('never contain keys, phones, e-mails, names or bodies', async () => {
    const secrets = [
      'Zebedee',
      'Quixote-Smythe',
      '+447400123456',
      'zebedee.q@example.com',
      t.keys.readWrite,
      t.keys.read,
    ];
    await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: {
        first_name: 'Zebedee',
        last_name: 'Quixote-Smythe',
        phone: '+447400123456',
        email: 'zebedee.q@example.com',
      },
    });
    await t.request({ method: 'GET', url: `/v1/clients?phone=${encodeURIComponent('+447400123456')}` });
    await t.request({ method: 'GET', url: '/v1/clients?email=zebedee.q%40example.com', key: t.keys.read });
    await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Zebedee', last_name: 'x'.repeat(99), phone: '+447400123456' },
    });
    await t.request({
      method: 'GET',
      url: '/v1/clients?phone=%2B447400123456',
      key: `${t.keys.read.slice(0, -1)}X`,
    });
    // A fault, whose error is logged in full.
    await t.database.db.schema.alterTable('clients').renameTo('clients_gone').execute();
    await t.request({ method: 'GET', url: `/v1/clients?phone=${encodeURIComponent('+447400123456')}` });
    expect(lines.length).toBeGreaterThan(5);
    const log = lines.join('\n');
    for (const secret of secrets) expect(log).not.toContain(secret);
    expect(log).not.toContain('447400123456');
    expect(log).toContain('request failed');
  });
});
