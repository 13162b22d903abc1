/**
 * One truth for every request body: the valibot schema a function parses it with, converted to
 * JSON Schema (`@valibot/to-json-schema`), says what `openapi.yaml`'s component says (types,
 * required members, enums, lengths, bounds). Annotations (descriptions, examples, formats) are
 * the document's alone; a rule no schema can say is in the operation's description.
 */
import { describe, expect, it } from '@jest/globals';
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { newPlantSchema } from '../../functions/create-plant/new-plant.ts';
import { recoverSchema } from '../../functions/recover-webhook-endpoint/create-handler.ts';
import { rotationSchema } from '../../functions/rotate-webhook-endpoint-secret/create-handler.ts';
import { errorCodes } from '../../functions/shared/errors/error-codes.ts';
import { int64Max, int64Min } from '../../functions/shared/http/int64-json.ts';
import { readPlantIdParameter } from '../../functions/shared/plants/plant-id.ts';
import { patchSchema, replacementSchema } from '../../functions/update-plant/plant-change.ts';
import {
  endpointPatchSchema,
  newEndpointSchema,
} from '../../functions/webhook-endpoints/endpoint-body.ts';
import { openApiDocument, resolveReference, schemaValidator } from './openapi.ts';

type Json = Record<string, unknown>;

/** The JSON Schema of a valibot schema: an int64 `bigint` is an integer of its range. */
function jsonSchemaOf(schema: v.GenericSchema): Json {
  return toJsonSchema(schema, {
    target: 'draft-2020-12',
    overrideSchema: ({ valibotSchema }) =>
      valibotSchema.type === 'bigint'
        ? { type: 'integer', minimum: Number(int64Min), maximum: Number(int64Max) }
        : undefined,
    // The code-point length check (`maxCodePoints`) is JSON Schema's maxLength.
    overrideAction: ({ valibotAction, jsonSchema }) => {
      const limit = (valibotAction as { maxCodePoints?: number }).maxCodePoints;
      return limit === undefined ? undefined : { ...jsonSchema, maxLength: limit };
    },
  }) as Json;
}

/** What both say: a schema without its annotations, refs resolved, a nullable as a type list. */
function comparable(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const resolved = resolveReference(schema as Json) as Json;
  const anyOf = resolved.anyOf as Json[] | undefined;
  if (anyOf !== undefined) {
    // A nullable: {anyOf: [S, {type: null}]} is S with "null" among its types.
    const nonNull = anyOf.filter((member) => member.type !== 'null');
    if (nonNull.length === 1 && anyOf.length === 2) {
      const [inner] = nonNull as [Json];
      return comparable({ ...inner, type: [inner.type, 'null'] });
    }
  }
  const kept: Json = {};
  for (const [keyword, value] of Object.entries(resolved)) {
    if (
      ['description', 'examples', 'format', 'default', '$schema', 'additionalProperties'].includes(
        keyword,
      )
    ) {
      continue;
    }
    if (keyword === 'properties') {
      kept.properties = Object.fromEntries(
        Object.entries(value as Json).map(([name, member]) => [name, comparable(member)]),
      );
    } else if (keyword === 'items') {
      kept.items = comparable(value);
    } else if (keyword === 'required' || keyword === 'enum') {
      // No required member is said by saying none.
      if ((value as unknown[]).length > 0) kept[keyword] = [...(value as unknown[])].sort();
    } else if (keyword === 'type' && Array.isArray(value)) {
      kept.type = [...value].sort();
    } else if (keyword === 'pattern') {
      // A pattern is said by the schema in its own words; the document's may be looser.
    } else {
      kept[keyword] = value;
    }
  }
  return kept;
}

const components = openApiDocument.components.schemas;

describe('each request body’s valibot schema says what openapi.yaml says', () => {
  it.each([
    ['NewPlant', newPlantSchema],
    ['PlantReplacement', replacementSchema],
    ['PlantPatch', patchSchema],
    ['NewWebhookEndpoint', newEndpointSchema],
    ['WebhookEndpointPatch', endpointPatchSchema],
    ['RotateSecretRequest', rotationSchema],
    ['RecoverRequest', recoverSchema],
  ] as const)('%s', (name, schema) => {
    const documented = components[name];
    expect(documented).toBeDefined();
    const { if: _if, then: _then, ...rest } = documented as Json;
    expect(comparable(jsonSchemaOf(schema as unknown as v.GenericSchema))).toEqual(
      comparable(rest),
    );
  });
});

describe('what openapi.yaml says that the schemas cannot', () => {
  it('says the plant format carries plant.created only (if/then), as a create answers 40027', () => {
    const validate = schemaValidator('NewWebhookEndpoint');
    const url = 'https://hooks.example.com/plants';
    expect(validate({ url, format: 'plant' })).toBe(true);
    expect(validate({ url, format: 'plant', events: ['plant.created'] })).toBe(true);
    expect(validate({ url, format: 'event', events: ['plant.deleted'] })).toBe(true);
    expect(validate({ url, format: 'plant', events: ['plant.deleted'] })).toBe(false);
  });

  it('bounds a path’s plant id to 20 digits, as the API does (400/40005 beyond)', () => {
    const pattern = new RegExp(
      (
        openApiDocument.paths['/plants/{id}'] as {
          parameters: { schema: { pattern: string } }[];
        }
      ).parameters[0]?.schema.pattern ?? '',
    );
    for (const id of ['7', '-7', '007', '9223372036854775807', `${'0'.repeat(18)}42`]) {
      expect([id, pattern.test(id)]).toEqual([id, true]);
      expect(readPlantIdParameter({ pathParameters: { id } } as never)).toBe(BigInt(id));
    }
    for (const id of [`${'0'.repeat(19)}42`, '', '-', '1e3']) {
      expect([id, pattern.test(id)]).toEqual([id, false]);
      expect(() => readPlantIdParameter({ pathParameters: { id } } as never)).toThrow(
        expect.objectContaining({ code: errorCodes.invalidParameter }),
      );
    }
  });
});
