import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  catalogueFieldReference,
  catalogueJsonSchema,
} from '../../src/app/catalogue-import/format/json-schema.ts';
import { knownKeysAt, nearestKey } from '../../src/app/catalogue-import/format/key-suggestions.ts';
import { catalogueSchema, staffSchema } from '../../src/app/catalogue-import/format/schema.ts';
import { validateCatalogue } from '../../src/app/catalogue-import/validation/validate.ts';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('the catalogue format for editors and readers', () => {
  it('docs/catalogue.schema.json is what the import schema gives (npm run docs:catalogue)', () => {
    expect(JSON.parse(read('docs/catalogue.schema.json'))).toEqual(catalogueJsonSchema());
  });

  it('docs/catalogue-fields.md is what the import schema gives (npm run docs:catalogue)', () => {
    expect(read('docs/catalogue-fields.md')).toBe(catalogueFieldReference());
  });

  it('lists every key of every object, and refuses others as the importer does', () => {
    const schema = catalogueJsonSchema() as {
      properties: Record<string, { additionalProperties?: unknown }>;
    };
    expect(Object.keys(schema.properties)).toEqual(Object.keys(catalogueSchema.shape));
    expect(read('docs/catalogue-fields.md')).toContain('## `staff[].working_hours.<key>`');
    expect(read('docs/catalogue-fields.md')).toMatch(/\| `mon` \|/);
  });

  it('is named by the demo catalogue, which imports with its $schema', () => {
    const demo = JSON.parse(read('db/demo-catalogue.json'));
    expect(demo.$schema).toBe('../docs/catalogue.schema.json');
    expect(validateCatalogue(demo).problems).toEqual([]);
  });
});

describe('the key meant for an unknown one', () => {
  it('finds the keys of the object where the unknown key stands', () => {
    expect(knownKeysAt(staffSchema, ['working_hours', 'soho'])).toEqual([
      'mon',
      'tue',
      'wed',
      'thu',
      'fri',
      'sat',
      'sun',
    ]);
    expect(knownKeysAt(catalogueSchema, ['locations', 0, 'policy'])).toContain('slot_interval_minutes');
    expect(knownKeysAt(catalogueSchema, ['locations', 0, 'name'])).toEqual([]);
  });

  it.each([
    ['monday', 'mon'],
    ['Thursday', 'thu'],
    ['duraton_minutes', 'duration_minutes'],
    ['slot_interval', 'slot_interval_minutes'],
    ['timezon', 'timezone'],
  ])('suggests %s → %s', (typed, meant) => {
    const known = [
      ...knownKeysAt(staffSchema, ['working_hours', 'soho']),
      'duration_minutes',
      'slot_interval_minutes',
      'timezone',
    ];
    expect(nearestKey(typed, known)).toBe(meant);
  });

  it('guesses nothing when no key is near', () => {
    expect(nearestKey('colour', ['name', 'price', 'locations'])).toBeUndefined();
    expect(nearestKey('x', ['id'])).toBeUndefined();
  });

  it('says it in the import problem at the key’s path', () => {
    const problems = validateCatalogue({ organisaton: {}, locations: [] }).problems;
    expect(problems).toContainEqual({
      path: '$.organisaton',
      message: 'unknown key; did you mean "organisation"?',
    });
  });
});
