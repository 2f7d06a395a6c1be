import type { Db } from './database.ts';

/**
 * For each given service or staff member, its aliases in the catalogue's order (empty when it has
 * none). One query for a whole page of listings, however many entities it holds.
 */
export async function aliasesOf(
  db: Db,
  organisationId: string,
  kind: 'services' | 'staff',
  ownerIds: readonly string[],
): Promise<Map<string, string[]>> {
  const byOwner = new Map<string, string[]>(ownerIds.map((id) => [id, []]));
  if (ownerIds.length === 0) return byOwner;
  const rows =
    kind === 'services'
      ? await db
          .selectFrom('service_aliases')
          .select(['service_id as owner_id', 'alias'])
          .where('organisation_id', '=', organisationId)
          .where('service_id', 'in', ownerIds)
          .orderBy('position')
          .execute()
      : await db
          .selectFrom('staff_aliases')
          .select(['staff_id as owner_id', 'alias'])
          .where('organisation_id', '=', organisationId)
          .where('staff_id', 'in', ownerIds)
          .orderBy('position')
          .execute();
  for (const row of rows) byOwner.get(row.owner_id)?.push(row.alias);
  return byOwner;
}
