/**
 * A small stand-in for one API Gateway REST API stage, so `npm start` runs the Lambda handlers
 * exactly as deployed: route match, stage throttling, the TOKEN authorizer (with its result
 * cache), then the function behind a Lambda proxy integration. Every answer the gateway gives
 * itself comes from `gatewayResponses`, the definition the CDK stack deploys.
 *
 * It imitates what the Plant Store relies on, not all of API Gateway: resource paths with path
 * parameters, the `*\/*` binary media type the stack sets (every request body reaches the
 * function base64-encoded, exactly as sent), CORS preflights and the gateway responses' CORS
 * headers as the stack makes them (`functions/shared/cors.ts`), no usage plans.
 *
 * This module is the server and the order of the checks; its parts are beside it in
 * `api-gateway/`: routing, throttling, the TOKEN authorizer and its cache, the proxy integration.
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
import { protectiveHeaders } from '../functions/shared/api-responses.ts';
import {
  allowOriginHeader,
  gatewayResponseCors,
  preflightHeaders,
} from '../functions/shared/cors.ts';
import { createLogger, type Logger } from '../functions/shared/logger.ts';
import {
  apiGatewayMaxPayloadBytes,
  awsOwnAnswers,
  type GatewayResponse,
  type GatewayResponseType,
  gatewayResponses,
  lambdaMaxInvocationBytes,
} from '../infra/gateway-responses.ts';
import {
  accountId,
  answerFromProxyResult,
  apiId,
  createLambdaContext,
  createProxyEvent,
  type HttpAnswer,
  invokeWithTimeout,
  isProxyResult,
  region,
} from './api-gateway/proxy-integration.ts';
import { createRouteMatcher, type RouteMatch } from './api-gateway/routing.ts';
import { createTokenBucket } from './api-gateway/throttling.ts';
import { createCachedAuthorizer } from './api-gateway/token-authorizer.ts';

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
  /**
   * The origins whose pages may call the API (`functions/shared/cors.ts`): preflights are
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
  const allowedOrigins = options.allowedOrigins ?? [];
  const routeMethods = [...new Set(options.routes.map((route) => route.httpMethod))];

  /**
   * A CORS preflight, as the stack's `OPTIONS` mock integration answers it on every resource of
   * the route table: no token, the resource's methods, the allowed request headers, and
   * `Access-Control-Allow-Origin` only for an allowed origin. `undefined` for a path that is no
   * resource (answered 404 like any unknown path).
   */
  const preflight = (request: IncomingMessage): HttpAnswer | undefined => {
    const methods = routeMethods.filter((method) => matchRoute(method, request.url) !== undefined);
    if (methods.length === 0) return undefined;
    return {
      statusCode: 204,
      headers: {
        ...preflightHeaders(methods),
        ...protectiveHeaders(false),
        ...allowOriginHeader(request.headers.origin, allowedOrigins),
      },
      body: Buffer.alloc(0),
    };
  };

  /** The CORS headers the stack gives every gateway response (`gatewayResponseCors`). */
  const gatewayCors = gatewayResponseCors(allowedOrigins);
  const gatewayCorsHeaders = (request: IncomingMessage): Record<string, string> => {
    const origin = gatewayCors.echoOrigin ? request.headers.origin : undefined;
    return {
      ...gatewayCors.literals,
      ...(origin === undefined ? {} : { 'Access-Control-Allow-Origin': origin }),
    };
  };

  const handleRequest = async (
    request: IncomingMessage,
    requestId: string,
    matched: RouteMatch | undefined,
  ): Promise<HttpAnswer | 'refused' | undefined> => {
    if (request.headers.host === undefined) return gatewayAnswer('DEFAULT_4XX');
    if (request.method === 'GET' && matched === undefined && options.localPages !== undefined) {
      const page = options.localPages((request.url ?? '/').split('?', 1)[0] as string);
      if (page !== undefined) {
        return {
          statusCode: 200,
          headers: { 'Content-Type': page.contentType, ...protectiveHeaders(false) },
          body: page.body,
        };
      }
    }
    if (matched === undefined && request.method === 'OPTIONS' && allowedOrigins.length > 0) {
      const answer = preflight(request);
      if (answer !== undefined) return answer;
    }
    // A REST API answers an unknown path and an unknown method alike (MISSING_AUTHENTICATION_TOKEN).
    if (matched === undefined) return gatewayAnswer('MISSING_AUTHENTICATION_TOKEN');
    const { route } = matched;
    if (!takeToken()) return gatewayAnswer('THROTTLED');

    const body = await readBody(request);
    if (body === 'client gone') return refusedByParser.has(request.socket) ? 'refused' : undefined;
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
        // A body the HTTP parser refused mid-way was answered, and logged, by `clientError`.
        if (answer === 'refused') return;
        if (answer !== undefined) {
          const cors = answer.gatewayResponse ? gatewayCorsHeaders(request) : {};
          writeAnswer(response, { ...answer, headers: { ...answer.headers, ...cors } }, requestId);
        }
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
  // Sockets whose request the parser refused: a body read on them did not end with the client.
  const refusedByParser = new WeakSet<object>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    // The client closed the connection mid-message (HPE_INVALID_EOF_STATE) or reset it: nobody
    // to answer; the request's own handler logs it as abandoned.
    if (error.code === 'ECONNRESET' || error.code === 'HPE_INVALID_EOF_STATE' || !socket.writable) {
      socket.destroy();
      return;
    }
    refusedByParser.add(socket);
    logger.info('request refused by the HTTP parser', { status: 400, reason: error.code });
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

function gatewayAnswer(type: GatewayResponseType): HttpAnswer {
  const response: GatewayResponse = gatewayResponses[type];
  return {
    statusCode: response.statusCode,
    headers: response.headers,
    body: Buffer.from(JSON.stringify(response.body)),
    gatewayResponse: true,
  };
}

/** An answer AWS gives itself, which no gateway response reshapes. */
function awsAnswer(answer: (typeof awsOwnAnswers)[keyof typeof awsOwnAnswers]): HttpAnswer {
  return { statusCode: answer.statusCode, headers: answer.headers, body: Buffer.from(answer.body) };
}

/**
 * Writes an answer. A 204 and a 304 have no content, so they get no `Content-Length` (RFC 9110
 * §8.6: a 204 must not have one, a 304 only the 200's), and a 304 no `Content-Type`: it describes
 * the representation the client already has (§15.4.5).
 */
function writeAnswer(response: ServerResponse, answer: HttpAnswer, requestId: string): void {
  response.statusCode = answer.statusCode;
  for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
  response.setHeader('x-amzn-RequestId', requestId);
  if (answer.statusCode === 204 || answer.statusCode === 304) response.removeHeader('Content-Type');
  if (answer.statusCode !== 204 && answer.statusCode !== 304) {
    response.setHeader('Content-Length', answer.body.length);
  }
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
