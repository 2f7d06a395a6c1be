import type { Db } from '../../../data/database.ts';
import type { ServiceLocationsTable } from '../../../data/tables.ts';
import { toClient } from '../../client-service.ts';
import { publishClientCreated, subscribed } from '../../webhooks/events.ts';
import { type Catalogue, type CatalogueService, organisationPoliciesSchema } from '../format/schema.ts';
import { AliasLists, ownedTogether } from './aliases.ts';
import { writeBusyCalendars } from './busy-calendars.ts';
import type { IdentityPlan } from './identities.ts';
import { writeStaff } from './upsert-staff.ts';
import {
  atPath,
  type CatalogueCounts,
  type Context,
  differs,
  type EntityCounts,
  emptyCounts,
  flag,
  groupBy,
  insertAll,
  rowsOfOrganisation,
  sameRows,
  storedById,
  upsertEntity,
} from './write-support.ts';

export {
  type CatalogueCounts,
  CatalogueWriteConflict,
  type EntityCounts,
} from './write-support.ts';

/**
 * Writes a validated catalogue row by row, comparing with what is stored so that a re-import of the
 * same file touches nothing (no updated_at moves) and an edit bumps only the rows it changes. Owned
 * collections are replaced whole, and only when they differ from the file.
 */

/**
 * What writing the catalogue did: the entities' counts, and whether the organisation's own row or its
 * staff's busy calendars changed, which no count covers.
 */
export interface CatalogueWrite {
  counts: CatalogueCounts;
  uncountedChanges: boolean;
}

export async function writeCatalogue(
  trx: Db,
  catalogue: Catalogue,
  plan: IdentityPlan,
  now: number,
): Promise<CatalogueWrite> {
  const ctx: Context = { trx, catalogue, plan, orgId: plan.organisationId, now };
  const { id: _explicitId, policies: _inline, ...named } = catalogue.organisation;
  const organisation = { ...named, ...policyColumns(catalogue) };
  const stored = plan.existingOrganisation;
  const organisationChanged = stored === undefined || differs(stored, organisation);
  await atPath(['organisation'], async () => {
    if (stored === undefined) {
      await trx
        .insertInto('organisations')
        .values({ ...organisation, id: ctx.orgId, created_at: now, updated_at: now })
        .execute();
    } else if (differs(stored, organisation)) {
      await trx
        .updateTable('organisations')
        // The catalogue_version moves on with it: what is kept per version (the countries texted,
        // texted-countries.ts) follows the organisation's policies too.
        .set((eb) => ({
          ...organisation,
          catalogue_version: eb('catalogue_version', '+', 1),
          updated_at: now,
        }))
        .where('id', '=', ctx.orgId)
        .execute();
    }
  });
  const counts = emptyCounts();
  await writeLocations(ctx, counts.locations);
  await writeServices(ctx, counts.services);
  await writeStaff(ctx, counts.staff);
  const busyCalendarsChanged = await writeBusyCalendars(trx, catalogue, plan, now);
  await writeClients(ctx, counts.clients);
  return { counts, uncountedChanges: organisationChanged || busyCalendarsChanged };
}

async function writeLocations(ctx: Context, counts: EntityCounts): Promise<void> {
  const { trx, catalogue, plan, orgId } = ctx;
  const stored = await storedById(trx, 'locations', orgId);
  const closures = groupBy(await rowsOfOrganisation(trx, 'location_closures', orgId), 'location_id');
  // Two locations may swap slugs; park each changing slug on a unique placeholder first.
  for (const [i, location] of catalogue.locations.entries()) {
    const row = stored.get(plan.locations[i]!);
    if (row === undefined || row.slug === location.slug) continue;
    await atPath(['locations', i, 'slug'], () =>
      trx
        .updateTable('locations')
        .set({ slug: `~${row.id}` })
        .where('organisation_id', '=', orgId)
        .where('id', '=', row.id)
        .execute(),
    );
  }
  for (const [i, location] of catalogue.locations.entries()) {
    const id = plan.locations[i]!;
    const { policy, booking_protection: protection } = location;
    const wantedClosures = location.closures.map((c) => ({
      organisation_id: orgId,
      location_id: id,
      date: c.date,
      reason: c.reason,
    }));
    await upsertEntity(ctx, counts, {
      path: ['locations', i],
      table: 'locations',
      id,
      stored: stored.get(id),
      wanted: {
        ref: location.ref,
        slug: location.slug,
        name: location.name,
        timezone: location.timezone,
        street_address: location.street_address,
        city: location.city,
        postal_code: location.postal_code,
        country: location.country,
        phone: location.phone,
        active: flag(location.active),
        ...policy,
        protection_applies: flag(protection.applies),
        late_cancellation_fee_percentage: protection.late_cancellation_fee_percentage ?? null,
        no_show_fee_percentage: protection.no_show_fee_percentage ?? null,
      },
      owned: {
        changed: !sameRows(closures.get(id) ?? [], wantedClosures, ['date', 'reason']),
        remove: () => trx.deleteFrom('location_closures').where('location_id', '=', id).execute(),
        insert: () => insertAll(trx, 'location_closures', wantedClosures),
      },
    });
  }
}

const SERVICE_LOCATION_COLUMNS = [
  'location_id',
  'duration_minutes',
  'price_minor',
  'deposit_overridden',
  'deposit_minor',
  'online_bookable',
] as const;

function serviceLocations(
  service: CatalogueService,
  serviceId: string,
  ctx: Context,
): ServiceLocationsTable[] {
  const locationIds = new Map(ctx.catalogue.locations.map((l, i) => [l.ref, ctx.plan.locations[i]!]));
  return service.locations.map((ref) => {
    const override = service.overrides[ref];
    return {
      organisation_id: ctx.orgId,
      service_id: serviceId,
      location_id: locationIds.get(ref)!,
      duration_minutes: override?.duration_minutes ?? null,
      price_minor: override?.price?.amount ?? null,
      deposit_overridden: flag(override?.deposit !== undefined),
      deposit_minor: override?.deposit?.amount ?? null,
      online_bookable: override?.online_bookable === undefined ? null : flag(override.online_bookable),
    };
  });
}

async function writeServices(ctx: Context, counts: EntityCounts): Promise<void> {
  const { trx, catalogue, plan, orgId } = ctx;
  const stored = await storedById(trx, 'services', orgId);
  const offered = groupBy(await rowsOfOrganisation(trx, 'service_locations', orgId), 'service_id');
  const aliases = await AliasLists.load(trx, 'service_aliases', orgId);
  for (const [i, service] of catalogue.services.entries()) aliases.want(plan.services[i]!, service.aliases);
  await atPath(['services'], () => aliases.clearChanged());
  // Prices are stored as amounts of the organisation's currency: a new currency changes every price,
  // and the report says so of each service rather than leaving them "unchanged".
  const before = plan.existingOrganisation;
  const currencyChanged = before !== undefined && before.currency !== catalogue.organisation.currency;
  for (const [i, service] of catalogue.services.entries()) {
    const id = plan.services[i]!;
    const wantedOffered = serviceLocations(service, id, ctx);
    await upsertEntity(ctx, counts, {
      path: ['services', i],
      table: 'services',
      id,
      stored: stored.get(id),
      wanted: {
        ref: service.ref,
        name: service.name,
        category: service.category,
        duration_minutes: service.duration_minutes,
        buffer_after_minutes: service.buffer_after_minutes,
        price_minor: service.price.amount,
        deposit_minor: service.deposit?.amount ?? null,
        online_bookable: flag(service.online_bookable),
      },
      owned: ownedTogether(
        {
          changed: !sameRows(offered.get(id) ?? [], wantedOffered, SERVICE_LOCATION_COLUMNS),
          remove: () => trx.deleteFrom('service_locations').where('service_id', '=', id).execute(),
          insert: () => insertAll(trx, 'service_locations', wantedOffered),
        },
        aliases.owned(id),
      ),
      changedElsewhere: currencyChanged,
    });
  }
}

async function writeClients(ctx: Context, counts: EntityCounts): Promise<void> {
  const { trx, catalogue, plan, orgId } = ctx;
  const stored = await storedById(trx, 'clients', orgId);
  const entries = [...catalogue.clients.entries()];
  // Updates before inserts: an adopted client may hand a phone or e-mail over to a new one.
  entries.sort(([a], [b]) => Number(stored.has(plan.clients[b]!)) - Number(stored.has(plan.clients[a]!)));
  // Clients may swap phones or e-mails; park each changing contact on a unique placeholder first.
  for (const [i, client] of entries) {
    const row = stored.get(plan.clients[i]!);
    if (row === undefined) continue;
    const parked = {
      ...(row.phone !== null && row.phone !== client.phone ? { phone: `+~${row.id}` } : {}),
      ...(row.email !== null && row.email !== client.email ? { email: `~${row.id}` } : {}),
    };
    if (Object.keys(parked).length === 0) continue;
    await atPath(['clients', i], () =>
      trx
        .updateTable('clients')
        .set(parked)
        .where('organisation_id', '=', row.organisation_id)
        .where('id', '=', row.id)
        .execute(),
    );
  }
  // A client the import puts on file is told of as POST /v1/clients tells of one (design.md 9.2:
  // whatever face made the change), in this transaction. Asked once: an import of thousands of clients
  // for an organisation nobody listens to costs no statement per client. A client matched by ref,
  // phone or e-mail is already on file (and was told of then); an update is no event.
  const tellIntegrators = await subscribed(trx, orgId, 'client.created');
  for (const [i, client] of entries) {
    const id = plan.clients[i]!;
    const wanted = {
      ref: client.ref,
      first_name: client.first_name,
      last_name: client.last_name,
      phone: client.phone,
      email: client.email,
      marketing_consent: flag(client.marketing_consent),
      contact_proven: 1 as const,
    };
    const existing = stored.get(id);
    await upsertEntity(ctx, counts, { path: ['clients', i], table: 'clients', id, stored: existing, wanted });
    if (existing === undefined && tellIntegrators) {
      const row = { ...wanted, id, organisation_id: orgId, created_at: ctx.now, updated_at: ctx.now };
      await publishClientCreated(trx, orgId, toClient(row), ctx.now);
    }
  }
}

/** The organisation's public-page policies as its columns: the file's, or the defaults when it gives none. */
function policyColumns(catalogue: Catalogue) {
  const policies =
    catalogue.policies ?? catalogue.organisation.policies ?? organisationPoliciesSchema.parse({});
  return {
    public_verification: policies.public_verification,
    public_holds_per_contact: policies.public_holds_per_contact,
    public_bookings_per_contact_per_day: policies.public_bookings_per_contact_per_day,
    public_attempts_per_address_per_hour: policies.public_attempts_per_address_per_hour,
    public_bookings_per_organisation_per_hour: policies.public_bookings_per_organisation_per_hour,
    sms_countries: [...new Set(policies.sms_countries)].sort().join(','),
    fee_waivers: policies.fee_waivers,
  };
}
