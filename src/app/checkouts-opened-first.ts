import { randomUUID } from 'node:crypto';
import { AppError } from '../domain/errors.ts';
import { providerDeadline } from './payment-calls.ts';
import type { CheckoutSession, PaymentProvider } from './payment-provider.ts';

/**
 * A deposit's checkout is opened at a provider across the network (Stripe) before the booking's write
 * transaction, never inside it: a transaction open while the provider answers (a second or so, a
 * minute while it struggles) held SQLite's one writer, so every booking of every organisation waited,
 * and on PostgreSQL the location's turn, so every booking there waited.
 *
 * The unit of work runs as it would, and where it would open a checkout it asks for one instead
 * (`take`); at its end, still inside its transaction, `endOfWork` throws if it asked, so nothing of it
 * is written. `withCheckoutsOpenedFirst` then opens what was asked, outside any transaction, and runs
 * the work again: the booking is decided afresh under its turns, with the reference, booking-page token
 * and checkout id the opened checkout names, and keeps it. A booking refused on the second run (its
 * slot taken meanwhile) leaves a checkout nobody was given a link to, which lapses unpaid.
 *
 * The checkouts of one run are told apart by the order they are asked in (a series asks for one per
 * visit): a run decides the same way as the one before it unless something changed meanwhile, and a
 * checkout that no longer fits what the run would open (another amount, another reference) is opened
 * again. A provider on this server (`local`) opens checkouts in the transaction, as it costs nothing.
 */
export class CheckoutOpener {
  readonly #payments: PaymentProvider;
  /** Opened checkouts, by the order the work asks for them. */
  readonly #opened: OpenedCheckout[] = [];
  #asked: { ordinal: number; ask: CheckoutAsk }[] = [];
  #ordinal = 0;
  /**
   * When the request stops waiting for the provider (providerDeadline), set as it first asks: every
   * checkout it opens, in every run, is opened by then, or the request answers 503
   * payments_unavailable; a request never waits for Stripe longer than a refund's or a charge's does.
   */
  #deadline: number | undefined;

  constructor(payments: PaymentProvider) {
    this.#payments = payments;
  }

  /** What the run's next checkout was opened as in an earlier run, if it was: its ids are kept. */
  planned(): CheckoutAsk | undefined {
    return this.#opened[this.#ordinal];
  }

  /**
   * The provider's URL of the run's next checkout, when it was opened for this very ask; otherwise
   * undefined, and the checkout is to be opened before the next run (the work writes nothing of it
   * and ends at `endOfWork`).
   */
  take(ask: CheckoutAsk): string | undefined {
    const ordinal = this.#ordinal++;
    const opened = this.#opened[ordinal];
    if (opened && sameCheckout(opened, ask)) return opened.providerUrl;
    // The provider keeps an id's first parameters (its idempotency key): another ask needs a new id.
    const session = opened ? { ...ask.session, id: randomUUID() } : ask.session;
    this.#asked.push({ ordinal, ask: { ...ask, session } });
    return undefined;
  }

  /** Inside the work's transaction, last: throws, rolling it back, if a checkout is to be opened first. */
  endOfWork(): void {
    if (this.#asked.length > 0) throw new CheckoutsToOpen();
  }

  startRun(): void {
    this.#ordinal = 0;
    this.#asked = [];
  }

  async openAsked(): Promise<void> {
    this.#deadline ??= providerDeadline();
    const deadline = this.#deadline;
    await Promise.all(
      this.#asked.map(async ({ ordinal, ask }) => {
        const providerUrl = await this.#payments.openCheckout(ask.session, ask.publicBaseUrl, deadline);
        this.#opened[ordinal] = { ...ask, providerUrl };
      }),
    );
  }
}

/** A checkout as a run of the work would open it. */
export interface CheckoutAsk {
  session: CheckoutSession;
  publicBaseUrl: string;
  /** The booking page's token, which the checkout's success URL may name. */
  pageToken: string;
}

interface OpenedCheckout extends CheckoutAsk {
  providerUrl: string;
}

/** Whether an opened checkout is the one asked for: its lifetime may differ, by the runs' clocks. */
function sameCheckout(opened: CheckoutAsk, ask: CheckoutAsk): boolean {
  const [a, b] = [opened.session, ask.session];
  return (
    a.id === b.id &&
    a.bookingReference === b.bookingReference &&
    a.amountMinor === b.amountMinor &&
    a.currency === b.currency &&
    a.successUrl === b.successUrl &&
    a.cancelUrl === b.cancelUrl &&
    opened.publicBaseUrl === ask.publicBaseUrl
  );
}

/** Thrown at the end of a run that asked for checkouts: everything it wrote rolls back. */
class CheckoutsToOpen extends Error {
  constructor() {
    super('Checkouts are opened at the payment provider before the booking is written.');
  }
}

/** Runs after which the work gives up: each opens checkouts only for what changed since the last. */
const MAX_RUNS = 4;

/**
 * Runs `work` (which opens its own write transaction and ends it with `opener.endOfWork()`), opening
 * the checkouts it asks for between runs. `opener` is undefined where the provider opens checkouts on
 * this server, or there is none: the work then runs once.
 */
export async function withCheckoutsOpenedFirst<T>(
  payments: PaymentProvider | null,
  work: (opener: CheckoutOpener | undefined) => Promise<T>,
): Promise<T> {
  if (!payments?.remote) return work(undefined);
  const opener = new CheckoutOpener(payments);
  for (let run = 1; ; run += 1) {
    opener.startRun();
    try {
      return await work(opener);
    } catch (error) {
      if (!(error instanceof CheckoutsToOpen)) throw error;
      if (run >= MAX_RUNS) {
        throw new AppError(
          'payments_unavailable',
          'The deposit’s checkout changed each time it was opened; try again in a moment.',
        );
      }
    }
    await opener.openAsked();
  }
}
