/** The answers API Gateway gives itself, each with the Error body; plain data, for `npm start`. */
import {
  type ErrorBody,
  type ErrorCode,
  errorBody,
  errorCodes,
  gatewayErrorCodes,
} from '../functions/shared/errors/error-codes.ts';

/** The response types the Plant Store customises (as CloudFormation names them). */
export type GatewayResponseType =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'RESOURCE_NOT_FOUND'
  | 'THROTTLED'
  | 'QUOTA_EXCEEDED'
  | 'INVALID_API_KEY'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'INTEGRATION_TIMEOUT'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

export interface GatewayResponse {
  readonly type: GatewayResponseType;
  readonly statusCode: number;
  /** Header names and literal values (the CDK stack quotes them for API Gateway). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ErrorBody;
}

/** The realm named in `WWW-Authenticate` challenges (RFC 6750). */
export const authenticationRealm = 'plant-store';

const json = {
  'Content-Type': 'application/json',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
} as const;

function respond(type: GatewayResponseType, code: ErrorCode, headers: Record<string, string> = {}) {
  return {
    type,
    statusCode: code.statusCode,
    headers: { ...json, ...headers },
    body: errorBody(code),
  };
}

export const gatewayResponses: Readonly<Record<GatewayResponseType, GatewayResponse>> = {
  // No, malformed or rejected token.
  UNAUTHORIZED: respond('UNAUTHORIZED', gatewayErrorCodes.unauthorized, {
    'WWW-Authenticate': `Bearer realm="${authenticationRealm}"`,
  }),
  // The authorizer answered Deny: a valid token without the required scope.
  ACCESS_DENIED: respond('ACCESS_DENIED', gatewayErrorCodes.forbidden, {
    'WWW-Authenticate': `Bearer realm="${authenticationRealm}", error="insufficient_scope"`,
  }),
  // An unknown path or method: API Gateway's 403 "Missing Authentication Token" is a 404.
  MISSING_AUTHENTICATION_TOKEN: respond('MISSING_AUTHENTICATION_TOKEN', gatewayErrorCodes.notFound),
  RESOURCE_NOT_FOUND: respond('RESOURCE_NOT_FOUND', gatewayErrorCodes.notFound),
  THROTTLED: respond('THROTTLED', errorCodes.throttled, { 'Retry-After': '1' }),
  QUOTA_EXCEEDED: respond('QUOTA_EXCEEDED', errorCodes.throttled, { 'Retry-After': '1' }),
  // A key still on its way into the usage plan; API Gateway's 403 would say give up.
  INVALID_API_KEY: respond('INVALID_API_KEY', errorCodes.storeUnavailable, { 'Retry-After': '1' }),
  // No REQUEST_TOO_LARGE: API Gateway does not apply a customised 413 (`awsOwnResponses`).
  UNSUPPORTED_MEDIA_TYPE: respond('UNSUPPORTED_MEDIA_TYPE', errorCodes.unsupportedMediaType),
  // The function did not answer in time; a retry is safe.
  INTEGRATION_TIMEOUT: respond('INTEGRATION_TIMEOUT', errorCodes.storeUnavailable, {
    'Retry-After': '1',
  }),
  DEFAULT_4XX: respond('DEFAULT_4XX', gatewayErrorCodes.badRequest),
  DEFAULT_5XX: respond('DEFAULT_5XX', errorCodes.internal),
};

/**
 * What AWS answers itself for requests too large, before any gateway response (a customised 413
 * "isn't currently supported", API Gateway developer guide): over API Gateway's 10 MB, or an
 * event over Lambda's 6 MB (bodies from ~4.5 MB, base64). Captured from real responses.
 */
export const awsOwnResponses = {
  payloadTooLarge: {
    statusCode: 413,
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
    body: 'HTTP content length exceeded 10485760 bytes.',
  },
  invocationTooLarge: {
    statusCode: 413,
    headers: { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'BadRequestException' },
    body: '{"message": "Request Too Long"}',
  },
} as const;

/** API Gateway's payload limit: 10 MB (10,485,760 bytes). */
export const apiGatewayMaxPayloadBytes = 10 * 1024 * 1024;

/** Lambda's limit on a synchronous invocation's event: 6 MB (6,291,456 bytes). */
export const lambdaMaxInvocationBytes = 6 * 1024 * 1024;
