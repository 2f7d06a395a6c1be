import { describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { importProblems } from '../helpers/catalogue-checks.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { expectRefusedBy } from '../helpers/database-refusal.ts';
import { tempDatabasePerTest } from '../helpers/temp-database.ts';
import { startTestApp } from '../helpers/test-app.ts';

/**
 * `aliases[]` on services and staff (design.md 8.2): checked as the MCP tools will read them,
 * stored in their own tables on both databases, re-imported idempotently, and listed by REST.
 * The small catalogue gives Cut the aliases "Haircut" and "trim", and Ana "Annie".
 */
const T0 = Date.UTC(2026, 10, 22, 9, 0);

// biome-ignore lint/suspicious/noExplicitAny: catalogue fixtures are edited freely as plain JSON.
type Json = any;

const temp = tempDatabasePerTest();

const service = (catalogue: Json, ref: string) => catalogue.services.find((s: Json) => s.ref === ref);
const member = (catalogue: Json, ref: string) => catalogue.staff.find((s: Json) => s.ref === ref);

function problemsOf(catalogue: unknown): Promise<{ path: string; message: string }[]> {
  return importProblems(importCatalogue(temp.db, catalogue, T0));
}

/** Every alias stored, as "owner name: position alias", sorted. */
async function storedAliases(): Promise<string[]> {
  const services = await temp.db
    .selectFrom('service_aliases')
    .innerJoin('services', 'services.id', 'service_aliases.service_id')
    .select(['services.name as owner', 'position', 'alias'])
    .execute();
  const staff = await temp.db
    .selectFrom('staff_aliases')
    .innerJoin('staff', 'staff.id', 'staff_aliases.staff_id')
    .select(['staff.name as owner', 'position', 'alias'])
    .execute();
  return [...services, ...staff].map((r) => `${r.owner}: ${r.position} ${r.alias}`).sort();
}

const catalogueVersion = async () =>
  Number(
    (
      await temp.db
        .selectFrom('organisations')
        .select('catalogue_version')
        .where('slug', '=', 'acme-hair')
        .executeTakeFirstOrThrow()
    ).catalogue_version,
  );

describe('aliases in the catalogue file', () => {
  it('are optional, trimmed and stored in the order given', async () => {
    const catalogue = smallCatalogue();
    service(catalogue, 'cut').aliases = ['  Haircut ', 'trim', 'Short back and sides'];
    const report = await importCatalogue(temp.db, catalogue, T0);
    expect(report.counts.services.created).toBe(3);
    expect(await storedAliases()).toEqual([
      'Ana: 0 Annie',
      'Cut: 0 Haircut',
      'Cut: 1 trim',
      'Cut: 2 Short back and sides',
    ]);
  });

  it('are refused, each problem at its JSON path, when they break a limit', async () => {
    const catalogue = smallCatalogue();
    service(catalogue, 'cut').aliases = ['haircut', 'x'.repeat(61), '   ', 'tab\there', 7];
    service(catalogue, 'patch-test').aliases = Array.from({ length: 21 }, (_, i) => `test ${i}`);
    member(catalogue, 'ana').aliases = 'Annie';
    expect(await problemsOf(catalogue)).toEqual([
      { path: '$.services[0].aliases[1]', message: 'must be 1 to 60 characters, without control characters' },
      { path: '$.services[0].aliases[2]', message: 'must be 1 to 60 characters, without control characters' },
      { path: '$.services[0].aliases[3]', message: 'must be 1 to 60 characters, without control characters' },
      { path: '$.services[0].aliases[4]', message: expect.stringMatching(/string/) },
      { path: '$.services[2].aliases', message: 'must list at most 20 aliases' },
      { path: '$.staff[0].aliases', message: expect.stringMatching(/array/) },
    ]);
    expect(await storedAliases()).toEqual([]);
  });

  it('are refused when they would read as another alias or name of the same kind', async () => {
    const catalogue = smallCatalogue();
    service(catalogue, 'cut').aliases = [
      'haircut',
      'Hair-cuts', // "haircut" once case, hyphens and plurals are ignored
      'the',
      'CUT',
      'colour',
      'Anna', // a staff member's alias: another kind, never matched against services
    ];
    service(catalogue, 'colour').aliases = ['tint', 'HAIRCUT'];
    member(catalogue, 'ana').aliases = ['Anna', 'Bo'];
    member(catalogue, 'bo').aliases = ['anna', 'Cut'];
    expect(await problemsOf(catalogue)).toEqual([
      {
        path: '$.services[0].aliases[1]',
        message:
          'reads the same as $.services[0].aliases[0] (case, accents, spaces and plurals do not count)',
      },
      {
        path: '$.services[0].aliases[2]',
        message: 'has no word to match (only punctuation or words such as "the")',
      },
      { path: '$.services[0].aliases[3]', message: "reads the same as the service's own name" },
      { path: '$.services[0].aliases[4]', message: 'reads the same as the name of $.services[1]' },
      {
        path: '$.services[1].aliases[1]',
        message:
          'reads the same as $.services[0].aliases[0] (case, accents, spaces and plurals do not count)',
      },
      { path: '$.staff[0].aliases[1]', message: 'reads the same as the name of $.staff[1]' },
      {
        path: '$.staff[1].aliases[0]',
        message: 'reads the same as $.staff[0].aliases[0] (case, accents, spaces and plurals do not count)',
      },
    ]);
    expect(await storedAliases()).toEqual([]);
  });

  it('re-imported unchanged change nothing; changed, they are replaced and the owner counts as updated', async () => {
    const catalogue = smallCatalogue();
    await importCatalogue(temp.db, catalogue, T0);
    const version = await catalogueVersion();
    const updatedAt = async () =>
      (await temp.db.selectFrom('services').select(['ref', 'updated_at']).orderBy('ref').execute()).map(
        (r) => `${r.ref}@${r.updated_at}`,
      );
    const before = await updatedAt();

    const again = await importCatalogue(temp.db, smallCatalogue(), T0 + 60_000);
    expect(again.counts.services).toEqual({ created: 0, updated: 0, unchanged: 3 });
    expect(again.counts.staff).toEqual({ created: 0, updated: 0, unchanged: 3 });
    expect(await catalogueVersion()).toBe(version);
    expect(await updatedAt()).toEqual(before);

    // Reordered, one dropped, one added: the list is replaced as the file gives it.
    const edited = smallCatalogue();
    service(edited, 'cut').aliases = ['trim', 'crop'];
    member(edited, 'ana').aliases = [];
    const report = await importCatalogue(temp.db, edited, T0 + 120_000);
    expect(report.counts.services).toEqual({ created: 0, updated: 1, unchanged: 2 });
    expect(report.counts.staff).toEqual({ created: 0, updated: 1, unchanged: 2 });
    expect(await storedAliases()).toEqual(['Cut: 0 trim', 'Cut: 1 crop']);
    expect(await catalogueVersion()).toBeGreaterThan(version);

    // A file without the key means no aliases, like the other owned lists.
    const without = smallCatalogue();
    delete service(without, 'cut').aliases;
    delete member(without, 'ana').aliases;
    await importCatalogue(temp.db, without, T0 + 180_000);
    expect(await storedAliases()).toEqual([]);
  });

  it('may move from one service to another in one import', async () => {
    await importCatalogue(temp.db, smallCatalogue(), T0);
    const moved = smallCatalogue();
    service(moved, 'cut').aliases = ['Haircut'];
    service(moved, 'colour').aliases = ['trim'];
    await importCatalogue(temp.db, moved, T0 + 60_000);
    expect(await storedAliases()).toEqual(['Ana: 0 Annie', 'Colour: 0 trim', 'Cut: 0 Haircut']);
  });

  it('is refused at the entity when an alias is held by a service the file leaves out', async () => {
    await importCatalogue(temp.db, smallCatalogue(), T0);
    const partial = smallCatalogue();
    partial.services = partial.services.filter((s: Json) => s.ref !== 'cut');
    partial.staff = partial.staff.map((s: Json) => ({
      ...s,
      services: s.services.filter((r: string) => r !== 'cut'),
    }));
    service(partial, 'colour').aliases = ['trim'];
    const problems = await problemsOf(partial);
    expect(problems).toEqual([
      {
        path: '$.services[0]',
        message: expect.stringMatching(/^conflicts with data already in the database/),
      },
    ]);
    expect(await storedAliases()).toEqual(['Ana: 0 Annie', 'Cut: 0 Haircut', 'Cut: 1 trim']);
  });
});

describe('alias tables', () => {
  it('hold the rules themselves: one alias per organisation and kind, 1 to 60 characters, owner in the organisation', async () => {
    await importCatalogue(temp.db, smallCatalogue(), T0);
    const other = await importCatalogue(temp.db, smallCatalogue({ slug: 'other-org', prefix: 'OT' }), T0);
    const cut = await temp.db
      .selectFrom('services')
      .select(['id', 'organisation_id'])
      .where('ref', '=', 'cut')
      .where('organisation_id', '<>', other.organisation.id)
      .executeTakeFirstOrThrow();
    const row = { organisation_id: cut.organisation_id, service_id: cut.id, position: 5, alias: 'trim' };
    await expectRefusedBy(temp.db.insertInto('service_aliases').values(row).execute(), 'unique');
    await expectRefusedBy(
      temp.db
        .insertInto('service_aliases')
        .values({ ...row, alias: 'y'.repeat(61) })
        .execute(),
      'check',
    );
    await expectRefusedBy(
      temp.db
        .insertInto('service_aliases')
        .values({ ...row, alias: 'fringe', organisation_id: other.organisation.id })
        .execute(),
      'foreign_key',
    );
    // The same alias in another organisation is that organisation's own.
    const trims = await temp.db
      .selectFrom('service_aliases')
      .select('organisation_id')
      .where('alias', '=', 'trim')
      .execute();
    expect(trims.length).toBe(2);
  });
});

describe('the catalogue version', () => {
  it('moves on every write to an alias table, whoever writes it, so no cached listing goes stale', async () => {
    await importCatalogue(temp.db, smallCatalogue(), T0);
    const cut = await temp.db
      .selectFrom('services')
      .select(['id', 'organisation_id'])
      .where('ref', '=', 'cut')
      .executeTakeFirstOrThrow();
    const ana = await temp.db
      .selectFrom('staff')
      .select('id')
      .where('ref', '=', 'ana')
      .executeTakeFirstOrThrow();
    const writes = [
      () =>
        temp.db
          .insertInto('service_aliases')
          .values({ organisation_id: cut.organisation_id, service_id: cut.id, position: 2, alias: 'crop' })
          .execute(),
      () =>
        temp.db
          .updateTable('service_aliases')
          .set({ alias: 'short crop' })
          .where('alias', '=', 'crop')
          .execute(),
      () => temp.db.deleteFrom('service_aliases').where('alias', '=', 'short crop').execute(),
      () =>
        temp.db
          .insertInto('staff_aliases')
          .values({ organisation_id: cut.organisation_id, staff_id: ana.id, position: 1, alias: 'Anna' })
          .execute(),
      () =>
        temp.db.updateTable('staff_aliases').set({ alias: 'Annabel' }).where('alias', '=', 'Anna').execute(),
      () => temp.db.deleteFrom('staff_aliases').where('alias', '=', 'Annabel').execute(),
    ];
    for (const [i, write] of writes.entries()) {
      const before = await catalogueVersion();
      await write();
      expect(await catalogueVersion(), `write ${i}`).toBe(before + 1);
    }
  });
});

describe('REST listings', () => {
  it('show aliases, and show the new ones as soon as an import changes them', async () => {
    const t = await startTestApp();
    try {
      const get = async (url: string) => {
        const response = await t.request({ method: 'GET', url, key: t.keys.read });
        expect(response.statusCode).toBe(200);
        return response.json().data;
      };
      const aliasesOf = (items: Json[], name: string) => items.find((i) => i.name === name).aliases;
      expect(aliasesOf(await get('/v1/locations/soho/services'), 'Cut')).toEqual(['Haircut', 'trim']);
      expect(aliasesOf(await get('/v1/locations/soho/staff'), 'Ana')).toEqual(['Annie']);

      const edited = smallCatalogue();
      service(edited, 'cut').aliases = ['crop'];
      member(edited, 'ana').aliases = ['Anna', 'Ana B'];
      await importCatalogue(t.database.db, edited, T0);
      expect(aliasesOf(await get('/v1/locations/soho/services'), 'Cut')).toEqual(['crop']);
      expect(aliasesOf(await get('/v1/locations/soho/staff'), 'Ana')).toEqual(['Anna', 'Ana B']);
    } finally {
      await t.close();
    }
  });
});
