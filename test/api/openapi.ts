/**
 * The OpenAPI document as the tests see it: parsed from `openapi.yaml`, with a JSON Schema
 * 2020-12 validator for each of its schemas and a check that an HTTP response is one the
 * document describes for an operation.
 */
import { readFileSync } from 'node:fs';
import { expect } from '@jest/globals';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import { load } from 'js-yaml';

export interface MediaTypeObject {
  readonly schema: SchemaObject & { readonly $ref?: string };
  readonly examples?: Record<string, { readonly value: unknown }>;
}

export interface ResponseObject {
  readonly description: string;
  readonly headers?: Record<string, unknown>;
  /** Absent for a response without a body (204). */
  readonly content?: { readonly 'application/json': MediaTypeObject };
}

export interface SchemaObject {
  readonly properties?: Record<string, Record<string, unknown>>;
  readonly required?: readonly string[];
  readonly [keyword: string]: unknown;
}

export interface OperationObject {
  readonly operationId: string;
  readonly summary?: string;
  readonly security?: readonly Record<string, readonly string[]>[];
  readonly parameters?: readonly { readonly name: string; readonly in: string }[];
  readonly requestBody?: {
    readonly content: { readonly 'application/json': MediaTypeObject };
  };
  readonly responses: Record<string, ResponseObject | { readonly $ref: string }>;
}

export interface OpenApiDocument {
  readonly openapi: string;
  readonly paths: Record<string, Record<string, OperationObject | unknown>>;
  readonly webhooks?: Record<string, Record<string, OperationObject>>;
  readonly components: { readonly schemas: Record<string, SchemaObject> };
}

export const openApiText = readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8');

export const openApiDocument = load(openApiText) as OpenApiDocument;

const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every operation of the document's paths, with its method and path. */
export const operations = Object.entries(openApiDocument.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => httpMethods.includes(method))
    .map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operation: operation as OperationObject,
    })),
);

/** The operation with this `operationId`. */
export function operationById(operationId: string): OperationObject {
  const found = operations.find(({ operation }) => operation.operationId === operationId);
  if (found === undefined) throw new Error(`openapi.yaml has no operation ${operationId}`);
  return found.operation;
}

export const createPlantOperation = operationById('createPlant');

/** Follows a local `$ref` (`#/components/...`); anything else is returned as it is. */
export function resolveReference<T>(value: T | { readonly $ref: string }): T {
  if (typeof value !== 'object' || value === null || !('$ref' in value)) return value as T;
  const path = value.$ref.replace(/^#\//, '').split('/');
  return path.reduce<unknown>(
    (node, key) => (node as Record<string, unknown>)[key],
    openApiDocument,
  ) as T;
}

// Strict, so a misspelt keyword in the document fails the tests. OpenAPI's int32/int64 formats
// are annotations to JSON Schema; the contract's exact int64 range is checked separately.
// `date-time` (RFC 3339, as the events' timestamps are written) is checked for real.
const ajv = new Ajv2020({
  strict: true,
  allErrors: true,
  formats: {
    int32: true,
    int64: true,
    uri: (text: string) => URL.canParse(text),
    'date-time': (text: string) =>
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text) &&
      !Number.isNaN(Date.parse(text)),
  },
});

const validators = new Map<string, ValidateFunction>();

/** A schema whose `$ref`s into the components point at `$defs` instead, where Ajv finds them. */
function withLocalReferences<T>(schema: T): T {
  return JSON.parse(JSON.stringify(schema).replaceAll('#/components/schemas/', '#/$defs/')) as T;
}

/** The component schemas, as `$defs` of every schema compiled. */
const componentSchemas = withLocalReferences(openApiDocument.components.schemas);

/** The validator of `components.schemas[name]`. */
export function schemaValidator(name: string): ValidateFunction {
  let validator = validators.get(name);
  if (validator === undefined) {
    const schema = openApiDocument.components.schemas[name];
    if (schema === undefined) throw new Error(`openapi.yaml has no schema ${name}`);
    validator = ajv.compile({ ...withLocalReferences(schema), $defs: componentSchemas });
    validators.set(name, validator);
  }
  return validator;
}

/** The documented response of an operation for a status, refs resolved. */
export function documentedResponse(
  statusCode: number,
  operation: OperationObject = createPlantOperation,
): ResponseObject | undefined {
  const response = operation.responses[String(statusCode)];
  return response === undefined ? undefined : resolveReference<ResponseObject>(response);
}

/** A validator for a response's JSON body: its schema, `$ref`s into the components resolved. */
function bodyValidator(response: ResponseObject): ValidateFunction {
  const schema = response.content?.['application/json'].schema;
  if (schema === undefined) throw new Error('the response has no JSON body');
  if (typeof schema.$ref === 'string')
    return schemaValidator(schema.$ref.split('/').at(-1) as string);
  const key = JSON.stringify(schema);
  let validator = validators.get(key);
  if (validator === undefined) {
    validator = ajv.compile({ ...withLocalReferences(schema), $defs: componentSchemas });
    validators.set(key, validator);
  }
  return validator;
}

/** The name of the schema a response's JSON body must match (`Plant`, `Error`). */
export function schemaNameOf(response: ResponseObject): string | undefined {
  return response.content?.['application/json'].schema.$ref?.split('/').at(-1);
}

/**
 * Expects `response` to be one the document describes for the operation: a documented status,
 * every documented header present (`Link` only while more pages remain, `Idempotent-Replayed` on
 * a replay: either is checked where it is sent), and either no body
 * (204) or a JSON body valid against the status's schema. Returns the body.
 */
export async function expectDocumentedResponse(
  response: Response,
  operationId = 'createPlant',
  /** Documented headers a stand-in does not send (`sam local` sends no request id). */
  { without = [] }: { readonly without?: readonly string[] } = {},
): Promise<unknown> {
  const documented = documentedResponse(response.status, operationById(operationId));
  expect([response.status, documented]).toEqual([response.status, expect.anything()]);
  for (const header of Object.keys(documented?.headers ?? {})) {
    if (header === 'Link' || header === 'Idempotent-Replayed' || without.includes(header)) continue;
    expect([header, response.headers.get(header)]).toEqual([header, expect.any(String)]);
  }
  if (documented?.content === undefined) {
    expect(await response.text()).toBe('');
    return undefined;
  }
  expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
  const body: unknown = await response.json();
  const validate = bodyValidator(documented);
  validate(body);
  expect({ body, errors: validate.errors ?? [] }).toEqual({ body, errors: [] });
  return body;
}
