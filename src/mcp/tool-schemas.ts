import { z } from 'zod';
import { CALLER_SUPPLIED_OUTPUT } from './caller-text.ts';
import { outputSchema } from './tool-kit.ts';
import type { ToolSpec } from './tool-spec.ts';

/** A JSON Schema object as tools/list carries it. */
export type JsonSchema = { [keyword: string]: unknown };

/** The schema of a tool's arguments or answer: always an object. */
export type ObjectSchema = JsonSchema & { type: 'object' };

/** A tool as tools/list describes it (MCP's Tool), built once per process from its ToolSpec. */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: ObjectSchema;
  outputSchema: ObjectSchema;
  annotations: ToolSpec['annotations'];
}

/**
 * The tools/list entry of a tool. Both schemas are flat and portable (design.md 8.1): no `$ref` or
 * `$defs`, no `anyOf` at the top, no `type` arrays. The input schema, what a model reads to call the
 * tool, keeps every description, and every subschema constrains something (nullable values are `anyOf`
 * a type and null). The output schema is the shape only, for hosts that validate `structuredContent`:
 * each member one level in with its type (a nullable one `anyOf` its type and null: every subschema
 * constrains something, as MCP Inspector's --strict asks), arrays without their items, no descriptions,
 * nothing required (every member depends on the outcome), the envelope every answer has (`ok`, and a
 * failure's code and hint) left to the docs (tool-kit.ts ANSWER_ENVELOPE), nothing forbidden (`booking` carries the REST
 * Booking, whose fields may grow), so the whole list stays under 12,000 characters (design.md 9.3)
 * for models that keep it in their context.
 */
export function toolDefinition(tool: ToolSpec): ToolDefinition {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: objectSchema(
      portable(toJson(z.object(tool.input), 'input'), { full: true, depth: Infinity }),
    ),
    outputSchema: objectSchema(
      portable(toJson(outputSchema(outputOf(tool)), 'output'), {
        full: false,
        depth: 1,
      }),
    ),
    annotations: tool.annotations,
  };
}

/** The payload of a tool's success: its own output, and caller_supplied where it may carry such text. */
function outputOf(tool: ToolSpec): z.ZodRawShape {
  return tool.callerSupplied ? { ...CALLER_SUPPLIED_OUTPUT, ...tool.output } : tool.output;
}

function objectSchema(schema: JsonSchema): ObjectSchema {
  if (schema.type !== 'object') throw new Error('A tool schema must describe an object');
  return schema as ObjectSchema;
}

/** JSON Schema of a zod schema, with every named (`.meta({ id })`) part inlined where it is used. */
function toJson(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const {
    $schema: _dialect,
    $defs,
    ...json
  } = z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as JsonSchema;
  return inline(json, ($defs ?? {}) as Record<string, JsonSchema>);
}

function inline(node: unknown, defs: Record<string, JsonSchema>): JsonSchema {
  if (Array.isArray(node)) return node.map((item) => inline(item, defs)) as unknown as JsonSchema;
  if (typeof node !== 'object' || node === null) return node as JsonSchema;
  const { $ref, ...rest } = node as JsonSchema;
  const base = typeof $ref === 'string' ? { ...defs[$ref.replace('#/$defs/', '')], ...rest } : rest;
  return Object.fromEntries(Object.entries(base).map(([key, value]) => [key, inline(value, defs)]));
}

interface Shaping {
  /** Descriptions and constraints kept (input), or only the shape (output). */
  full: boolean;
  /** Object levels whose properties are spelled out; below that an object is just `type: object`. */
  depth: number;
}

/** Checked by the tool's input schema, not listed: see portable. */
const LIMIT_KEYWORDS = new Set(['minLength', 'maxLength', 'minItems', 'maxItems']);

/** What an output schema keeps: the shape. */
const SHAPE_KEYWORDS = new Set(['type', 'properties', 'anyOf', 'enum', 'const']);

function portable(node: JsonSchema, shaping: Shaping, level = 0): JsonSchema {
  const out: JsonSchema = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === 'additionalProperties' || keyword === 'oneOf') continue;
    if (!shaping.full && !SHAPE_KEYWORDS.has(keyword)) continue;
    // Length and count limits are checked, not listed (tools/list under 12,000, design.md 9.3): a model
    // keeps a name, a note or a list of services short without them, and one too long is answered with
    // the limit ("notes is at most 1000 characters").
    if (LIMIT_KEYWORDS.has(keyword)) continue;
    if (keyword === 'properties') {
      if (level >= shaping.depth) continue;
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([name, sub]) => [
          name,
          portable(sub, shaping, level + 1),
        ]),
      );
    } else if (keyword === 'items') {
      out.items = portable(value as JsonSchema, shaping, level);
    } else if (keyword === 'anyOf') {
      out.anyOf = (value as JsonSchema[]).map((sub) => portable(sub, shaping, level));
    } else if (keyword === 'type' && Array.isArray(value)) {
      out.anyOf = value.map((type) => ({ type }));
    } else {
      out[keyword] = value;
    }
  }
  return out;
}
