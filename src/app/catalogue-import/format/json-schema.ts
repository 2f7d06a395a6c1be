import { z } from 'zod';
import { counted } from '../../../domain/counted.ts';
import { catalogueSchema } from './schema.ts';

/**
 * The catalogue format for editors and readers, generated from the zod schema the importer validates
 * with, so neither can drift from what is accepted: docs/catalogue.schema.json (editors validate and
 * complete a file naming it in `$schema`) and docs/catalogue-fields.md (the field reference). The JSON
 * Schema describes the file as written (defaults are optional); checks that span entities (refs that
 * exist, overlaps, one currency) are the importer's alone. `npm run docs:catalogue` writes both.
 */

type JsonSchema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  additionalProperties?: JsonSchema | boolean;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  default?: unknown;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  [key: string]: unknown;
};

export function catalogueJsonSchema(): JsonSchema {
  const generated = z.toJSONSchema(catalogueSchema, {
    io: 'input',
    target: 'draft-2020-12',
    // Normalising transforms (phones to E.164) have no JSON Schema form; the value they read is a string.
    unrepresentable: 'any',
  }) as JsonSchema;
  return {
    $schema: generated.$schema,
    title: 'Booking engine catalogue',
    description:
      'One organisation: its locations, services, staff, clients and bookings, as `booking import` reads them. Field reference: docs/catalogue-fields.md.',
    ...Object.fromEntries(Object.entries(generated).filter(([key]) => key !== '$schema')),
  };
}

/** One object of the format, at a path readers know (`locations[].policy`). */
interface Section {
  path: string;
  schema: JsonSchema;
}

function sections(schema: JsonSchema, path: string, into: Section[]): Section[] {
  const object = objectOf(schema);
  if (object?.properties) {
    into.push({ path, schema: object });
    for (const [key, child] of Object.entries(object.properties)) sections(child, join(path, key), into);
  }
  const items = arrayItems(schema);
  if (items) sections(items, `${path}[]`, into);
  const values = recordValues(schema);
  if (values) sections(values, `${path}.<key>`, into);
  return into;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
const variants = (schema: JsonSchema): JsonSchema[] => [schema, ...(schema.anyOf ?? [])];
const objectOf = (schema: JsonSchema) => variants(schema).find((v) => v.type === 'object' && v.properties);
const arrayItems = (schema: JsonSchema) => variants(schema).find((v) => v.type === 'array')?.items;
function recordValues(schema: JsonSchema): JsonSchema | undefined {
  const record = variants(schema).find(
    (v) => v.type === 'object' && !v.properties && typeof v.additionalProperties === 'object',
  );
  return record?.additionalProperties as JsonSchema | undefined;
}

function typeOf(schema: JsonSchema): string {
  const kinds = variants(schema).flatMap((v): string[] => {
    if (v.enum) return [v.enum.map((value) => `\`${JSON.stringify(value)}\``).join(' \\| ')];
    if (v.type === 'array') {
      if (v.prefixItems) return [`[${v.prefixItems.map(typeOf).join(', ')}]`];
      return [`${v.items ? typeOf(v.items) : 'any'}[]`];
    }
    if (v.type === 'object') return [v.properties ? 'object' : 'map'];
    if (typeof v.type === 'string') return [v.type];
    return v === schema && !schema.anyOf ? ['text'] : [];
  });
  return [...new Set(kinds)].join(' or ') || 'text';
}

function limits(schema: JsonSchema): string[] {
  const notes: string[] = [];
  for (const v of variants(schema)) {
    if (v.pattern) notes.push(`pattern \`${v.pattern.replaceAll('|', '\\|')}\``);
    if (v.minimum !== undefined || v.maximum !== undefined)
      notes.push(`${v.minimum ?? '…'} to ${v.maximum ?? '…'}`);
    if (v.minLength !== undefined && v.minLength > 0)
      notes.push(`at least ${counted(v.minLength, 'character')}`);
    if (v.maxLength !== undefined) notes.push(`at most ${v.maxLength} characters`);
    if (v.minItems !== undefined) notes.push(`at least ${counted(v.minItems, 'item')}`);
    if (v.maxItems !== undefined) notes.push(`at most ${v.maxItems} items`);
  }
  return notes;
}

const cell = (text: string) => text.replaceAll('\n', ' ');

/** The field reference: one table per object of the format, each field with its type, default and rules. */
export function catalogueFieldReference(schema: JsonSchema = catalogueJsonSchema()): string {
  const lines = [
    '# Catalogue fields',
    '',
    '<!-- Generated from the import schema by `npm run docs:catalogue`; do not edit by hand. -->',
    '',
    'Every field of the file [`booking import`](catalogue.md) reads, object by object; the same rules as',
    '[catalogue.schema.json](catalogue.schema.json), which editors use when a file names it in `$schema`.',
    'An unknown key is refused (with the nearest known key suggested); "required" fields must be given,',
    'the others take their default. Checks across entities (refs that exist, overlaps) are listed in',
    '[Catalogue format](catalogue.md).',
  ];
  for (const { path, schema: object } of sections(schema, '', [])) {
    const required = new Set(object.required ?? []);
    lines.push('', `## ${path ? `\`${path}\`` : 'The file'}`, '');
    if (path && object.description) lines.push(cell(object.description), '');
    lines.push('| Field | Type | Required | Default | Rules |', '| --- | --- | --- | --- | --- |');
    for (const [key, field] of Object.entries(object.properties ?? {})) {
      const rules = [
        ...(field.description ? [cell(field.description).replace(/\.$/, '')] : []),
        ...limits(field),
      ].join('; ');
      const fallback = field.default === undefined ? '' : `\`${JSON.stringify(field.default)}\``;
      lines.push(
        `| \`${key}\` | ${typeOf(field)} | ${required.has(key) ? 'yes' : ''} | ${fallback} | ${rules} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
