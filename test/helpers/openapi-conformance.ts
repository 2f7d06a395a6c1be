import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

type Json = Record<string, unknown>;

/**
 * Checks responses against the OpenAPI document the app serves: every status a route answers with
 * must be documented for that route, and the body must match the documented schema.
 */
export class OpenApiConformance {
  readonly #ajv: Ajv2020;
  readonly #doc: Json;

  private constructor(doc: Json) {
    this.#doc = doc;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(this.#ajv);
    // Components carry $id/$schema of their own, which would shift ref resolution: strip them and
    // register all components as one document that every ref points into.
    const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
    const cleaned = Object.fromEntries(
      Object.entries(schemas).map(([name, { $id: _id, $schema: _schema, ...rest }]) => [
        name,
        pointIntoDocument(rest),
      ]),
    );
    this.#ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: cleaned } });
  }

  static async load(app: FastifyInstance): Promise<OpenApiConformance> {
    const response = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
    return new OpenApiConformance(response.json());
  }

  /** Throws with the reason when `response` does not match what the document promises. */
  check(method: string, routePattern: string, response: LightMyRequestResponse): void {
    const openApiPath = routePattern.replace(/:([A-Za-z_]+)/g, '{$1}');
    const operation = ((this.#doc.paths as Json)[openApiPath] as Json | undefined)?.[method.toLowerCase()] as
      | Json
      | undefined;
    if (!operation) throw new Error(`${method} ${openApiPath} is not in the OpenAPI document`);
    const documented = (operation.responses as Json)[String(response.statusCode)] as Json | undefined;
    if (!documented) {
      throw new Error(`${method} ${openApiPath} answered ${response.statusCode}, which is not documented`);
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
