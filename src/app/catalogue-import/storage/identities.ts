import type { Db } from '../../../data/database.ts';
import type { Organisation } from '../../../data/organisation-repository.ts';
import { catalogueId } from '../format/ids.ts';
import {
  type CatalogueProblem,
  derivedIdClash,
  formatPath,
  type PathSegment,
  type Report,
} from '../format/problems.ts';
import type { Catalogue, CatalogueClient } from '../format/schema.ts';
import { timeOffRowsOf } from './time-off-rows.ts';

/**
 * Decides which database row each catalogue entity becomes, before anything is written, so that an id
 * clash is reported as a problem at its JSON path instead of surfacing as a constraint failure.
 * Ids never change once given: bookings and API clients hold them.
 */

export interface IdentityPlan {
  organisationId: string;
  existingOrganisation: Organisation | undefined;
  /** Row id per entity, in file order. */
  locations: string[];
  services: string[];
  staff: string[];
  clients: string[];
}

type Kind = 'locations' | 'services' | 'staff' | 'clients';
const KIND_NAME: Record<Kind, string> = {
  locations: 'location',
  services: 'service',
  staff: 'staff',
  clients: 'client',
};

interface Existing {
  id: string;
  ref: string | null;
}

interface Owner {
  id: string;
  organisation_id: string;
  ref: string | null;
}

/** Plans every id; returns the problems instead of a plan when any id would clash. */
export async function planIdentities(
  trx: Db,
  catalogue: Catalogue,
): Promise<{ plan: IdentityPlan } | { problems: CatalogueProblem[] }> {
  const problems: CatalogueProblem[] = [];
  const report: Report = (path, message) => problems.push({ path: formatPath(path), message });
  const org = catalogue.organisation;
  const bySlug = await trx
    .selectFrom('organisations')
    .selectAll()
    .where('slug', '=', org.slug)
    .executeTakeFirst();
  let existingOrganisation = bySlug;
  if (org.id !== undefined) {
    const byId = await trx
      .selectFrom('organisations')
      .selectAll()
      .where('id', '=', org.id)
      .executeTakeFirst();
    if (byId) {
      existingOrganisation = byId;
      if (bySlug && bySlug.id !== byId.id)
        report(['organisation', 'slug'], 'is already used by another organisation');
    } else if (bySlug) {
      report(['organisation', 'id'], `organisation "${org.slug}" already exists with id ${bySlug.id}`);
    }
  }
  const organisationId =
    existingOrganisation?.id ?? org.id ?? catalogueId(org.slug, 'organisation', org.slug);
  if (problems.length > 0) return { problems };

  // Entities of a new organisation cannot exist yet; `id` undefined skips the lookups.
  const scope = { slug: org.slug, id: existingOrganisation ? organisationId : undefined };
  const plan: IdentityPlan = {
    organisationId,
    existingOrganisation,
    locations: await planKind(trx, 'locations', catalogue.locations, scope, report),
    services: await planKind(trx, 'services', catalogue.services, scope, report),
    staff: await planKind(trx, 'staff', catalogue.staff, scope, report),
    clients: await planClients(trx, catalogue.clients, scope, report),
  };
  if (scope.id !== undefined) await checkLocationSlugs(trx, catalogue, plan, scope.id, report);
  await checkTimeOffIds(trx, catalogue, plan, report);
  return problems.length > 0 ? { problems } : { plan };
}

// The four tables share id, organisation_id and ref, so one query shape serves them all.
async function existingRows(trx: Db, kind: Kind, orgId: string | undefined): Promise<Existing[]> {
  if (orgId === undefined) return [];
  return trx
    .selectFrom(kind as 'services')
    .select(['id', 'ref'])
    .where('organisation_id', '=', orgId)
    .execute();
}

async function ownersOf(trx: Db, kind: Kind, ids: string[]): Promise<Map<string, Owner>> {
  const owners = new Map<string, Owner>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await trx
      .selectFrom(kind as 'clients')
      .select(['id', 'organisation_id', 'ref'])
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const row of rows) owners.set(row.id, row);
  }
  return owners;
}

/**
 * Resolves ids once entities are matched to existing rows (`matched[i]`): a match keeps its id, an
 * explicit id must agree with it, and a new row's id must not be taken by any other row.
 */
async function resolveIds(
  trx: Db,
  kind: Kind,
  entities: readonly { id?: string | undefined; ref: string }[],
  matched: readonly (Existing | undefined)[],
  org: { slug: string; id: string | undefined },
  report: Report,
): Promise<string[]> {
  const name = KIND_NAME[kind];
  const ids = entities.map((e, i) => matched[i]?.id ?? e.id ?? catalogueId(org.slug, name, e.ref));
  const fresh = ids.filter((_, i) => matched[i] === undefined);
  const owners = fresh.length > 0 ? await ownersOf(trx, kind, fresh) : new Map<string, Owner>();
  entities.forEach((entity, i) => {
    const match = matched[i];
    if (entity.id !== undefined && match !== undefined && match.id !== entity.id) {
      report([kind, i, 'id'], `this ${name} already exists with id ${match.id}; ids cannot change`);
    }
    const owner = match === undefined ? owners.get(ids[i]!) : undefined;
    if (owner === undefined) return;
    const whose =
      owner.organisation_id === org.id
        ? `${name}${owner.ref === null ? '' : ` "${owner.ref}"`} of this organisation`
        : `a ${name} of another organisation`;
    report([kind, i, entity.id === undefined ? 'ref' : 'id'], `id ${ids[i]} already belongs to ${whose}`);
  });
  checkNewIds(
    entities.flatMap((entity, i) => {
      if (matched[i] !== undefined) return [];
      const derivedFrom = entity.id === undefined ? `ref "${entity.ref}"` : undefined;
      return [{ id: ids[i]!, path: [kind, i], derivedFrom }];
    }),
    report,
  );
  return ids;
}

/** A row the import would insert: its id, the entry's path, and what the id is derived from, if it is. */
export interface NewRow {
  id: string;
  path: PathSegment[];
  derivedFrom: string | undefined;
}

/**
 * New rows the file would give one id: an explicit id that is another new entry's derived id (the
 * validation refuses two explicit ids alike, and the entries two derived ones would be made from:
 * the same ref twice, the same time off however its times are written). Matched rows are not
 * new: the checks against stored rows name them. Returns the ids reported.
 */
export function checkNewIds(rows: readonly NewRow[], report: Report): Set<string> {
  const derived = new Map<string, NewRow>();
  for (const row of rows) if (row.derivedFrom !== undefined) derived.set(row.id, row);
  const clashing = new Set<string>();
  for (const row of rows) {
    const other = row.derivedFrom === undefined ? derived.get(row.id) : undefined;
    if (other === undefined) continue;
    report([...row.path, 'id'], derivedIdClash(other.path, other.derivedFrom!));
    clashing.add(row.id);
  }
  return clashing;
}

async function planKind(
  trx: Db,
  kind: Exclude<Kind, 'clients'>,
  entities: readonly { id?: string | undefined; ref: string }[],
  org: { slug: string; id: string | undefined },
  report: Report,
): Promise<string[]> {
  const byRef = new Map((await existingRows(trx, kind, org.id)).map((row) => [row.ref, row]));
  const matched = entities.map((e) => byRef.get(e.ref));
  return resolveIds(trx, kind, entities, matched, org, report);
}

/**
 * Clients are matched by ref, else by the same phone (first) or e-mail, so people already created
 * through the API are adopted instead of duplicated. A row another file client claims by ref is never
 * taken over.
 */
async function planClients(
  trx: Db,
  clients: readonly CatalogueClient[],
  org: { slug: string; id: string | undefined },
  report: Report,
): Promise<string[]> {
  const rows =
    org.id === undefined
      ? []
      : await trx
          .selectFrom('clients')
          .select(['id', 'ref', 'phone', 'email'])
          .where('organisation_id', '=', org.id)
          // A public booking's unproven record is nobody's: a file's client is never matched to it.
          .where('contact_proven', '=', 1)
          .execute();
  const byRef = new Map(rows.filter((r) => r.ref !== null).map((r) => [r.ref, r]));
  const byContact = {
    phone: new Map(rows.filter((r) => r.phone !== null).map((r) => [r.phone, r])),
    email: new Map(rows.filter((r) => r.email !== null).map((r) => [r.email, r])),
  };
  const fileRefs = new Set(clients.map((c) => c.ref));
  const matched = clients.map((c) => byRef.get(c.ref));
  const claimed = new Set(matched.flatMap((row) => (row ? [row.id] : [])));
  clients.forEach((client, i) => {
    if (matched[i]) return;
    const candidates = [
      client.phone === null ? undefined : byContact.phone.get(client.phone),
      client.email === null ? undefined : byContact.email.get(client.email),
    ];
    const row = candidates.find((c) => c && !claimed.has(c.id) && (c.ref === null || !fileRefs.has(c.ref)));
    if (row === undefined) return;
    matched[i] = row;
    claimed.add(row.id);
  });
  const ids = await resolveIds(trx, 'clients', clients, matched, org, report);
  clients.forEach((client, i) => {
    for (const field of ['phone', 'email'] as const) {
      const value = client[field];
      const holder = value === null ? undefined : byContact[field].get(value);
      if (holder === undefined || holder.id === ids[i] || claimed.has(holder.id)) continue;
      const named = holder.ref === null ? '' : ` (ref "${holder.ref}")`;
      report(['clients', i, field], `already belongs to another client of this organisation${named}`);
    }
  });
  return ids;
}

/** A slug held by a location the file does not mention would make the update fail half-way. */
async function checkLocationSlugs(
  trx: Db,
  catalogue: Catalogue,
  plan: IdentityPlan,
  orgId: string,
  report: Report,
): Promise<void> {
  const rows = await trx
    .selectFrom('locations')
    .select(['id', 'slug'])
    .where('organisation_id', '=', orgId)
    .execute();
  const bySlug = new Map(rows.map((r) => [r.slug, r.id]));
  const planned = new Set(plan.locations);
  catalogue.locations.forEach((location, i) => {
    const holder = bySlug.get(location.slug);
    if (holder !== undefined && holder !== plan.locations[i] && !planned.has(holder)) {
      report(['locations', i, 'slug'], 'is already used by another location of this organisation');
    }
  });
}

/**
 * Explicit time-off ids must be unique, must not be the id another entry derives, and must not belong
 * to another staff member's time off.
 */
async function checkTimeOffIds(
  trx: Db,
  catalogue: Catalogue,
  plan: IdentityPlan,
  report: Report,
): Promise<void> {
  const wanted = new Map<string, { staffId: string; path: PathSegment[] }>();
  const entries: NewRow[] = [];
  catalogue.staff.forEach((staff, s) => {
    timeOffRowsOf(catalogue, staff, plan.staff[s]!).forEach(({ id, derived }, t) => {
      const at = ['staff', s, 'time_off', t];
      if (derived) {
        entries.push({ id, path: at, derivedFrom: 'staff member, start and end' });
        return;
      }
      const path = [...at, 'id'];
      const first = wanted.get(id);
      if (first) report(path, `duplicate id: already used at ${formatPath(first.path)}`);
      else {
        wanted.set(id, { staffId: plan.staff[s]!, path });
        entries.push({ id, path: at, derivedFrom: undefined });
      }
    });
  });
  // Said once: the clash within the file names both entries, a stored holder of the id would not.
  for (const id of checkNewIds(entries, report)) wanted.delete(id);
  if (wanted.size === 0) return;
  const rows = await trx
    .selectFrom('staff_time_off')
    .select(['id', 'staff_id'])
    .where('id', 'in', [...wanted.keys()])
    .execute();
  for (const row of rows) {
    const entry = wanted.get(row.id);
    if (entry && entry.staffId !== row.staff_id)
      report(entry.path, 'already belongs to another time off entry');
  }
}
