/**
 * A stand-in for one API Gateway REST API stage, so `npm start` runs the handlers as deployed:
 * the checks in API Gateway's order (`handleRequest`), the TOKEN authorizer and its cache, the
 * usage plan's and each method's throttling, the Lambda proxy integration, the `*\/*` binary
 * media type, CORS as the stack makes it, and every answer of its own from `gatewayResponses`,
 * the definition the stack deploys. Its parts are beside it in `api-gateway/`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { protectiveHeaders } from '../../functions/shared/http/api-responses.ts';
import { allowOriginHeader, preflightHeaders } from '../../functions/shared/http/cors.ts';
import { createLogger, type Logger } from '../../functions/shared/platform/logger.ts';
import { awsOwnResponses, lambdaMaxInvocationBytes } from '../../infra/gateway-responses.ts';
import { type TokenLimit, tokenLimitResponse } from '../../infra/throttling.ts';
import type {
  GatewayRoute,
  HttpResponse,
  RouteMatch,
  TokenAuthorizerHandler,
} from './gateway-types.ts';
import {
  accountId,
  answerFromProxyResult,
  apiId,
  createLambdaContext,
  createProxyEvent,
  invokeWithTimeout,
  isProxyResult,
  region,
} from './proxy-integration.ts';
import { answerParserRejection, answerUnmetExpectation, refusedByParser } from './rejections.ts';
import {
  awsResponse,
  gatewayCorsHeaders,
  gatewayResponseFor,
  readBody,
  writeResponse,
} from './responses.ts';
import { createRouteMatcher } from './routing.ts';
import { keyedTokenBuckets } from './throttling.ts';
import { createCachedAuthorizer } from './token-authorizer.ts';
import { createTokenLimiter, type TokenLimiter } from './token-limits.ts';
import { serveXRayTraces, withXRayTrace } from './xray-trace.ts';

export type {
  GatewayRoute,
  LambdaHandler,
  ProxyIntegrationHandler,
  TokenAuthorizerHandler,
} from './gateway-types.ts';

export interface ApiGatewayOptions {
  readonly routes: readonly GatewayRoute[];
  readonly authorizer: TokenAuthorizerHandler;
  /** Port on 127.0.0.1; 0 picks a free one. @default 3000 */
  readonly port?: number;
  /** @default 'local' */
  readonly stageName?: string;
  /** How long an authorizer policy is reused for the same token; 0 disables the cache. @default 300 */
  readonly authorizerCacheTtlSeconds?: number;
  /**
   * Every method's throttling, as API Gateway keeps it: a token bucket per method, refilled at
   * `rateLimit` per second, holding `burstLimit`. Each route's own when absent (a stage's budget
   * divided: `infra/throttling.ts`); none when neither says.
   */
  readonly throttling?: { readonly rateLimit: number; readonly burstLimit: number };
  /**
   * The stage's per-client limits, which its web ACL enforces before API Gateway; none when
   * absent.
   */
  readonly tokenLimits?: readonly TokenLimit[];
  /** API Gateway's maximum integration timeout. @default 29000 */
  readonly integrationTimeoutMilliseconds?: number;
  /** The authorizer function's Lambda timeout; past it, API Gateway answers 500. @default 5000 */
  readonly authorizerTimeoutMilliseconds?: number;
  /** Receives one line per request; never the Authorization header or the body. */
  readonly logger?: Logger;
  /**
   * The origins whose pages may call the API (`functions/shared/http/cors.ts`): preflights are
   * answered and the gateway's own answers carry CORS headers. None when absent (no `OPTIONS`).
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * Pages served beside the API on `GET` (the API reference), by path; not part of the
   * deployed stage, so no token, throttling or gateway response applies to them.
   */
  readonly localPages?: (
    path: string,
  ) => { readonly contentType: string; readonly body: Buffer } | undefined;
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

/** What the stand-in decides a request with, made once from its options. */
interface Gateway {
  readonly options: ApiGatewayOptions;
  readonly stageName: string;
  readonly logger: Logger;
  readonly authorize: ReturnType<typeof createCachedAuthorizer>;
  /** Counts a request against its client's limit: false when the web ACL refuses it. */
  readonly withinTokenLimit: TokenLimiter;
  /** Takes a token from the client's bucket for the method: false when it is throttled. */
  readonly takeClientToken: (route: GatewayRoute, usageKey: unknown) => boolean;
  /** Takes a token from the method's bucket: false when it is throttled. */
  readonly takeToken: (route: GatewayRoute) => boolean;
  readonly matchRoute: ReturnType<typeof createRouteMatcher>;
  readonly integrationTimeout: number;
  readonly authorizerTimeout: number;
  readonly allowedOrigins: readonly string[];
  readonly routeMethods: readonly string[];
}

/**
 * Starts the stand-in on 127.0.0.1. Handlers are called concurrently, like warm Lambda
 * instances; each call gets its own context.
 *
 * @throws {PortInUseError} when the port is taken.
 */
export async function startApiGateway(options: ApiGatewayOptions): Promise<ApiGateway> {
  serveXRayTraces();
  const gateway = createGateway(options);
  // Node would answer a request without a Host header itself, with an empty 400: let it through
  // to be answered below in the contract's shape (API Gateway cannot route one either).
  const server = createServer({ requireHostHeader: false }, (request, response) =>
    answerRequest(gateway, request, response),
  );
  const rejecting = {
    logger: gateway.logger,
    allowedOrigins: gateway.allowedOrigins,
    resourcePathOf: (method: string | undefined, target: string | undefined) =>
      gateway.matchRoute(method, target)?.route.resourcePath ?? null,
  };
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    answerUnmetExpectation(rejecting, request, response),
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerParserRejection(rejecting, error, socket),
  );
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

function createGateway(options: ApiGatewayOptions): Gateway {
  // One bucket per method, as API Gateway keeps them: a stage's limits apply to each method;
  // and one per API key and method, as a usage plan's per-method throttling keeps them.
  const methodBuckets = keyedTokenBuckets<GatewayRoute>();
  const takeToken = (route: GatewayRoute) => {
    const throttling = options.throttling ?? route.throttling;
    return throttling === undefined || methodBuckets(route, throttling);
  };
  const clientBuckets = keyedTokenBuckets<string>();
  const takeClientToken = (route: GatewayRoute, usageKey: unknown) => {
    if (route.clientThrottling === undefined || options.throttling !== undefined) return true;
    const key = `${route.httpMethod} ${route.resourcePath} ${usageKey}`;
    return typeof usageKey === 'string' && clientBuckets(key, route.clientThrottling);
  };
  return {
    options,
    stageName: options.stageName ?? 'local',
    logger: options.logger ?? createLogger({ component: 'local-api-gateway' }),
    authorize: createCachedAuthorizer(
      options.authorizer,
      (options.authorizerCacheTtlSeconds ?? 300) * 1000,
    ),
    withinTokenLimit: createTokenLimiter(options.tokenLimits ?? []),
    takeToken,
    takeClientToken,
    matchRoute: createRouteMatcher(options.routes),
    integrationTimeout: options.integrationTimeoutMilliseconds ?? 29_000,
    authorizerTimeout: options.authorizerTimeoutMilliseconds ?? 5_000,
    allowedOrigins: options.allowedOrigins ?? [],
    routeMethods: [...new Set(options.routes.map((route) => route.httpMethod))],
  };
}

/** Answers one request and logs it: the route's resource path, never the path as sent. */
function answerRequest(gateway: Gateway, request: IncomingMessage, response: ServerResponse) {
  const started = performance.now();
  const requestId = randomUUID();
  const matched = gateway.matchRoute(request.method, request.url);
  withXRayTrace(() => handleRequest(gateway, request, requestId, matched))
    .catch((error: unknown) => {
      gateway.logger.error('local gateway failed', { requestId, error });
      return gatewayResponseFor('DEFAULT_5XX');
    })
    .then((answer) => {
      // A body the HTTP parser refused mid-way was answered, and logged, by `clientError`.
      if (answer === 'refused') return;
      if (answer !== undefined) {
        const cors = answer.gatewayResponse
          ? gatewayCorsHeaders(gateway.allowedOrigins, request.headers.origin)
          : {};
        writeResponse(response, { ...answer, headers: { ...answer.headers, ...cors } }, requestId);
      }
      // The route's resource path, never the path as sent: a client may put a token anywhere
      // in it (`/plants/<jwt>`, `;access_token=…`), and nothing a client sends as a
      // credential may reach a log. The deployed access log records `resourcePath` alike.
      // A client that left before its body arrived is logged as that, not as an answer.
      gateway.logger.info(answer === undefined ? 'request abandoned by the client' : 'request', {
        requestId,
        method: matched?.route.httpMethod ?? request.method,
        resourcePath: matched?.route.resourcePath ?? null,
        status: answer?.statusCode ?? null,
        durationMs: Math.round(performance.now() - started),
      });
    });
}

/**
 * The order of the checks: the web ACL's per-token limit (AWS WAF sees a request before API
 * Gateway does), then API Gateway's: a routable request, the stage's own pages and preflights, the
 * route, the payload limit, the token and the authorizer, the client's throttling in the usage
 * plan (its key is the authorizer's `usageIdentifierKey`), the method's, and only then the
 * function.
 */
async function handleRequest(
  gateway: Gateway,
  request: IncomingMessage,
  requestId: string,
  matched: RouteMatch | undefined,
): Promise<HttpResponse | 'refused' | undefined> {
  const path = (request.url ?? '/').split('?', 1)[0] as string;
  if (!gateway.withinTokenLimit(path, request.headers.authorization)) {
    const answer = tokenLimitResponse(gateway.allowedOrigins);
    return { ...answer, body: Buffer.from(answer.body) };
  }
  if (request.headers.host === undefined) return gatewayResponseFor('DEFAULT_4XX');
  const ownResponse = localPage(gateway, request, matched) ?? preflight(gateway, request, matched);
  if (ownResponse !== undefined) return ownResponse;
  // A REST API answers an unknown path and an unknown method alike (MISSING_AUTHENTICATION_TOKEN).
  if (matched === undefined) return gatewayResponseFor('MISSING_AUTHENTICATION_TOKEN');

  const body = await readBody(request);
  if (body === 'client gone') return refusedByParser.has(request.socket) ? 'refused' : undefined;
  if (body === 'too large') return awsResponse(awsOwnResponses.payloadTooLarge);

  const token = request.headers.authorization;
  if (token === undefined || token.trim() === '') return gatewayResponseFor('UNAUTHORIZED');
  const methodArn = `arn:aws:execute-api:${region}:${accountId}:${apiId}/${gateway.stageName}/${matched.route.httpMethod}${matched.path}`;
  const decision = await gateway.authorize(token, methodArn, gateway.authorizerTimeout);
  if (decision.outcome !== 'allow') return gatewayResponseFor(decision.outcome);
  // The usage plan's limit for the client the authorizer named, then the method's own: "Per-client
  // or per-method throttling limits that you set for an API stage in a usage plan" come first
  // ("Throttle requests to your REST APIs", API Gateway developer guide).
  if (!gateway.takeClientToken(matched.route, decision.usageIdentifierKey)) {
    return decision.usageIdentifierKey === undefined
      ? gatewayResponseFor('INVALID_API_KEY')
      : gatewayResponseFor('THROTTLED');
  }
  if (!gateway.takeToken(matched.route)) return gatewayResponseFor('THROTTLED');
  return invokeRoute(gateway, request, matched, body, decision.authorizerContext, requestId);
}

/** A page served beside the API (the reference): not part of the deployed stage. */
function localPage(
  gateway: Gateway,
  request: IncomingMessage,
  matched: RouteMatch | undefined,
): HttpResponse | undefined {
  if (request.method !== 'GET' || matched !== undefined) return undefined;
  const page = gateway.options.localPages?.((request.url ?? '/').split('?', 1)[0] as string);
  if (page === undefined) return undefined;
  return {
    statusCode: 200,
    headers: { 'Content-Type': page.contentType, ...protectiveHeaders(false) },
    body: page.body,
  };
}

/**
 * A CORS preflight, as the stack's `OPTIONS` mock integration answers it on every resource of
 * the route table: no token, the resource's methods, the allowed request headers, and
 * `Access-Control-Allow-Origin` only for an allowed origin. `undefined` for anything else (a path
 * that is no resource is answered 404 like any unknown path).
 */
function preflight(
  gateway: Gateway,
  request: IncomingMessage,
  matched: RouteMatch | undefined,
): HttpResponse | undefined {
  if (
    matched !== undefined ||
    request.method !== 'OPTIONS' ||
    gateway.allowedOrigins.length === 0
  ) {
    return undefined;
  }
  const methods = gateway.routeMethods.filter(
    (method) => gateway.matchRoute(method, request.url) !== undefined,
  );
  if (methods.length === 0) return undefined;
  return {
    statusCode: 204,
    headers: {
      ...preflightHeaders(methods),
      ...protectiveHeaders(false),
      ...allowOriginHeader(request.headers.origin, gateway.allowedOrigins),
    },
    body: Buffer.alloc(0),
  };
}

/** The function behind the route, through a Lambda proxy integration, within its timeouts. */
async function invokeRoute(
  gateway: Gateway,
  request: IncomingMessage,
  matched: RouteMatch,
  body: Buffer,
  authorizerContext: Record<string, unknown>,
  requestId: string,
): Promise<HttpResponse> {
  const { route } = matched;
  const event = createProxyEvent(request, matched, body, {
    stageName: gateway.stageName,
    requestId,
    authorizer: authorizerContext,
    domainName: `127.0.0.1:${request.socket.localPort}`,
  });
  // Only a large body can take the event near Lambda's limit (headers stay under 10 KB):
  // ordinary requests are not serialised an extra time.
  const mayBeTooLarge = (event.body?.length ?? 0) > lambdaMaxInvocationBytes - 64 * 1024;
  if (mayBeTooLarge && Buffer.byteLength(JSON.stringify(event)) > lambdaMaxInvocationBytes) {
    return awsResponse(awsOwnResponses.invocationTooLarge);
  }
  const functionTimeout = route.timeoutMilliseconds ?? gateway.integrationTimeout;
  const result = await invokeWithTimeout(
    () => route.handler(event, createLambdaContext(route.functionName, functionTimeout)),
    Math.min(functionTimeout, gateway.integrationTimeout),
  );
  if (result === 'timeout') {
    // Lambda ends a function at its own timeout, which API Gateway answers as a failed
    // integration; only a function allowed to outlast the gateway's wait meets its timeout.
    return gatewayResponseFor(
      functionTimeout < gateway.integrationTimeout ? 'DEFAULT_5XX' : 'INTEGRATION_TIMEOUT',
    );
  }
  if (result instanceof Error || !isProxyResult(result)) {
    gateway.logger.error('integration failed', { requestId, error: result });
    return gatewayResponseFor('DEFAULT_5XX');
  }
  return answerFromProxyResult(result);
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port, { cause: error }) : error);
    });
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}
