/**
 * Real API Gateway REST API proxy events (payload v1) and Lambda contexts, as the create-plant
 * function receives them behind the TOKEN authorizer.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

export interface ProxyEventOptions {
  /** The raw body; objects are serialised with JSON.stringify (bigints as exact numbers). */
  body?: string | object | null;
  /** Headers as the client sent them; `Content-Type: application/json` unless replaced. */
  headers?: Record<string, string>;
  isBase64Encoded?: boolean;
  requestId?: string;
}

/** A `POST /plants` event on stage `dev`, authorised for `plants/write`. */
export function createPostPlantsEvent(options: ProxyEventOptions = {}): APIGatewayProxyEvent {
  const headers = options.headers ?? { 'Content-Type': 'application/json' };
  const body =
    options.body === undefined || options.body === null || typeof options.body === 'string'
      ? (options.body ?? null)
      : stringifyWithBigInts(options.body);
  const requestId = options.requestId ?? randomUUID();
  return {
    resource: '/plants',
    path: '/plants',
    httpMethod: 'POST',
    headers: {
      Authorization: 'Bearer header.payload.signature',
      Host: 'abc123.execute-api.eu-west-1.amazonaws.com',
      'User-Agent': 'plant-store-tests',
      ...headers,
    },
    multiValueHeaders: Object.fromEntries(
      Object.entries({ Authorization: 'Bearer header.payload.signature', ...headers }).map(
        ([name, value]) => [name, [value]],
      ),
    ),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body,
    isBase64Encoded: options.isBase64Encoded ?? false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      authorizer: { principalId: 'client-1', sub: 'client-1', scope: 'plants/write' },
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'abc123',
      extendedRequestId: 'extended-1',
      httpMethod: 'POST',
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '203.0.113.7',
        user: null,
        userAgent: 'plant-store-tests',
        userArn: null,
      },
      path: '/dev/plants',
      protocol: 'HTTP/1.1',
      requestId,
      requestTime: '09/Apr/2025:12:34:56 +0000',
      requestTimeEpoch: 1744202096000,
      resourceId: 'res123',
      resourcePath: '/plants',
      stage: 'dev',
    },
  };
}

/** A Lambda context with a 10 s budget, like the deployed function's. */
export function createLambdaContext(): Context {
  const deadline = Date.now() + 10_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'PlantStore-dev-CreatePlant',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:PlantStore-dev-CreatePlant',
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: '/aws/lambda/PlantStore-dev-CreatePlant',
    logStreamName: '2025/04/09/[$LATEST]abc',
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** JSON with bigints written as exact integers (JSON.stringify refuses bigints). */
export function stringifyWithBigInts(value: unknown): string {
  const marker = '__exact_bigint__:';
  const text = JSON.stringify(value, (_key, entry) =>
    typeof entry === 'bigint' ? `${marker}${entry}` : entry,
  );
  return text.replace(new RegExp(`"${marker}(-?\\d+)"`, 'g'), '$1');
}

export interface PlantsRequestOptions {
  /** Query parameters; a list gives a repeated parameter. */
  query?: Record<string, string | readonly string[]>;
  /** The `{id}` path parameter as API Gateway passes it (not percent-decoded). */
  id?: string;
  /** A body and its headers (`PUT`, `PATCH`), as {@link createPostPlantsEvent} takes them. */
  body?: string | object | null;
  headers?: Record<string, string>;
}

/**
 * A `GET /plants`, `GET /plants/{id}` or `DELETE /plants/{id}` event on stage `dev` of the
 * execute-api domain, authorised for both scopes; built from the `POST /plants` event.
 */
export function createPlantsEvent(
  method: 'GET' | 'DELETE' | 'PUT' | 'PATCH',
  options: PlantsRequestOptions = {},
): APIGatewayProxyEvent {
  const base = createPostPlantsEvent({
    body: options.body ?? null,
    headers: options.headers ?? {},
  });
  const resource = options.id === undefined ? '/plants' : '/plants/{id}';
  const path = options.id === undefined ? '/plants' : `/plants/${options.id}`;
  const multiValueQuery = Object.fromEntries(
    Object.entries(options.query ?? {}).map(([name, value]) => [name, [value].flat()]),
  );
  const hasQuery = Object.keys(multiValueQuery).length > 0;
  return {
    ...base,
    httpMethod: method,
    resource,
    path,
    headers: { ...base.headers, 'X-Forwarded-Proto': 'https' },
    pathParameters: options.id === undefined ? null : { id: options.id },
    queryStringParameters: hasQuery
      ? Object.fromEntries(Object.entries(multiValueQuery).map(([k, v]) => [k, v.at(-1) as string]))
      : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQuery : null,
    requestContext: {
      ...base.requestContext,
      httpMethod: method,
      resourcePath: resource,
      path: `/dev${path}`,
      authorizer: { principalId: 'client-1', sub: 'client-1', scope: 'plants/read plants/write' },
    },
  };
}

/**
 * An event of a webhook endpoint route (`POST /webhook-endpoints`, `GET
 * /webhook-endpoints/{endpointId}/attempts`…) on stage `dev`, authorised for `webhooks/manage`
 * as `client` (the token's subject), the path's `{endpointId}` being `endpointId`.
 */
export function createEndpointEvent(
  route: { readonly method: string; readonly path: string },
  options: {
    body?: string | null;
    endpointId?: string;
    client?: string;
    headers?: Record<string, string>;
  } = {},
): APIGatewayProxyEvent {
  const base = createPostPlantsEvent({
    body: options.body ?? null,
    headers: options.headers ?? { 'Content-Type': 'application/json' },
  });
  const endpointId = options.endpointId ?? 'ep_00000000000000000000000000';
  const path = route.path.replace('{endpointId}', endpointId);
  const client = options.client ?? 'client-1';
  return {
    ...base,
    httpMethod: route.method,
    resource: route.path,
    path,
    pathParameters: route.path.includes('{endpointId}') ? { endpointId } : null,
    requestContext: {
      ...base.requestContext,
      httpMethod: route.method,
      resourcePath: route.path,
      path: `/dev${path}`,
      authorizer: { principalId: client, sub: client, scope: 'webhooks/manage plants/read' },
    },
  };
}
