import { describe, expect, it } from 'vitest';
import { sendHttp } from '../helpers/abuse-campaign.ts';
import { startServer } from '../helpers/cli.ts';
import { eachTestServes, prepareDatabase } from '../helpers/served-database.ts';

/**
 * `booking serve` behind proxies, as configured by TRUST_PROXY: the real process, raw HTTP from
 * loopback addresses standing for the proxy.
 */
const served = eachTestServes('booking-proxy-');

describe('TRUST_PROXY as a hop count', () => {
  it('believes the nearest proxy’s https and client address, and nothing a client forged before it', async () => {
    const [key] = await prepareDatabase(served.env.DATABASE_URL!);
    served.server = await startServer(['--port', '0'], { ...served.env, TRUST_PROXY: '1' });
    const server = served.server;
    /** A request as the one proxy in front relays it: it appends the address it saw. */
    const relayed = (client: string, authorization: string, forged = '203.0.113.66') =>
      sendHttp(server.url, {
        path: '/v1/locations',
        headers: {
          authorization,
          'x-forwarded-proto': 'https',
          'x-forwarded-for': `${forged}, ${client}`,
        },
      });

    const answered = await relayed('198.51.100.4', `Bearer ${key}`);
    expect(answered.status).toBe(200);

    // Failed authentications count per client the proxy saw, whatever the client put before it.
    const wrong = `Bearer bk_${'W'.repeat(40)}`;
    for (let i = 0; i < 30; i++) {
      expect((await relayed('198.51.100.9', wrong, `203.0.113.${i}`)).status).toBe(401);
    }
    expect((await relayed('198.51.100.9', wrong, '203.0.113.200')).status).toBe(429);
    expect((await relayed('198.51.100.10', wrong)).status).toBe(401);

    // Without the proxy's word, plain HTTP from a relayed client is refused as before.
    const plain = await sendHttp(server.url, {
      path: '/v1/locations',
      headers: {
        authorization: `Bearer ${key}`,
        'x-forwarded-proto': 'http',
        'x-forwarded-for': '198.51.100.4',
      },
    });
    expect(plain.status).toBe(403);
    expect(JSON.parse(plain.body.toString()).error.code).toBe('https_required');
  }, 60_000);
});
