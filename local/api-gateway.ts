/**
 * A small stand-in for one API Gateway REST API stage, so `npm start` runs the Lambda handlers
 * exactly as deployed: route match, stage throttling, the TOKEN authorizer (with its result
 * cache), then the function behind a Lambda proxy integration. Every answer the gateway gives
 * itself comes from `gatewayResponses`, the definition the CDK stack deploys.
 *
 * It imitates what the Plant Store relies on, not all of API Gateway: resource paths with path
 * parameters, the `*\/*` binary media type the stack sets (every request body reaches the
 * function base64-encoded, exactly as sent), no CORS, no usage plans.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { createLogger, type Logger } from '../functions/shared/logger.ts';
import {
  apiGatewayMaxPayloadBytes,
  awsOwnAnswers,
  type GatewayResponse,
  type GatewayResponseType,
  gatewayResponses,
  lambdaMaxInvocationBytes,
} from '../infra/gateway-responses.ts';

/** A Lambda handler as the runtime calls it: an event and a context in, a promise out. */
export type LambdaHandler<Event, Result> = (event: Event, context: Context) => Promise<Result>;

export type TokenAuthorizerHandler = LambdaHandler<
  APIGatewayTokenAuthorizerEvent,
  APIGatewayAuthorizerResult
>;

export type ProxyIntegrationHandler = LambdaHandler<APIGatewayProxyEvent, APIGatewayProxyResult>;

/** One route of the API, served by a function behind a Lambda proxy integration. */
export interface GatewayRoute {
  readonly httpMethod: string;
  /** The resource path, path parameters in braces: `/plants`, `/plants/{id}`. */
  readonly resourcePath: string;
  /** Shown in the Lambda context, as the deployed function's name would be. */
  readonly functionName: string;
  /** The function's Lambda timeout; the integration timeout when absent. */
  readonly timeoutMilliseconds?: number;
  readonly handler: ProxyIntegrationHandler;
}

export interface ApiGatewayOptions {
  readonly routes: readonly GatewayRoute[];
  readonly authorizer: TokenAuthorizerHandler;
  /** Port on 127.0.0.1; 0 picks a free one. @default 3000 */
  readonly port?: number;
  /** @default 'local' */
  readonly stageName?: string;
  /** How long an authorizer policy is reused for the same token; 0 disables the cache. @default 300 */
  readonly authorizerCacheTtlSeconds?: number;
  /** Stage throttling: a token bucket refilled at `rateLimit` per second holding `burstLimit`. */
  readonly throttling?: { readonly rateLimit: number; readonly burstLimit: number };
  /** API Gateway's maximum integration timeout. @default 29000 */
  readonly integrationTimeoutMilliseconds?: number;
  /** The authorizer function's Lambda timeout; past it, API Gateway answers 500. @default 5000 */
  readonly authorizerTimeoutMilliseconds?: number;
  /** Receives one line per request; never the Authorization header or the body. */
  readonly logger?: Logger;
}

export interface ApiGateway {
  /** The base URL, e.g. `http://127.0.0.1:3000` (the stage is not part of the path locally). */
  readonly url: string;
  readonly port: number;
  /** Stops accepting requests and closes open connections. */
  close(): Promise<void>;
}

/** Thrown when the gateway's port is already taken. */
export class PortInUseError extends Error {
  constructor(port: number, options?: ErrorOptions) {
    super(
      `Port ${port} on 127.0.0.1 is already in use; set PORT to another one (0 picks a free one).`,
      options,
    );
    this.name = 'PortInUseError';
  }
}

// Placeholders where a deployed API has its region, account and id: the authorizer reads the
// stage from the method ARN, so the ARN must have the real shape.
const region = 'us-east-1';
const accountId = '000000000000';
const apiId = 'plantlocal';

/**
 * Starts the stand-in on 127.0.0.1. Handlers are called concurrently, like warm Lambda
 * instances; each call gets its own context.
 *
 * @throws {PortInUseError} when the port is taken.
 */
export async function startApiGateway(options: ApiGatewayOptions): Promise<ApiGateway> {
  const stageName = options.stageName ?? 'local';
  const logger = options.logger ?? createLogger({ component: 'local-api-gateway' });
  const authorize = createCachedAuthorizer(
    options.authorizer,
    (options.authorizerCacheTtlSeconds ?? 300) * 1000,
  );
  const takeToken = options.throttling ? createTokenBucket(options.throttling) : () => true;
  const integrationTimeout = options.integrationTimeoutMilliseconds ?? 29_000;

  const matchRoute = createRouteMatcher(options.routes);
  const authorizerTimeout = options.authorizerTimeoutMilliseconds ?? 5_000;

  const handleRequest = async (
    request: IncomingMessage,
    requestId: string,
    matched: RouteMatch | undefined,
  ): Promise<HttpAnswer | undefined> => {
    if (request.headers.host === undefined) return gatewayAnswer('DEFAULT_4XX');
    // A REST API answers an unknown path and an unknown method alike (MISSING_AUTHENTICATION_TOKEN).
    if (matched === undefined) return gatewayAnswer('MISSING_AUTHENTICATION_TOKEN');
    const { route } = matched;
    if (!takeToken()) return gatewayAnswer('THROTTLED');

    const body = await readBody(request);
    if (body === 'client gone') return undefined;
    if (body === 'too large') return awsAnswer(awsOwnAnswers.payloadTooLarge);

    const token = request.headers.authorization;
    if (token === undefined || token.trim() === '') return gatewayAnswer('UNAUTHORIZED');
    const methodArn = `arn:aws:execute-api:${region}:${accountId}:${apiId}/${stageName}/${route.httpMethod}${matched.path}`;
    const decision = await authorize(token, methodArn, authorizerTimeout);
    if (decision.outcome !== 'allow') return gatewayAnswer(decision.outcome);

    const event = createProxyEvent(request, matched, body, {
      stageName,
      requestId,
      authorizer: decision.authorizerContext,
      domainName: `127.0.0.1:${request.socket.localPort}`,
    });
    // Only a large body can take the event near Lambda's limit (headers stay under 10 KB):
    // ordinary requests are not serialised an extra time.
    const mayBeTooLarge = (event.body?.length ?? 0) > lambdaMaxInvocationBytes - 64 * 1024;
    if (mayBeTooLarge && Buffer.byteLength(JSON.stringify(event)) > lambdaMaxInvocationBytes) {
      return awsAnswer(awsOwnAnswers.invocationTooLarge);
    }
    const functionTimeout = route.timeoutMilliseconds ?? integrationTimeout;
    const result = await invokeWithTimeout(
      () => route.handler(event, createLambdaContext(route.functionName, functionTimeout)),
      Math.min(functionTimeout, integrationTimeout),
    );
    if (result === 'timeout') {
      // Lambda ends a function at its own timeout, which API Gateway answers as a failed
      // integration; only a function allowed to outlast the gateway's wait meets its timeout.
      return gatewayAnswer(
        functionTimeout < integrationTimeout ? 'DEFAULT_5XX' : 'INTEGRATION_TIMEOUT',
      );
    }
    if (result instanceof Error || !isProxyResult(result)) {
      logger.error('integration failed', { requestId, error: result });
      return gatewayAnswer('DEFAULT_5XX');
    }
    return answerFromProxyResult(result);
  };

  // Node would answer a request without a Host header itself, with an empty 400: let it through
  // to be answered below in the contract's shape (API Gateway cannot route one either).
  const server = createServer({ requireHostHeader: false }, (request, response) => {
    const started = performance.now();
    const requestId = randomUUID();
    const matched = matchRoute(request.method, request.url);
    handleRequest(request, requestId, matched)
      .catch((error: unknown) => {
        logger.error('local gateway failed', { requestId, error });
        return gatewayAnswer('DEFAULT_5XX');
      })
      .then((answer) => {
        if (answer !== undefined) writeAnswer(response, answer, requestId);
        // The route's resource path, never the path as sent: a client may put a token anywhere
        // in it (`/plants/<jwt>`, `;access_token=…`), and nothing a client sends as a
        // credential may reach a log. The deployed access log records `resourcePath` alike.
        // A client that left before its body arrived is logged as that, not as an answer.
        logger.info(answer === undefined ? 'request abandoned by the client' : 'request', {
          requestId,
          method: matched?.route.httpMethod ?? request.method,
          resourcePath: matched?.route.resourcePath ?? null,
          status: answer?.statusCode ?? null,
          durationMs: Math.round(performance.now() - started),
        });
      });
  });

  // An `Expect` other than 100-continue: Node would answer an empty 417 itself. Answer in the
  // contract's shape instead: a gateway rejection no other code names (400/40000).
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const requestId = randomUUID();
    writeAnswer(response, gatewayAnswer('DEFAULT_4XX'), requestId);
    logger.info('request', {
      requestId,
      method: request.method,
      resourcePath: matchRoute(request.method, request.url)?.route.resourcePath ?? null,
      status: 400,
      durationMs: 0,
    });
  });

  // Requests Node's HTTP parser refuses (headers over its 16 KiB limit, broken syntax)
  // never reach the handler above; Node would answer them with an empty 400 or 431. Answer with
  // the gateway's Error body instead, so that no response of the API has another shape.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const answer = gatewayAnswer('DEFAULT_4XX');
    const headers = Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.end(
      `HTTP/1.1 ${answer.statusCode} Bad Request\r\n${headers.join('')}` +
        `Content-Length: ${answer.body.length}\r\nConnection: close\r\n\r\n${answer.body}`,
    );
  });

  const port = await listen(server, options.port ?? 3000);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** A response ready to be written: status, headers (single or multiple values) and body bytes. */
interface HttpAnswer {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body: Buffer;
}

function gatewayAnswer(type: GatewayResponseType): HttpAnswer {
  const response: GatewayResponse = gatewayResponses[type];
  return {
    statusCode: response.statusCode,
    headers: response.headers,
    body: Buffer.from(JSON.stringify(response.body)),
  };
}

/** An answer AWS gives itself, which no gateway response reshapes. */
function awsAnswer(answer: (typeof awsOwnAnswers)[keyof typeof awsOwnAnswers]): HttpAnswer {
  return { statusCode: answer.statusCode, headers: answer.headers, body: Buffer.from(answer.body) };
}

function writeAnswer(response: ServerResponse, answer: HttpAnswer, requestId: string): void {
  response.statusCode = answer.statusCode;
  for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
  response.setHeader('x-amzn-RequestId', requestId);
  response.setHeader('Content-Length', answer.body.length);
  response.end(answer.body);
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port, { cause: error }) : error);
    });
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * The body's bytes as sent, `'too large'` past API Gateway's payload limit, or `'client gone'`
 * when the client disconnected before sending all of it. The
 * stack sets the binary media type `*\/*`, so API Gateway hands every body to the function
 * base64-encoded and unaltered: bytes that are not UTF-8 reach the function's strict decoder
 * (40001) instead of being turned into U+FFFD, which API Gateway does to a body it treats as text.
 */
async function readBody(request: IncomingMessage): Promise<Buffer | 'too large' | 'client gone'> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      // Keep reading (and dropping) the rest so the client sees the answer, not a reset.
      if (size <= apiGatewayMaxPayloadBytes) chunks.push(chunk);
    }
  } catch {
    // The connection closed mid-body ("aborted"): nobody is left to answer.
    return 'client gone';
  }
  if (!request.complete) return 'client gone';
  return size > apiGatewayMaxPayloadBytes ? 'too large' : Buffer.concat(chunks);
}

// ---------------------------------------------------------------------------------------------
// Routing

/** A request matched to a route: the route, the path as sent and its path parameters. */
interface RouteMatch {
  readonly route: GatewayRoute;
  /** The request path, as API Gateway passes it (not percent-decoded). */
  readonly path: string;
  /** Path parameters as API Gateway passes them: not percent-decoded. */
  readonly pathParameters: Readonly<Record<string, string>> | null;
  readonly query: string;
}

/**
 * Matches a request line to a route as a REST API does: segment by segment, a `{name}` segment
 * taking any one non-empty segment; an unknown path or method matches nothing.
 */
function createRouteMatcher(routes: readonly GatewayRoute[]) {
  const compiled = routes.map((route) => ({
    route,
    segments: route.resourcePath.split('/').slice(1),
  }));
  return (method: string | undefined, target: string | undefined): RouteMatch | undefined => {
    // The request target as sent, cut at the query; a fragment is never part of the path.
    const [beforeFragment = ''] = (target ?? '/').split('#', 1);
    const queryStart = beforeFragment.indexOf('?');
    const path = queryStart === -1 ? beforeFragment : beforeFragment.slice(0, queryStart);
    const query = queryStart === -1 ? '' : beforeFragment.slice(queryStart + 1);
    const segments = path.split('/').slice(1);
    for (const { route, segments: pattern } of compiled) {
      if (route.httpMethod !== method || pattern.length !== segments.length) continue;
      const parameters: Record<string, string> = Object.create(null);
      const matches = pattern.every((part, index) => {
        const segment = segments[index] as string;
        if (part.startsWith('{') && part.endsWith('}')) {
          parameters[part.slice(1, -1)] = segment;
          return segment !== '';
        }
        return part === segment;
      });
      if (matches) {
        const hasParameters = Object.keys(parameters).length > 0;
        return { route, path, pathParameters: hasParameters ? parameters : null, query };
      }
    }
    return undefined;
  };
}

// ---------------------------------------------------------------------------------------------
// Throttling

/**
 * API Gateway's stage throttling: a bucket holding `burstLimit` tokens, refilled at `rateLimit`
 * per second; a request without a token is answered 429.
 */
export function createTokenBucket(
  { rateLimit, burstLimit }: { readonly rateLimit: number; readonly burstLimit: number },
  now: () => number = performance.now.bind(performance),
): () => boolean {
  let tokens = burstLimit;
  let refilledAt = now();
  return () => {
    const time = now();
    tokens = Math.min(burstLimit, tokens + ((time - refilledAt) / 1000) * rateLimit);
    refilledAt = time;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

// ---------------------------------------------------------------------------------------------
// The TOKEN authorizer

type AuthorizerDecision =
  | { readonly outcome: 'allow'; readonly authorizerContext: Record<string, unknown> }
  | { readonly outcome: 'UNAUTHORIZED' | 'ACCESS_DENIED' | 'DEFAULT_5XX' };

/**
 * Calls the authorizer with a TOKEN event and decides as API Gateway does. Policies are cached per
 * token for the TTL and evaluated against each method ARN, which is why the authorizer returns a
 * policy for the whole API. A thrown "Unauthorized" is not cached.
 */
function createCachedAuthorizer(authorizer: TokenAuthorizerHandler, ttlMilliseconds: number) {
  const cache = new Map<string, { result: APIGatewayAuthorizerResult; expiresAt: number }>();

  const callAuthorizer = async (
    token: string,
    methodArn: string,
    timeoutMilliseconds: number,
  ): Promise<APIGatewayAuthorizerResult | 'UNAUTHORIZED' | 'DEFAULT_5XX'> => {
    const cached = cache.get(token);
    if (cached !== undefined && cached.expiresAt > Date.now()) return cached.result;
    try {
      const result = await invokeWithTimeout(
        () =>
          authorizer(
            { type: 'TOKEN', authorizationToken: token, methodArn },
            createLambdaContext('authorizer', timeoutMilliseconds),
          ),
        timeoutMilliseconds,
      );
      // Lambda ends an authorizer at its timeout, and API Gateway answers 500 (an authorizer
      // failure, answered with DEFAULT_5XX's body); nothing is cached.
      if (result === 'timeout' || result instanceof Error) throw result;
      if (!isAuthorizerResult(result)) return 'DEFAULT_5XX';
      if (ttlMilliseconds > 0) {
        removeExpiredEntries(cache);
        cache.set(token, { result, expiresAt: Date.now() + ttlMilliseconds });
      }
      return result;
    } catch (error) {
      // The one way a Lambda authorizer says 401 is failing with exactly this message.
      return error instanceof Error && error.message === 'Unauthorized'
        ? 'UNAUTHORIZED'
        : 'DEFAULT_5XX';
    }
  };

  return async (
    token: string,
    methodArn: string,
    timeoutMilliseconds: number,
  ): Promise<AuthorizerDecision> => {
    const result = await callAuthorizer(token, methodArn, timeoutMilliseconds);
    if (typeof result === 'string') return { outcome: result };
    if (!isAllowed(result.policyDocument.Statement, methodArn)) return { outcome: 'ACCESS_DENIED' };
    return {
      outcome: 'allow',
      authorizerContext: {
        ...result.context,
        principalId: result.principalId,
        integrationLatency: 0,
      },
    };
  };
}

function removeExpiredEntries(cache: Map<string, { expiresAt: number }>): void {
  const now = Date.now();
  for (const [key, entry] of cache) if (entry.expiresAt <= now) cache.delete(key);
}

interface PolicyStatement {
  readonly Effect: string;
  readonly Action?: string | readonly string[];
  readonly Resource?: string | readonly string[];
}

function isAuthorizerResult(value: unknown): value is APIGatewayAuthorizerResult {
  if (typeof value !== 'object' || value === null) return false;
  const { principalId, policyDocument, context } = value as Record<string, unknown>;
  const statements = (policyDocument as { Statement?: unknown } | undefined)?.Statement;
  // API Gateway accepts only flat context values; an object or array fails the request.
  const flatContext =
    context === undefined ||
    (typeof context === 'object' &&
      context !== null &&
      Object.values(context).every((entry) =>
        ['string', 'number', 'boolean'].includes(typeof entry),
      ));
  return typeof principalId === 'string' && Array.isArray(statements) && flatContext;
}

/** IAM evaluation, reduced to what an authorizer policy uses: an explicit Deny wins over Allow. */
function isAllowed(statements: readonly unknown[], methodArn: string): boolean {
  const matching = (statements as PolicyStatement[]).filter(
    (statement) =>
      toList(statement.Action).some((action) => matchesWildcard(action, 'execute-api:Invoke')) &&
      toList(statement.Resource).some((resource) => matchesWildcard(resource, methodArn)),
  );
  return (
    matching.some((statement) => statement.Effect === 'Allow') &&
    !matching.some((statement) => statement.Effect === 'Deny')
  );
}

function toList(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/** IAM wildcards: `*` matches any run of characters (slashes included), `?` any one. */
function matchesWildcard(pattern: string, value: string): boolean {
  const source = pattern
    .split('')
    .map((character) => {
      if (character === '*') return '.*';
      if (character === '?') return '.';
      return character.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`).test(value);
}

// ---------------------------------------------------------------------------------------------
// The Lambda proxy integration

interface ProxyEventDetails {
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
function createProxyEvent(
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
function createLambdaContext(functionName: string, timeoutMilliseconds: number): Context {
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
async function invokeWithTimeout<Result>(
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

function isProxyResult(value: unknown): value is APIGatewayProxyResult {
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

function answerFromProxyResult(result: APIGatewayProxyResult): HttpAnswer {
  // API Gateway labels a proxy response without a content type as JSON.
  const headers: Record<string, string | string[]> = { 'Content-Type': 'application/json' };
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
