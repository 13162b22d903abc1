/**
 * The local gateway's shared types, in a module that imports none of its siblings: the handlers
 * it invokes, a route and its match, and a response ready to be written.
 */
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';

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
  /** This method's throttling (its share of the stage's budget), unless the options set one. */
  readonly throttling?: { readonly rateLimit: number; readonly burstLimit: number };
  /** Each client's throttling on this method, as the stage's usage plan holds it per API key. */
  readonly clientThrottling?: { readonly rateLimit: number; readonly burstLimit: number };
  readonly handler: ProxyIntegrationHandler;
}

/** A request matched to a route: the route, the path as sent and its path parameters. */
export interface RouteMatch {
  readonly route: GatewayRoute;
  /** The request path, as API Gateway passes it (not percent-decoded). */
  readonly path: string;
  /** Path parameters as API Gateway passes them: not percent-decoded. */
  readonly pathParameters: Readonly<Record<string, string>> | null;
  readonly query: string;
}

/** A response ready to be written: status, headers (single or multiple values) and body bytes. */
export interface HttpResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body: Buffer;
  /** A gateway response (`gateway-responses.ts`): the stage's CORS headers are added to it. */
  readonly gatewayResponse?: true;
}
