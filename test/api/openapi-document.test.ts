import { beforeAll, describe, expect, it } from '@jest/globals';
import { newPlantSchema, parseNewPlant } from '../../functions/create-plant/new-plant.ts';
import { encodeCursor, readPageParameters } from '../../functions/list-plants/page-cursor.ts';
import {
  endpointErrorCodes,
  errorCodes,
  everyErrorCode,
  gatewayErrorCodes,
} from '../../functions/shared/errors/error-codes.ts';
import { preconditionFailed, preconditionRequired } from '../../functions/shared/errors/errors.ts';
import { int64Max, int64Min } from '../../functions/shared/http/int64-json.ts';
import { routes } from '../../functions/shared/http/routes.ts';
import { readPlantIdParameter } from '../../functions/shared/plants/plant-id.ts';
import { parsePatch } from '../../functions/update-plant/plant-change.ts';
import { readEndpointIdParameter } from '../../functions/webhook-endpoints/endpoint.ts';
import { readNewEndpoint } from '../../functions/webhook-endpoints/endpoint-body.ts';
import { checkedUrlOf, deployedUrlPolicy } from '../../functions/webhook-endpoints/endpoint-url.ts';
import { gatewayResponses } from '../../infra/gateway-responses.ts';
import {
  createPlantOperation,
  documentedResponse,
  type OperationObject,
  openApiDocument,
  openApiText,
  operations,
  type ResponseObject,
  resolveReference,
  schemaValidator,
} from './openapi.ts';

/** The cursor of a one-segment walk after `after`: the only kind the list wrote before segments. */
const cursorAt = (after: bigint) => encodeCursor({ segments: 1, first: 0, segment: 0, after });

const codes = everyErrorCode();

/** Every example of every documented response of every operation, with its status. */
const responseExamples = operations.flatMap(({ operation }) =>
  Object.keys(operation.responses).flatMap((status) => {
    const response = documentedResponse(Number(status), operation) as ResponseObject;
    const examples = response.content?.['application/json'].examples ?? {};
    return Object.entries(examples).map(([name, example]) => ({
      operationId: operation.operationId,
      status: Number(status),
      name,
      value: example.value as { error: number; message: string },
    }));
  }),
);
const errorExamples = responseExamples.filter((example) => example.status >= 400);

/** The statuses API Gateway itself may answer on any route, besides the function's own. */
const everyRouteStatuses = [400, 401, 403, 404, 429, 500, 503];

/** The statuses of an `Idempotency-Key`'s request: under way, and sent with another request. */
const keyedStatuses = [
  endpointErrorCodes.idempotencyKeyInUse.statusCode,
  endpointErrorCodes.idempotencyKeyReused.statusCode,
];

/** The statuses of conditional and keyed requests, by operation. */
const conditionalStatuses: Readonly<Record<string, readonly number[]>> = {
  getPlant: [304, errorCodes.preconditionFailed.statusCode],
  replacePlant: [
    errorCodes.preconditionFailed.statusCode,
    errorCodes.preconditionRequired.statusCode,
  ],
  patchPlant: [
    errorCodes.preconditionFailed.statusCode,
    errorCodes.preconditionRequired.statusCode,
  ],
  deletePlant: [errorCodes.preconditionFailed.statusCode],
  getWebhookEndpoint: [304, errorCodes.preconditionFailed.statusCode],
  deleteWebhookEndpoint: [errorCodes.preconditionFailed.statusCode],
  updateWebhookEndpoint: [
    errorCodes.preconditionFailed.statusCode,
    errorCodes.preconditionRequired.statusCode,
  ],
  createWebhookEndpoint: keyedStatuses,
  testWebhookEndpoint: keyedStatuses,
  rotateWebhookEndpointSecret: keyedStatuses,
  // 409 is also a disabled endpoint's.
  recoverWebhookEndpoint: keyedStatuses,
};

/** The message a call fails with (what the function answers). */
async function messageOf(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a failure');
}

/** The real messages of the webhook endpoint codes whose messages name what failed. */
const endpointMessages = new Map<number, string[]>();
beforeAll(async () => {
  const policy = { ...deployedUrlPolicy, resolve: async () => [] };
  const add = async (code: { error: number }, ...calls: (() => unknown)[]) => {
    endpointMessages.set(code.error, await Promise.all(calls.map(messageOf)));
  };
  await add(endpointErrorCodes.invalidWebhookEndpoint, () =>
    readNewEndpoint({ url: 'https://x', description: 5 }),
  );
  await add(endpointErrorCodes.endpointUrlMalformed, () => checkedUrlOf('not a url', policy));
  await add(endpointErrorCodes.endpointUrlScheme, () =>
    checkedUrlOf('http://hooks.example.com', policy),
  );
  await add(endpointErrorCodes.endpointUrlUserInfo, () =>
    checkedUrlOf('https://user:pw@hooks.example.com', policy),
  );
  await add(endpointErrorCodes.endpointUrlNotPublic, () =>
    checkedUrlOf('https://169.254.169.254/latest/meta-data/', policy),
  );
  await add(endpointErrorCodes.endpointUrlUnresolvable, () =>
    checkedUrlOf('https://hooks.example.com/', policy),
  );
  await add(endpointErrorCodes.unknownEventType, () =>
    readNewEndpoint({ url: 'https://x', events: ['plant.eaten'] }),
  );
  await add(endpointErrorCodes.invalidWebhookFormat, () =>
    readNewEndpoint({ url: 'https://x', format: 'plant', events: ['plant.deleted'] }),
  );
});

function messageOfInvalidId(id: string): string {
  try {
    readPlantIdParameter({ pathParameters: { id } } as never);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an invalid id');
}

function messageOfInvalidEndpointId(id: string): string {
  try {
    readEndpointIdParameter({ endpointId: id });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an invalid endpoint id');
}

function messageOfInvalidChange(body: unknown): string {
  try {
    parsePatch(body, 10n);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an invalid change');
}

function messageOfInvalidLimit(limit: string): string {
  try {
    readPageParameters({ multiValueQueryStringParameters: { limit: [limit] } } as never);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an invalid limit');
}

function messageOfInvalidPlant(body: unknown): string {
  try {
    parseNewPlant(body);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an invalid plant');
}

describe('openapi.yaml', () => {
  it('is an OpenAPI 3.1.0 document', () => {
    expect(openApiDocument.openapi).toBe('3.1.0');
  });

  it('gives every list’s cursor the shape its function reads: never empty, a pattern, a longest', () => {
    const cursors = operations.flatMap(({ operation }) =>
      (operation.parameters ?? [])
        .map((parameter) => resolveReference(parameter) as { name: string; schema?: object })
        .filter((parameter) => parameter.name === 'cursor')
        .map((parameter) => [operation.operationId, parameter.schema]),
    );
    expect(cursors.length).toBeGreaterThanOrEqual(3);
    for (const [operationId, schema] of cursors) {
      expect([operationId, schema]).toEqual([
        operationId,
        expect.objectContaining({
          minLength: 1,
          maxLength: expect.any(Number),
          pattern: expect.any(String),
        }),
      ]);
    }
    // The plants list's: every cursor it writes fits, and what it refuses for its shape does not.
    const plants = Object.fromEntries(cursors).listPlants as {
      minLength: number;
      maxLength: number;
      pattern: string;
    };
    const fits = (cursor: string) =>
      cursor.length >= plants.minLength &&
      cursor.length <= plants.maxLength &&
      new RegExp(plants.pattern).test(cursor);
    for (const id of [int64Min, int64Max, 0n, 7n]) expect(fits(cursorAt(id))).toBe(true);
    // The longest a walk in segments writes.
    const longest = { segments: 1000, first: 999, segment: 999, after: int64Min };
    expect(fits(encodeCursor(longest))).toBe(true);
    for (const cursor of ['', 'a'.repeat(plants.maxLength + 1), 'a+b', 'a/b=']) {
      expect(fits(cursor)).toBe(false);
      expect(() =>
        readPageParameters({ multiValueQueryStringParameters: { cursor: [cursor] } } as never),
      ).toThrow();
    }
  });

  describe('agrees with the error-code table', () => {
    it('lists exactly the codes of the error tables in the Error schema', () => {
      const documented = openApiDocument.components.schemas.Error?.properties?.error?.enum;
      expect([...(documented as number[])].sort()).toEqual(
        [...new Set(codes.map((code) => code.error))].sort(),
      );
    });

    it.each(
      operations.map(({ operation }): [string, OperationObject] => [
        operation.operationId,
        operation,
      ]),
    )(
      '%s documents its success and every status the gateway and the function answer, nothing else',
      (_operationId, operation) => {
        const statuses = Object.keys(operation.responses).map(Number);
        const success = statuses.filter((status) => status < 300);
        expect(success).toHaveLength(1);
        expect(statuses.filter((status) => status >= 300).sort()).toEqual(
          [...everyRouteStatuses, ...(conditionalStatuses[operation.operationId] ?? [])].sort(),
        );
      },
    );

    it.each(codes)('has an example of $error under status $statusCode', (code) => {
      const example = errorExamples.find((candidate) => candidate.value.error === code.error);
      expect(example?.status).toBe(code.statusCode);
    });

    it.each(errorExamples)(
      "$operationId example $name ($status) is a valid Error with its code's message",
      ({ status, value }) => {
        expect(schemaValidator('Error')(value)).toBe(true);
        const code = codes.find((candidate) => candidate.error === value.error);
        expect(code?.statusCode).toBe(status);
        // 40002's and 40005's messages name what failed: the examples are the real ones for a
        // missing name, a change that is not an object, limit=0 and an id that is not one;
        // 41200's names the header that failed.
        const namedMessages: Record<number, readonly string[]> = {
          [errorCodes.invalidPlant.error]: [
            messageOfInvalidPlant({ id: 10n }),
            messageOfInvalidChange([]),
          ],
          [errorCodes.invalidParameter.error]: [
            messageOfInvalidLimit('0'),
            messageOfInvalidId('x'),
          ],
          [errorCodes.preconditionFailed.error]: [
            preconditionFailed('If-Match').message,
            preconditionFailed('If-None-Match').message,
            preconditionFailed('If-Match', 'webhook endpoint').message,
          ],
          [errorCodes.preconditionRequired.error]: [
            preconditionRequired().message,
            preconditionRequired('webhook endpoint').message,
          ],
          // Recover's: a body that is no object, a since out of range; the path's endpoint id.
          [endpointErrorCodes.invalidWebhookEndpoint.error]: [
            ...(endpointMessages.get(endpointErrorCodes.invalidWebhookEndpoint.error) ?? []),
            'The body must be a JSON object: {"since": …}.',
            'overlapSeconds must be a whole number of seconds from 0 to 86400.',
          ],
          [endpointErrorCodes.invalidRecoverySince.error]: [
            'since must be an RFC 3339 time from the last 7 days, such as 2026-11-25T10:00:00Z.',
          ],
          [endpointErrorCodes.endpointLimitReached.error]: [
            'This client has 50 webhook endpoints, the most it may have; delete one first.',
          ],
          ...Object.fromEntries(
            [...endpointMessages].filter(
              ([error]) => error !== endpointErrorCodes.invalidWebhookEndpoint.error,
            ),
          ),
        };
        namedMessages[errorCodes.invalidParameter.error] = [
          ...(namedMessages[errorCodes.invalidParameter.error] ?? []),
          messageOfInvalidEndpointId('x'),
        ];
        // The gateway's throttling and the web ACL's per-client limit share a code.
        namedMessages[errorCodes.throttled.error] = [
          ...(namedMessages[errorCodes.throttled.error] ?? [errorCodes.throttled.message]),
          gatewayErrorCodes.tokenThrottled.message,
        ];
        expect(namedMessages[value.error] ?? [code?.message]).toContain(value.message);
      },
    );
  });

  describe('agrees with the route table', () => {
    it('has exactly the operations of the route table, each with its operationId', () => {
      const documented = operations.map(
        ({ method, path, operation }) => `${method} ${path} ${operation.operationId}`,
      );
      const routed = routes.map((route) => `${route.method} ${route.path} ${route.operationId}`);
      expect(documented.sort()).toEqual(routed.sort());
    });

    it.each(routes.map((route) => [route.method, route.path, route.scopes.join(' and ')]))(
      '%s %s asks for a bearer token with exactly the scopes %s',
      (method, path) => {
        const route = routes.find((entry) => entry.method === method && entry.path === path);
        const found = operations.find(
          (candidate) => candidate.method === method && candidate.path === path,
        );
        // One requirement listing every scope: OpenAPI's "all of these" (a token needs each).
        expect(found?.operation.security).toEqual([{ bearerAuth: [...(route?.scopes ?? [])] }]);
      },
    );

    it('has no document-wide security that would hide a missing per-operation one', () => {
      expect((openApiDocument as { security?: unknown }).security).toBeUndefined();
    });
  });

  it.each([
    ['newPlant', 'StoredPlant'],
    ['plantCreated', 'PlantChangedEvent'],
    ['plantUpdated', 'PlantChangedEvent'],
    ['plantDeleted', 'PlantDeletedEvent'],
  ])(
    'declares the %s webhook with the %s body and the Standard Webhooks headers',
    (name, schema) => {
      const webhook = openApiDocument.webhooks?.[name]?.post;
      expect(webhook?.requestBody?.content['application/json'].schema.$ref).toBe(
        `#/components/schemas/${schema}`,
      );
      const parameters = (webhook?.parameters ?? []).map((parameter) =>
        resolveReference<{ name: string; in: string }>(parameter),
      );
      expect(parameters.map((parameter) => [parameter.name, parameter.in])).toEqual([
        ['webhook-id', 'header'],
        ['webhook-timestamp', 'header'],
        ['webhook-signature', 'header'],
        ['plant-version', 'header'],
        ['traceparent', 'header'],
      ]);
      for (const example of Object.values(
        webhook?.requestBody?.content['application/json'].examples ?? {},
      )) {
        expect(schemaValidator(schema)(example.value)).toBe(true);
      }
    },
  );

  describe('agrees with the gateway responses', () => {
    it.each(Object.values(gatewayResponses))(
      '$type: status, body and headers are documented',
      (gatewayResponse) => {
        const documented = documentedResponse(gatewayResponse.statusCode);
        expect(documented).toBeDefined();
        expect(schemaValidator('Error')(gatewayResponse.body)).toBe(true);
        const documentedHeaders = Object.keys(documented?.headers ?? {});
        for (const header of Object.keys(gatewayResponse.headers)) {
          if (header !== 'Content-Type') expect(documentedHeaders).toContain(header);
        }
      },
    );
  });

  describe('agrees with the NewPlant schema of the function', () => {
    const newPlant = openApiDocument.components.schemas.NewPlant;

    it('declares the same fields, with the same ones required', () => {
      const entries = Object.entries(newPlantSchema.entries);
      expect(Object.keys(newPlant?.properties ?? {})).toEqual(entries.map(([name]) => name));
      expect(newPlant?.required).toEqual(
        entries.filter(([, schema]) => schema.type !== 'optional').map(([name]) => name),
      );
    });

    it('bounds id by the exact int64 range', () => {
      // YAML parsers read numbers as doubles, which round 2^63 - 1: check the text itself.
      const idBounds = /id:\n(?:\s+\S.*\n)*?\s+minimum: (-?\d+)\n\s+maximum: (-?\d+)\n/.exec(
        openApiText,
      );
      expect(idBounds?.slice(1).map(BigInt)).toEqual([int64Min, int64Max]);
      expect(newPlant?.properties?.id).toMatchObject({ type: 'integer', format: 'int64' });
    });

    it('has request examples that are valid NewPlants and answer examples that are Plants', () => {
      const requestExamples = Object.values(
        createPlantOperation.requestBody?.content['application/json'].examples ?? {},
      );
      expect(requestExamples.length).toBeGreaterThan(0);
      for (const { value } of requestExamples)
        expect(schemaValidator('NewPlant')(value)).toBe(true);
      const answers = responseExamples.filter(
        (example) => example.status === 200 && example.operationId === 'createPlant',
      );
      expect(answers.length).toBeGreaterThan(0);
      for (const { value } of answers) expect(schemaValidator('Plant')(value)).toBe(true);
    });
  });
});
