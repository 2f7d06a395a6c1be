import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../../data/database.ts';
import type { Catalogue } from '../format/schema.ts';
import type { IdentityPlan } from './identities.ts';

/**
 * The staff's `busy_calendars[]` (design.md 9.6): a calendar still listed keeps its row, its last
 * good copy and its refresh state; a new one is due at once, so the refresher of a running server
 * fetches it in the background within moments of the import (never the import itself: a slow or
 * unreachable calendar must not hold the import's transaction); one no longer listed goes, with the
 * busy times it gave, and the organisation's catalogue_version is bumped so no answer computed with
 * them is reused. A staff member left out of the file keeps theirs (the import deletes nothing of what
 * the file leaves out). Answers whether any calendar was added or removed: no count covers them, and
 * the import's report says whether anything at all changed.
 */
export async function writeBusyCalendars(
  trx: Db,
  catalogue: Catalogue,
  plan: IdentityPlan,
  now: number,
): Promise<boolean> {
  const orgId = plan.organisationId;
  const stored = await trx
    .selectFrom('staff_busy_calendars')
    .select(['id', 'staff_id', 'url'])
    .where('organisation_id', '=', orgId)
    .execute();
  const removed: string[] = [];
  const added: { staffId: string; url: string }[] = [];
  for (const [i, staff] of catalogue.staff.entries()) {
    const staffId = plan.staff[i]!;
    const mine = stored.filter((row) => row.staff_id === staffId);
    for (const row of mine) if (!staff.busy_calendars.includes(row.url)) removed.push(row.id);
    for (const url of staff.busy_calendars) {
      if (!mine.some((row) => row.url === url)) added.push({ staffId, url });
    }
  }
  if (removed.length > 0) {
    // The calendars' rows before their blocks, the order the refresher takes them in (PostgreSQL
    // row locks: the other order could deadlock with a copy being saved).
    await trx
      .updateTable('staff_busy_calendars')
      .set({ next_fetch_at: sql`next_fetch_at` })
      .where('organisation_id', '=', orgId)
      .where('id', 'in', removed)
      .execute();
    const blocks = await trx
      .deleteFrom('staff_busy_blocks')
      .where('organisation_id', '=', orgId)
      .where('calendar_id', 'in', removed)
      .executeTakeFirst();
    await trx
      .deleteFrom('staff_busy_calendars')
      .where('organisation_id', '=', orgId)
      .where('id', 'in', removed)
      .execute();
    if (blocks.numDeletedRows > 0n) {
      await trx
        .updateTable('organisations')
        .set({ catalogue_version: sql`catalogue_version + 1` })
        .where('id', '=', orgId)
        .execute();
    }
  }
  if (added.length > 0) {
    await trx
      .insertInto('staff_busy_calendars')
      .values(
        added.map(({ staffId, url }) => ({
          id: randomUUID(),
          organisation_id: orgId,
          staff_id: staffId,
          url,
          next_fetch_at: now,
          created_at: now,
        })),
      )
      .execute();
  }
  return removed.length > 0 || added.length > 0;
}
