/**
 * The OpenAPI document as the tests see it: parsed from `openapi.yaml`, with a JSON Schema
 * 2020-12 validator for each of its schemas and a check that an HTTP response is one the
 * document describes for `POST /plants`.
 */
import { readFileSync } from 'node:fs';
import { expect } from '@jest/globals';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import { load } from 'js-yaml';

export interface MediaTypeObject {
  readonly schema: { readonly $ref: string };
  readonly examples?: Record<string, { readonly value: unknown }>;
}

export interface ResponseObject {
  readonly description: string;
  readonly headers?: Record<string, unknown>;
  readonly content: { readonly 'application/json': MediaTypeObject };
}

export interface SchemaObject {
  readonly properties?: Record<string, Record<string, unknown>>;
  readonly required?: readonly string[];
  readonly [keyword: string]: unknown;
}

export interface OpenApiDocument {
  readonly openapi: string;
  readonly paths: {
    readonly '/plants': {
      readonly post: {
        readonly requestBody: {
          readonly content: { readonly 'application/json': MediaTypeObject };
        };
        readonly responses: Record<string, ResponseObject | { readonly $ref: string }>;
      };
    };
  };
  readonly components: { readonly schemas: Record<string, SchemaObject> };
}

export const openApiText = readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8');

export const openApiDocument = load(openApiText) as OpenApiDocument;

export const createPlantOperation = openApiDocument.paths['/plants'].post;

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
const ajv = new Ajv2020({ strict: true, allErrors: true, formats: { int32: true, int64: true } });

const validators = new Map<string, ValidateFunction>();

/** The validator of `components.schemas[name]`. */
export function schemaValidator(name: string): ValidateFunction {
  let validator = validators.get(name);
  if (validator === undefined) {
    const schema = openApiDocument.components.schemas[name];
    if (schema === undefined) throw new Error(`openapi.yaml has no schema ${name}`);
    validator = ajv.compile(schema);
    validators.set(name, validator);
  }
  return validator;
}

/** The documented response of `POST /plants` for a status, refs resolved. */
export function documentedResponse(statusCode: number): ResponseObject | undefined {
  const response = createPlantOperation.responses[String(statusCode)];
  return response === undefined ? undefined : resolveReference<ResponseObject>(response);
}

/** The name of the schema a response's JSON body must match (`Plant`, `Error`). */
export function schemaNameOf(response: ResponseObject): string {
  return response.content['application/json'].schema.$ref.split('/').at(-1) as string;
}

/**
 * Expects `response` to be one the document describes: a documented status, a JSON content type,
 * every documented header present, and a body valid against the status's schema. Returns the body.
 */
export async function expectDocumentedResponse(response: Response): Promise<unknown> {
  const documented = documentedResponse(response.status);
  expect(documented).toBeDefined();
  expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
  for (const header of Object.keys(documented?.headers ?? {})) {
    expect([header, response.headers.get(header)]).toEqual([header, expect.any(String)]);
  }
  const body: unknown = await response.json();
  const validate = schemaValidator(schemaNameOf(documented as ResponseObject));
  validate(body);
  expect({ body, errors: validate.errors ?? [] }).toEqual({ body, errors: [] });
  return body;
}
