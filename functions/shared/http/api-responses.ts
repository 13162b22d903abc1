/** The middy middleware behind every answer: one log line, and errors as the contract's Error. */
import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type ErrorCode, errorBody, errorCodes } from '../errors/error-codes.ts';
import { ApiError, StoreUnavailableError } from '../errors/errors.ts';
import { isUnavailableError } from '../platform/dynamodb.ts';
import type { InvocationContext, Logger } from '../platform/logger.ts';
import { formatTraceparent, type TraceContext } from '../platform/trace-context.ts';
import { corsHeaders } from './cors.ts';
import { findHeader } from './request.ts';

/** A JSON response with exactly `body` and `Content-Type: application/json`. */
export function jsonResponse(
  statusCode: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): APIGatewayProxyResult {
  return jsonTextResponse(statusCode, JSON.stringify(body), headers);
}

/** A response whose body is JSON text already written (exact int64 ids, for one). */
export function jsonTextResponse(
  statusCode: number,
  body: string,
  headers: Readonly<Record<string, string>> = {},
): APIGatewayProxyResult {
  return { statusCode, headers: { 'Content-Type': 'application/json', ...headers }, body };
}

/** The Error response of a code; a 503, or a 429 given the seconds, says when to retry. */
export function errorResponse(
  code: ErrorCode,
  message?: string,
  retryAfterSeconds?: number,
): APIGatewayProxyResult {
  const retryAfter = retryAfterSeconds ?? (code.statusCode === 503 ? 1 : undefined);
  const retry: Record<string, string> =
    retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) };
  return jsonResponse(code.statusCode, errorBody(code, message), retry);
}

/** Every answer's headers: nosniff, and no caching but of an `ETag`'s answer (revalidated). */
export function protectiveHeaders(withEntityTag: boolean): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': withEntityTag ? 'private, no-cache' : 'no-store',
  };
}

/** The protective headers, and no `Content-Type` on a 204 or 304 (RFC 9110 §15.3.5, §15.4.5). */
function finish(response: APIGatewayProxyResult): APIGatewayProxyResult {
  const headers: Record<string, string | number | boolean> = { ...response.headers };
  const withEntityTag = Object.keys(headers).some((name) => name.toLowerCase() === 'etag');
  if (response.statusCode === 204 || response.statusCode === 304) {
    for (const name of Object.keys(headers)) {
      if (name.toLowerCase() === 'content-type') delete headers[name];
    }
  }
  return { ...response, headers: { ...headers, ...protectiveHeaders(withEntityTag) } };
}

export interface ApiResponsesOptions {
  readonly loggerOf: (context?: InvocationContext) => Logger;
  /** The origins whose pages may read the answers (a proxy's answer is the browser's). */
  readonly allowedOrigins?: readonly string[];
  /** The request's span, which every answer names in `traceresponse`; none when absent. */
  readonly traceOf?: (event: APIGatewayProxyEvent | undefined, context: object) => TraceContext;
  readonly now?: () => number;
}

type ProxyRequest = Request<APIGatewayProxyEvent, APIGatewayProxyResult>;

/** The request log lines and the field metric filters read (the 5xx and conflict counts). */
export const requestLog = {
  handled: 'request handled',
  failed: 'request failed',
  errorCodeField: 'errorCode',
} as const;

/**
 * Logs one line per request (`error` with the detail for 5xx, never headers, bodies or tokens)
 * and answers a thrown {@link ApiError} with its code, anything else 500/50000.
 */
export function apiResponses(
  options: ApiResponsesOptions,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const { loggerOf } = options;
  const now = options.now ?? Date.now;
  const startTimes = new WeakMap<ProxyRequest, number>();
  const allowedOrigins = options.allowedOrigins ?? [];
  const addCorsHeaders = (request: ProxyRequest) => {
    if (!request.response) return;
    const trace = options.traceOf?.(request.event, request.context);
    const origin = request.event === undefined ? undefined : findHeader(request.event, 'origin');
    request.response = finish(request.response);
    request.response.headers = {
      ...request.response.headers,
      ...(trace === undefined ? {} : { traceresponse: formatTraceparent(trace) }),
      ...corsHeaders(origin, allowedOrigins),
    };
  };

  const logRequest = (request: ProxyRequest, statusCode: number, fields: object = {}) => {
    const logger = loggerOf(request.context);
    const entry = {
      requestId: request.event?.requestContext?.requestId,
      statusCode,
      durationMilliseconds: now() - (startTimes.get(request) ?? now()),
      ...fields,
    };
    if (statusCode >= 500) logger.error(requestLog.failed, entry);
    else logger.info(requestLog.handled, entry);
  };

  return {
    before: (request) => {
      startTimes.set(request, now());
      options.traceOf?.(request.event, request.context);
    },
    after: (request) => {
      addCorsHeaders(request);
      logRequest(request, request.response?.statusCode ?? 0);
    },
    onError: (request) => {
      // A dependency (the store, the queue, KMS, Secrets Manager) slow or unavailable: 503.
      const error =
        !(request.error instanceof ApiError) && isUnavailableError(request.error)
          ? new StoreUnavailableError({ cause: request.error })
          : request.error;
      const known = error instanceof ApiError ? error : undefined;
      const code = known?.code ?? errorCodes.internal;
      request.response = errorResponse(code, known?.clientMessage, known?.retryAfterSeconds);
      addCorsHeaders(request);
      logRequest(request, code.statusCode, {
        [requestLog.errorCodeField]: code.error,
        ...(code.statusCode >= 500 ? { error } : {}),
      });
    },
  };
}
