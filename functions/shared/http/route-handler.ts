/**
 * The middy handler every route function is built on: `apiResponses` around its work. Each
 * function declares its own `Dependencies`, all required: one left out is a type error.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { withinInvocationBudget } from '../platform/invocation-budget.ts';
import { createLogger, invocationLoggers, type Logger } from '../platform/logger.ts';
import { flushSpans, inSpan } from '../platform/spans.ts';
import { requestTrace, type TraceContext } from '../platform/trace-context.ts';
import { apiResponses } from './api-responses.ts';
import { findHeader } from './request.ts';

/** What every route function takes besides its work's own dependencies. */
export interface RouteHandlerOptions {
  /** The origins whose pages may read the answers (`cors.ts`); none when absent. */
  readonly allowedOrigins?: readonly string[];
  /** Where the lines go; JSON on standard output, named after the function, when absent. */
  readonly logger?: Logger;
}

/** What the work of one request gets. */
export interface RouteRequest {
  readonly event: APIGatewayProxyEvent;
  /** The invocation's logger: its lines name the request and its trace. */
  readonly logger: Logger;
  /** The request's span (`trace-context.ts`), which its answer and its plant's webhooks carry. */
  readonly trace: TraceContext;
}

/**
 * What a route function keeps of its time for after its work: releasing what it took (a
 * recover's claims) and answering. The work itself stops at the function's timeout less this.
 */
export const routeMarginMilliseconds = 3_000;

/** The middy handler of the route function `service` around `work`. */
export function createRouteHandler(
  service: string,
  options: RouteHandlerOptions,
  work: (request: RouteRequest) => Promise<APIGatewayProxyResult>,
) {
  const traces = new WeakMap<object, TraceContext>();
  const traceOf = (event: APIGatewayProxyEvent | undefined, context: object) => {
    const known = traces.get(context);
    if (known !== undefined) return known;
    const trace = requestTrace(event && findHeader(event, 'traceparent'));
    if (typeof context === 'object' && context !== null) traces.set(context, trace);
    return trace;
  };
  const loggerOf = invocationLoggers(
    options.logger ?? createLogger({ service }),
    (context) => traces.get(context)?.traceId,
  );
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(apiResponses({ loggerOf, traceOf, allowedOrigins: options.allowedOrigins ?? [] }))
    .handler((event, context) => {
      const trace = traceOf(event, context);
      const span = {
        kind: 'server',
        service,
        context: trace,
        attributes: { 'http.request.method': event.httpMethod, 'http.route': event.resource },
      } as const;
      return inSpan(service, span, (request) =>
        withinInvocationBudget(context, routeMarginMilliseconds, () =>
          work({ event, logger: loggerOf(context), trace }),
        ).then((answer) => {
          request?.set({ 'http.response.status_code': answer.statusCode });
          return answer;
        }),
      ).finally(flushSpans);
    });
}
