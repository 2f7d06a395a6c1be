import { describe, expect, it } from 'vitest';
import { type CheckoutAsk, withCheckoutsOpenedFirst } from '../../src/app/checkouts-opened-first.ts';
import { type CheckoutSession, localCheckout, type PaymentProvider } from '../../src/app/payments.ts';

/**
 * The runs of a unit of work that opens checkouts at a provider across the network: each run asks,
 * the checkouts are opened between runs, and a run that asks for what was opened keeps it. The
 * stripe-payments integration tests drive it through the real endpoints and the `stripe` package.
 */
function remoteProvider() {
  const opened: CheckoutSession[] = [];
  const provider: PaymentProvider = {
    ...localCheckout,
    remote: true,
    openCheckout: async (session) => {
      opened.push(session);
      return `https://pay.test/${session.id}`;
    },
  };
  return { provider, opened };
}

const askFor = (id: string, amountMinor = 2000, reference = 'AC-111111'): CheckoutAsk => ({
  session: {
    id,
    bookingReference: reference,
    amountMinor,
    currency: 'GBP',
    expiresAt: 2_000,
    createdAt: 1_000,
  },
  publicBaseUrl: 'https://book.test',
  pageToken: 'page',
});

describe('withCheckoutsOpenedFirst', () => {
  it('runs the work once, with no opener, for a provider on this server or none', async () => {
    for (const payments of [localCheckout, null]) {
      const runs: unknown[] = [];
      expect(await withCheckoutsOpenedFirst(payments, async (opener) => runs.push(opener))).toBe(1);
      expect(runs).toEqual([undefined]);
    }
  });

  it('opens what the first run asked for, and the next run keeps it under the same ids', async () => {
    const { provider, opened } = remoteProvider();
    const seen: (string | undefined)[] = [];
    const answer = await withCheckoutsOpenedFirst(provider, async (opener) => {
      const planned = opener!.planned();
      const urls = [
        opener!.take(askFor(planned?.session.id ?? 'first')),
        opener!.take(askFor(opener!.planned()?.session.id ?? 'second', 3000)),
      ];
      seen.push(...urls);
      opener!.endOfWork();
      return urls;
    });
    expect(answer).toEqual(['https://pay.test/first', 'https://pay.test/second']);
    expect(seen.slice(0, 2)).toEqual([undefined, undefined]);
    expect(opened.map((s) => [s.id, s.amountMinor])).toEqual([
      ['first', 2000],
      ['second', 3000],
    ]);
  });

  it('opens a checkout again, under a new id, when the next run asks for another amount', async () => {
    const { provider, opened } = remoteProvider();
    let run = 0;
    const url = await withCheckoutsOpenedFirst(provider, async (opener) => {
      run += 1;
      const id = opener!.planned()?.session.id ?? 'first';
      const taken = opener!.take(askFor(id, run === 1 ? 2000 : 2500));
      opener!.endOfWork();
      return taken;
    });
    expect(run).toBe(3);
    expect(opened).toHaveLength(2);
    expect(opened[1]!.id).not.toBe('first');
    expect(opened[1]!.amountMinor).toBe(2500);
    expect(url).toBe(`https://pay.test/${opened[1]!.id}`);
  });

  it('gives up with payments_unavailable when every run asks for another checkout', async () => {
    const { provider, opened } = remoteProvider();
    let amount = 1000;
    const run = withCheckoutsOpenedFirst(provider, async (opener) => {
      amount += 1;
      opener!.take(askFor(opener!.planned()?.session.id ?? 'first', amount));
      opener!.endOfWork();
    });
    await expect(run).rejects.toMatchObject({ code: 'payments_unavailable' });
    expect(opened).toHaveLength(3);
  });

  it('lets the work’s own errors and the provider’s through, and opens nothing after them', async () => {
    const { provider, opened } = remoteProvider();
    await expect(
      withCheckoutsOpenedFirst(provider, async () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const failing = { ...provider, openCheckout: () => Promise.reject(new Error('unreachable')) };
    await expect(
      withCheckoutsOpenedFirst(failing, async (opener) => {
        opener!.take(askFor('first'));
        opener!.endOfWork();
      }),
    ).rejects.toThrow('unreachable');
    expect(opened).toHaveLength(0);
  });
});
