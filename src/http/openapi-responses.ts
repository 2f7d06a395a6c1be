import type { OpenAPIV3_1 } from 'openapi-types';

/**
 * What the OpenAPI document says of every operation beyond its own schemas (openapi.ts): the headers
 * every answer carries, and the answers any request may get before its route has run.
 */

const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

const integer = (description: string): OpenAPIV3_1.HeaderObject => ({
  description,
  required: true,
  schema: { type: 'integer', minimum: 0 },
});

/** components.headers: the contract's headers, by name. */
const HEADERS: Record<string, OpenAPIV3_1.HeaderObject> = {
  'X-Request-Id': {
    description:
      "The request's id: the caller's own when it is a plain token (1-128 of A-Za-z0-9._:-), else a UUID.",
    required: true,
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  },
  'X-RateLimit-Limit': integer(
    "Requests allowed in the window: the key's; before a usable key is known, the failed authentications allowed from the client's address.",
  ),
  'X-RateLimit-Remaining': integer('Requests left in the window.'),
  'X-RateLimit-Reset': integer('UNIX time (seconds) at which the window ends.'),
  'Retry-After': integer('Seconds to wait before retrying.'),
  Allow: {
    description: 'The methods the path takes.',
    required: true,
    schema: { type: 'string', pattern: '^[A-Z]+(, [A-Z]+)*$' },
  },
};

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The headers of an answer with `status`: every answer's four, and Retry-After or Allow where due. */
export function responseHeaders(status: number): Record<string, { $ref: string }> {
  return {
    'X-Request-Id': ref('X-Request-Id'),
    'X-RateLimit-Limit': ref('X-RateLimit-Limit'),
    'X-RateLimit-Remaining': ref('X-RateLimit-Remaining'),
    'X-RateLimit-Reset': ref('X-RateLimit-Reset'),
    ...(status === 429 && { 'Retry-After': ref('Retry-After') }),
    ...(status === 405 && { Allow: ref('Allow') }),
  };
}

/** Answers given before a route runs, so possible for every operation. */
const SHARED: Record<string, { name: string; description: string }> = {
  405: {
    name: 'MethodNotAllowed',
    description: 'method_not_allowed: the path takes other methods, listed in Allow.',
  },
  408: {
    name: 'RequestTimeout',
    description: 'request_timeout: the headers or the body did not arrive in time.',
  },
  417: {
    name: 'ExpectationFailed',
    description: 'expectation_failed: an Expect header other than 100-continue.',
  },
  431: {
    name: 'HeadersTooLarge',
    description: 'headers_too_large: the request line and headers exceed 16 KiB.',
  },
};

/**
 * The answer to a body over the server's limit, read (and refused) before the route runs for every
 * method but GET and HEAD, whether or not the operation takes a body.
 */
const BODY_TOO_LARGE = {
  name: 'PayloadTooLarge',
  description: 'payload_too_large: the request body is larger than 64 KiB.',
};

/**
 * The shared answers as components, the references every operation gets (`bodyRead`: the operations
 * whose method has its body read, one more), and the headers they use.
 */
export function responsesEveryOperationMayGive() {
  const components: Record<string, OpenAPIV3_1.ResponseObject> = {};
  const references: Record<string, { $ref: string }> = {};
  for (const [status, { name, description }] of Object.entries({ ...SHARED, 413: BODY_TOO_LARGE })) {
    components[name] = { description, headers: responseHeaders(Number(status)), content: ERROR_CONTENT };
    references[status] = { $ref: `#/components/responses/${name}` };
  }
  const { 413: bodyTooLarge, ...always } = references;
  return { components, references: always, bodyRead: { 413: bodyTooLarge! }, headers: HEADERS };
}
