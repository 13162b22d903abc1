/**
 * The Lambda proxy integration: the event a function receives, its invocation under a timeout,
 * and the answer made from what it returns.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { HttpResponse, RouteMatch } from './gateway-types.ts';

// Placeholders where a deployed API has its region, account and id: the authorizer reads the
// stage from the method ARN, so the ARN must have the real shape.
export const region = 'us-east-1';
export const accountId = '000000000000';
export const apiId = 'plantlocal';

export interface ProxyEventDetails {
  readonly stageName: string;
  readonly requestId: string;
  readonly authorizer: Record<string, unknown>;
  /** The host the client called, for `requestContext.domainName`. */
  readonly domainName: string;
}

/**
 * The REST API Lambda proxy event (payload format 1.0) for a request. Every map keyed by names
 * the client chose (headers, query, path parameters) has no prototype, so a header named
 * `constructor` or `__proto__` is an ordinary entry, as it is in the JSON Lambda receives.
 */
export function createProxyEvent(
  request: IncomingMessage,
  { route, path, pathParameters, query }: RouteMatch,
  body: Buffer,
  { stageName, requestId, authorizer, domainName }: ProxyEventDetails,
): APIGatewayProxyEvent {
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    const name = request.rawHeaders[index] as string;
    const value = request.rawHeaders[index + 1] as string;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  // API Gateway sets X-Forwarded-Proto itself; here the scheme is http.
  for (const name of Object.keys(multiValueHeaders)) {
    if (name.toLowerCase() === 'x-forwarded-proto') delete multiValueHeaders[name];
  }
  multiValueHeaders['X-Forwarded-Proto'] = ['http'];
  // Query strings are percent-decoded, `+` as a space, as API Gateway does.
  const multiValueQuery: Record<string, string[]> = Object.create(null);
  for (const [name, value] of new URLSearchParams(query)) {
    multiValueQuery[name] = [...(multiValueQuery[name] ?? []), value];
  }
  const hasQuery = Object.keys(multiValueQuery).length > 0;
  const now = Date.now();
  return {
    resource: route.resourcePath,
    path,
    httpMethod: route.httpMethod,
    // Like API Gateway: `headers` keeps the last value of a repeated header.
    headers: lastValues(multiValueHeaders),
    multiValueHeaders,
    queryStringParameters: hasQuery ? lastValues(multiValueQuery) : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQuery : null,
    pathParameters,
    stageVariables: null,
    requestContext: {
      accountId,
      apiId,
      authorizer,
      domainName,
      domainPrefix: '127',
      extendedRequestId: requestId,
      httpMethod: route.httpMethod,
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
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: request.headers['user-agent'] ?? null,
        userArn: null,
      },
      // The path the client called, as on a custom domain mapped at its root: locally the
      // stage is not part of the URL (deployed, this is `/{stage}/plants`).
      path,
      protocol: `HTTP/${request.httpVersion}`,
      requestId,
      requestTime: new Date(now).toUTCString(),
      requestTimeEpoch: now,
      resourceId: 'local',
      resourcePath: route.resourcePath,
      stage: stageName,
    },
    // The binary media type `*\/*`: every body base64-encoded, exactly as sent.
    body: body.length === 0 ? null : body.toString('base64'),
    isBase64Encoded: body.length > 0,
  };
}

function lastValues(multiValues: Record<string, string[]>): Record<string, string> {
  const last: Record<string, string> = Object.create(null);
  for (const [name, values] of Object.entries(multiValues)) last[name] = values.at(-1) as string;
  return last;
}

/** A Lambda context good enough for middy and the handlers: ids, names and the deadline. */
export function createLambdaContext(functionName: string, timeoutMilliseconds: number): Context {
  const deadline = Date.now() + timeoutMilliseconds;
  const unsupported = () => {
    throw new Error('The callback-style context methods are not supported locally.');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:${accountId}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

/** The handler's result, the error it failed with, or `'timeout'` past the time it may take. */
export async function invokeWithTimeout<Result>(
  invoke: () => Promise<Result>,
  timeoutMilliseconds: number,
): Promise<Result | Error | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMilliseconds);
  });
  try {
    return await Promise.race([
      invoke().catch((error: unknown) =>
        error instanceof Error ? error : new Error(String(error)),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function isProxyResult(value: unknown): value is APIGatewayProxyResult {
  if (typeof value !== 'object' || value === null) return false;
  const { statusCode, headers, multiValueHeaders, body, isBase64Encoded } = value as Record<
    string,
    unknown
  >;
  const isRecord = (entry: unknown) =>
    entry === undefined || (typeof entry === 'object' && entry !== null && !Array.isArray(entry));
  return (
    Number.isInteger(statusCode) &&
    (statusCode as number) >= 100 &&
    (statusCode as number) <= 599 &&
    isRecord(headers) &&
    isRecord(multiValueHeaders) &&
    (body === undefined || body === null || typeof body === 'string') &&
    (isBase64Encoded === undefined || typeof isBase64Encoded === 'boolean')
  );
}

export function answerFromProxyResult(result: APIGatewayProxyResult): HttpResponse {
  // API Gateway labels a proxy response without a content type as JSON; one without content
  // (204, 304) is labelled nothing here.
  const headers: Record<string, string | string[]> =
    result.statusCode === 204 || result.statusCode === 304
      ? {}
      : { 'Content-Type': 'application/json' };
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  // As in API Gateway, multiValueHeaders are merged with headers, adding to a header of the same name.
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    const existing = headers[name];
    headers[name] = [...(existing === undefined ? [] : [existing].flat()), ...values.map(String)];
  }
  const body = result.body ?? '';
  return {
    statusCode: result.statusCode,
    headers,
    body: Buffer.from(body, result.isBase64Encoded ? 'base64' : 'utf8'),
  };
}
