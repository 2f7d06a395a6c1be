import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

type Json = Record<string, unknown>;

/**
 * Checks responses against the OpenAPI document the app serves, as strict as it is made (its objects
 * closed to fields they do not list, which the published one leaves open to fields added later): every
 * status a route answers with must be documented for that route, the body must match the documented
 * schema, and every header the document says that answer carries must be there, matching its schema.
 */
export class OpenApiConformance {
  readonly #ajv: Ajv2020;
  readonly #doc: Json;
  readonly #validators = new Map<string, ValidateFunction>();

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

  /**
   * The checker of `app`'s document. Generating the document (and compiling its schemas) took about a
   * second per app, a test app each test: apps with the same routes (method and path, the route table
   * as Fastify prints it) share one checker, as their documents are the same, made by the same code
   * from the same route schemas (only `servers`, PUBLIC_BASE_URL, may differ, which no check reads).
   */
  static async load(app: FastifyInstance): Promise<OpenApiConformance> {
    const routes = app.printRoutes({ commonPrefix: false });
    const known = loaded.get(routes);
    if (known) return known;
    // The document before it is published open to added fields: an answer's undocumented field is caught.
    const conformance = new OpenApiConformance(JSON.parse(JSON.stringify(app.swagger())));
    loaded.set(routes, conformance);
    return conformance;
  }

  /** Ajv's validator of `schema`, compiled once per schema (Ajv's own cache is by object, new each check). */
  #validator(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.#validators.get(key);
    if (!validate) {
      validate = this.#ajv.compile(schema);
      this.#validators.set(key, validate);
    }
    return validate;
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
      const validate = this.#validator(header.schema as Json);
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
    const validate = this.#validator(pointIntoDocument(schema));
    if (!validate(response.json())) {
      throw new Error(
        `${method} ${openApiPath} ${response.statusCode} body does not match its schema: ${this.#ajv.errorsText(validate.errors)}`,
      );
    }
  }
}

const DOCUMENT_ID = 'https://booking.test/openapi.json';

/** The checkers made so far in this process, by the route table of their apps. */
const loaded = new Map<string, OpenApiConformance>();

function pointIntoDocument(schema: Json): Json {
  return JSON.parse(
    JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${DOCUMENT_ID}#/components/schemas/`),
  );
}
