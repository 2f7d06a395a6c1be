import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  type BookingsBenchDatabase,
  bookingsCatalogue,
  createBookingsDatabase,
} from './bookings-database.ts';

/**
 * The outbox benchmark's database: the booking scenario of bookings-database.ts with one client per
 * way a customer can be reached. Messages go to the channels a client has (by SMS to the phone, by
 * e-mail to the address), so the client booked for decides how many outbox rows a booking writes, and
 * nothing else about the booking changes:
 *
 * - `regular` (the scenario's client, phone and e-mail): a confirmed booking writes four rows, the
 *   confirmation and the reminder by each channel;
 * - `unreachable` (neither): none. The schema requires a phone or an e-mail of every client (CHECK
 *   clients_contact), so this one row is planted with `PRAGMA ignore_check_constraints` on while it is
 *   inserted, and only here: it is what lets one server, in one run, book with and without the outbox
 *   write through the very same code;
 * - `texted` (a phone only) and `mailed` (an e-mail only): two rows each, of one channel, for the
 *   delivery phase to deliver channel by channel.
 */
export const OUTBOX_CLIENTS = {
  texted: { ref: 'texted', first_name: 'Sam', last_name: 'Texted', phone: '+447911123458' },
  mailed: { ref: 'mailed', first_name: 'Eli', last_name: 'Mailed', email: 'eli.mailed@example.com' },
} as const;

export interface OutboxBenchDatabase extends BookingsBenchDatabase {
  clientIds: { regular: string; unreachable: string; texted: string; mailed: string };
}

export async function createOutboxDatabase(): Promise<OutboxBenchDatabase> {
  const catalogue = bookingsCatalogue();
  const seeded = await createBookingsDatabase({
    ...catalogue,
    clients: [...catalogue.clients, OUTBOX_CLIENTS.texted, OUTBOX_CLIENTS.mailed],
  });
  try {
    const { db } = seeded.database;
    const idOf = async (ref: string) =>
      (await db.selectFrom('clients').select('id').where('ref', '=', ref).executeTakeFirstOrThrow()).id;
    const unreachable = randomUUID();
    // One SQLite connection: the pragma holds for this insert only.
    await sql`pragma ignore_check_constraints = on`.execute(db);
    try {
      await db
        .insertInto('clients')
        .values({
          id: unreachable,
          organisation_id: seeded.organisationId,
          ref: 'unreachable',
          first_name: 'Kim',
          last_name: 'Unreachable',
          phone: null,
          email: null,
          marketing_consent: 0,
          created_at: seeded.now,
          updated_at: seeded.now,
          contact_proven: 1,
        })
        .execute();
    } finally {
      await sql`pragma ignore_check_constraints = off`.execute(db);
    }
    return {
      ...seeded,
      clientIds: {
        regular: seeded.clientId,
        unreachable,
        texted: await idOf(OUTBOX_CLIENTS.texted.ref),
        mailed: await idOf(OUTBOX_CLIENTS.mailed.ref),
      },
    };
  } catch (error) {
    await seeded.database.dispose();
    throw error;
  }
}
