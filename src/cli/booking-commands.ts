import { Argument, type Command, Option } from 'commander';
import type { Clock } from '../app/clock.ts';
import { loadBookingDetail, refusedRefundWords } from '../app/console-service.ts';
import type { AppDeps } from '../app/deps.ts';
import { requireOrganisationId } from '../app/directory-service.ts';
import {
  chargeFee,
  checkOut,
  complete,
  FEE_KINDS,
  markNoShow,
  organisationsWithReference,
  payDepositByStaff,
  waiveFee,
} from '../app/staff-actions.ts';
import type { Db } from '../data/database.ts';
import type { Fee, FeeKind } from '../domain/booking/booking.ts';
import { referenceReadings } from '../domain/booking/reference.ts';
import { effectiveStatus } from '../domain/booking/state-machine.ts';
import { AppError } from '../domain/errors.ts';
import { formatLocal } from '../domain/time-format.ts';
import { CommandError, formatTime, out } from './output.ts';

type WithDb = <T>(work: (db: Db, clock: Clock, deps: AppDeps) => Promise<T>) => Promise<T>;

const ACTIONS = {
  complete: 'the appointment was delivered and paid (confirmed or needs_checkout -> completed)',
  'no-show': 'the client did not come (confirmed -> no_show; records the no-show fee under protection)',
  checkout: 'the appointment took place, not yet paid at the till (confirmed -> needs_checkout)',
  'pay-deposit': 'the deposit was paid (pending_payment -> confirmed)',
  'charge-fee':
    'charge the pending late-cancellation or no-show fee (deposit credit first, then the saved card)',
  'waive-fee': 'waive the pending late-cancellation or no-show fee',
} as const;
type Action = keyof typeof ACTIONS;

/**
 * `booking bookings <reference> [action]`: staff-console actions, through the same service layer; with
 * no action, the booking as staff see it (nothing of its client: the output may end up in a log).
 */
export function addBookingCommands(program: Command, withDb: WithDb): void {
  program
    .command('bookings')
    .description('Show one booking, or take a staff action on it that the REST API does not offer')
    .argument('<reference>', 'booking reference, e.g. NHC-7K3M9P (any case)')
    .addArgument(
      new Argument('[action]', 'what to do (none: show the booking)').choices(Object.keys(ACTIONS)),
    )
    .addOption(
      new Option(
        '--fee <kind>',
        'which fee charge-fee/waive-fee process (default: the booking status decides)',
      ).choices(FEE_KINDS),
    )
    .option('--org <slug>', 'organisation slug, when several organisations have this reference')
    .addHelpText(
      'after',
      `\nActions:\n${Object.entries(ACTIONS)
        .map(([name, text]) => `  ${name.padEnd(12)} ${text}`)
        .join('\n')}`,
    )
    .action(
      async (reference: string, action: Action | undefined, options: { fee?: FeeKind; org?: string }) => {
        if (reference.trim() === '') {
          throw new CommandError('Give the booking reference, e.g. NHC-7K3M9P.');
        }
        if (options.fee !== undefined && action !== 'charge-fee' && action !== 'waive-fee') {
          throw new CommandError('--fee applies only to charge-fee and waive-fee.');
        }
        const line = await withDb(async (db, clock, deps) => {
          const { organisationId, stored } = await holderOf(db, reference, options.org);
          const now = clock.nowMs();
          return refusalsNaming(stored, async () => {
            switch (action) {
              case undefined:
                return describeBooking(db, organisationId, reference, now);
              case 'charge-fee':
              case 'waive-fee': {
                const { booking, fee } =
                  action === 'charge-fee'
                    ? await chargeFee(db, organisationId, reference, now, options.fee, deps.payments)
                    : await waiveFee(db, organisationId, reference, now, options.fee);
                return `${booking.reference}: ${describeFee(fee)}`;
              }
              default: {
                const run = {
                  complete,
                  'no-show': markNoShow,
                  checkout: checkOut,
                  'pay-deposit': payDepositByStaff,
                }[action];
                const { booking, from, to } = await run(db, organisationId, reference, now);
                return `${booking.reference}: ${from} -> ${to}`;
              }
            }
          });
        });
        out(line);
      },
    );
}

/** A booking as the console shows it to staff, in lines; nothing of its client (name, phone, notes). */
async function describeBooking(
  db: Db,
  organisationId: string,
  reference: string,
  now: number,
): Promise<string> {
  const {
    booking: b,
    location,
    staffName,
    services,
    refusedRefund,
  } = await loadBookingDetail(db, organisationId, reference);
  const money = (minor: number) => formatMoney(minor, b.currency);
  const lines = [
    // As the API says it: a hold that lapsed is expired before the sweeper writes it so.
    `${b.reference}: ${effectiveStatus(b, now)}`,
    // On the location's clock with the offset in force, as the API says it: a UTC time reads an hour
    // off to an operator in a London summer.
    `When: ${formatLocal(b.startsAt, b.timezone)} to ${formatLocal(b.endsAt, b.timezone)} (${b.timezone})`,
    `Where: ${location.name}, with ${staffName}`,
    `Services: ${services.map((s) => `${s.name} (${money(s.priceMinor)})`).join(', ')}`,
    `Deposit: ${b.depositMinor === null ? 'none' : `${money(b.depositMinor)}, ${b.depositStatus}`}`,
  ];
  for (const fee of Object.values(b.fees)) lines.push(`Fee: ${describeFee(fee)}`);
  if (refusedRefund) {
    lines.push(`Refund refused: ${refusedRefundWords(refusedRefund, formatTime(refusedRefund.at))}`);
  }
  return lines.join('\n');
}

/**
 * A refusal of the engine (a booking no longer open to that action, a fee already settled) as a
 * CommandError that starts with the booking's reference as stored, as every other line about it does.
 */
async function refusalsNaming<T>(stored: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof AppError) throw new CommandError(`${stored}: ${error.message}`);
    throw error;
  }
}

/** The organisation holding the booking with this reference (as typed, read as the API reads it), and the reference as stored. */
async function holderOf(
  db: Db,
  reference: string,
  slug: string | undefined,
): Promise<{ organisationId: string; stored: string }> {
  const holders = (await organisationsWithReference(db, reference)).filter((o) => !slug || o.slug === slug);
  if (holders.length === 0) {
    // A mistyped --org is said as such, not as a booking missing from an organisation there is not.
    if (slug) await requireOrganisationId(db, slug);
    // Not found: said as typed (with what it was read as), since there is no booking to name.
    throw new CommandError(
      `No booking has the reference ${referenceAsTyped(reference)}${slug ? ` in ${slug}` : ''}.`,
    );
  }
  if (new Set(holders.map((o) => o.id)).size > 1) {
    // Found, in several: each booking by its own reference as stored (NHC-7K3M9P, not nhc-7k3m9p).
    throw new CommandError(
      `Several organisations have a booking with this reference: ${holders.map((o) => `${o.reference} in ${o.slug}`).join(', ')}; name one with --org.`,
    );
  }
  return { organisationId: holders[0]!.id, stored: holders[0]!.reference };
}

/**
 * A reference as the operator typed it, with the readings looked for when they are not just that: a
 * spelling-alphabet word may be read as its letter (GOLF-2DSDKB is first G-2DSDKB), and the operator
 * must see both what they typed and what was looked up.
 */
function referenceAsTyped(reference: string): string {
  const typed = reference.trim();
  const readings = referenceReadings(reference).map(({ prefix, code }) =>
    prefix === null ? code : `${prefix}-${code}`,
  );
  return readings.length === 1 && readings[0] === typed
    ? typed
    : `${typed} (read as ${readings.join(' or ')})`;
}

function describeFee(fee: Fee): string {
  const money = (minor: number) => formatMoney(minor, fee.currency);
  const figures = `fee ${money(fee.amountMinor)}, deposit credit ${money(fee.depositCreditMinor)}, card ${money(fee.chargeAmountMinor)}`;
  const reason = fee.failureReason ? ` (${fee.failureReason})` : '';
  return `${fee.kind} fee ${fee.status ?? 'pending'}${reason}: ${figures}`;
}

function formatMoney(minor: number, currency: string): string {
  const digits =
    new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return `${currency} ${(minor / 10 ** digits).toFixed(digits)}`;
}
