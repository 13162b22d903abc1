/**
 * What every webhook endpoint function shares: its dependencies (each function uses what its
 * work needs, and its role allows only that), the owner of the request (the token's subject, as
 * the authorizer passed it), and the middy handler around its work.
 */

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { apiResponses } from '../shared/http/api-responses.ts';
import { checkAllowedOrigins } from '../shared/http/cors.ts';
import {
  commaList,
  type EnvironmentReader,
  readEnvironment,
} from '../shared/platform/environment.ts';
import { createLogger, invocationLoggers, type Logger } from '../shared/platform/logger.ts';
import type { DeliveryQueue } from '../shared/webhooks/delivery-queue.ts';
import { type EndpointRecord, readEndpointIdParameter } from './endpoint.ts';
import { type EndpointTable, readEndpoint } from './endpoint-store.ts';
import { deployedUrlPolicy, type EndpointUrlPolicy } from './endpoint-url.ts';
import type { SecretBox } from './secret-box.ts';
import type { WebhookLogTable } from './webhook-log.ts';

/** The dependencies of an endpoint function (the local API and tests bring their own). */
export interface EndpointHandlerDependencies {
  readonly documentClient: DynamoDBDocumentClient;
  readonly endpointsTableName: string;
  readonly logTableName: string;
  /** Sealing new secrets (create, rotate), opening one (`GET …/secret`): each what it does. */
  readonly secretBox?: Partial<SecretBox>;
  /** Which URLs an endpoint may have: the deployed stages' unless given. */
  readonly urlPolicy?: EndpointUrlPolicy;
  /** Where a test event or a recover's events are queued. */
  readonly deliveries?: DeliveryQueue;
  /** The origins whose pages may read the answers (`cors.ts`); none when absent. */
  readonly allowedOrigins?: readonly string[];
  readonly logger?: Logger;
  readonly now?: () => number;
}

/** What the work of one request gets. */
export interface EndpointRequest {
  readonly event: APIGatewayProxyEvent;
  /** The token's subject: every endpoint the request names must be its. */
  readonly owner: string;
  readonly table: EndpointTable;
  readonly log: WebhookLogTable;
  readonly dependencies: EndpointHandlerDependencies;
  readonly urlPolicy: EndpointUrlPolicy;
  readonly logger: Logger;
  readonly now: () => number;
}

/** The handler of an endpoint function: one log line per request, failures in the Error shape. */
export function createEndpointHandler(
  service: string,
  dependencies: EndpointHandlerDependencies,
  work: (request: EndpointRequest) => Promise<APIGatewayProxyResult>,
) {
  const loggerOf = invocationLoggers(dependencies.logger ?? createLogger({ service }));
  const { documentClient } = dependencies;
  const table = { documentClient, endpointsTableName: dependencies.endpointsTableName };
  const log = { documentClient, logTableName: dependencies.logTableName };
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(apiResponses({ loggerOf, allowedOrigins: dependencies.allowedOrigins ?? [] }))
    .handler((event, context) =>
      work({
        event,
        owner: ownerOf(event),
        table,
        log,
        dependencies,
        urlPolicy: dependencies.urlPolicy ?? deployedUrlPolicy,
        logger: loggerOf(context),
        now: dependencies.now ?? Date.now,
      }),
    );
}

/**
 * The token's subject, which the authorizer passes in its context (`sub`). Every route behind it
 * has one; an event without one did not come through the authorizer: a fault, never an owner.
 */
function ownerOf(event: APIGatewayProxyEvent): string {
  const sub = (event.requestContext?.authorizer as { sub?: unknown } | null | undefined)?.sub;
  if (typeof sub !== 'string' || sub === '')
    throw new Error('No subject in the authorizer context.');
  return sub;
}

/**
 * The owner's endpoint the path names.
 * @throws InvalidParameterError (40005) for a malformed id, ApiError 40402 when the owner has none.
 */
export async function requireEndpoint(request: EndpointRequest): Promise<EndpointRecord> {
  const id = readEndpointIdParameter(request.event.pathParameters);
  const record = await readEndpoint(request.owner, id, request.table);
  if (record === undefined) throw new ApiError(endpointErrorCodes.webhookEndpointNotFound);
  return record;
}

/** An endpoint function's settings: its tables, `DYNAMODB_ENDPOINT`, `CORS_ALLOWED_ORIGINS`. */
export function readEndpointFunctionConfig<More extends object = object>(
  functionName: string,
  environment: NodeJS.ProcessEnv,
  more: (read: EnvironmentReader) => More = () => ({}) as More,
) {
  const read = readEnvironment(environment, functionName);
  const config = {
    endpointsTableName: read.string('ENDPOINTS_TABLE_NAME'),
    logTableName: read.string('WEBHOOK_LOG_TABLE_NAME'),
    dynamoDbEndpoint: read.optional('DYNAMODB_ENDPOINT'),
    allowedOrigins: read.parse(
      'CORS_ALLOWED_ORIGINS',
      (text) => checkAllowedOrigins(commaList(text), { anyOrigin: true, anyPort: false }),
      { fallback: [] },
    ),
    ...more(read),
  };
  read.check();
  return config;
}

/** A dependency the function's work cannot do without (its entry always gives it). */
export function required<Value>(value: Value | undefined, name: string): Value {
  if (value === undefined) throw new Error(`This function needs its ${name}.`);
  return value;
}
