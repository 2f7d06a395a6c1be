import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

type Json = Record<string, unknown>;

/**
 * Checks responses against the OpenAPI document the app serves: every status a route answers with
 * must be documented for that route, the body must match the documented schema, and every header the
 * document says that answer carries must be there, matching its schema.
 */
export class OpenApiConformance {
  readonly #ajv: Ajv2020;
  readonly #doc: Json;

  private constructor(doc: Json) {
    this.#doc = doc;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(this.#ajv);
    // All components as one document that every ref points into.
    const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
    const pointed = Object.fromEntries(
      Object.entries(schemas).map(([name, schema]) => [name, pointIntoDocument(schema)]),
    );
    this.#ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: pointed } });
  }

  static async load(app: FastifyInstance): Promise<OpenApiConformance> {
    const response = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
    return new OpenApiConformance(response.json());
  }

  /** A response or header object, through its $ref into components when it has one. */
  #resolve(object: Json | undefined): Json | undefined {
    const ref = object?.$ref;
    if (typeof ref !== 'string') return object;
    const [, , kind, name] = ref.split('/');
    return ((this.#doc.components as Json)[kind!] as Record<string, Json>)[name!];
  }

  /** Throws with the reason when `response` does not match what the document promises. */
  check(method: string, routePattern: string, response: LightMyRequestResponse): void {
    const openApiPath = routePattern.replace(/:([A-Za-z_]+)/g, '{$1}');
    const operation = ((this.#doc.paths as Json)[openApiPath] as Json | undefined)?.[method.toLowerCase()] as
      | Json
      | undefined;
    if (!operation) throw new Error(`${method} ${openApiPath} is not in the OpenAPI document`);
    const documented = this.#resolve(
      (operation.responses as Json)[String(response.statusCode)] as Json | undefined,
    );
    if (!documented) {
      throw new Error(`${method} ${openApiPath} answered ${response.statusCode}, which is not documented`);
    }
    for (const [name, declared] of Object.entries((documented.headers ?? {}) as Record<string, Json>)) {
      const header = this.#resolve(declared)!;
      const value = response.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) {
          throw new Error(`${method} ${openApiPath} ${response.statusCode} lacks the header ${name}`);
        }
        continue;
      }
      const validate = this.#ajv.compile(header.schema as Json);
      const typed = (header.schema as Json).type === 'integer' ? Number(value) : String(value);
      if (!validate(typed)) {
        throw new Error(
          `${method} ${openApiPath} ${response.statusCode} header ${name}: ${String(value)} does not match`,
        );
      }
    }
    const schema = ((documented.content as Json | undefined)?.['application/json'] as Json | undefined)
      ?.schema as Json | undefined;
    if (!schema) return;
    const validate = this.#ajv.compile(pointIntoDocument(schema));
    if (!validate(response.json())) {
      throw new Error(
        `${method} ${openApiPath} ${response.statusCode} body does not match its schema: ${this.#ajv.errorsText(validate.errors)}`,
      );
    }
  }
}

const DOCUMENT_ID = 'https://booking.test/openapi.json';

function pointIntoDocument(schema: Json): Json {
  return JSON.parse(
    JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${DOCUMENT_ID}#/components/schemas/`),
  );
}
