/**
 * The answers API Gateway gives itself (before or instead of the function): one definition used
 * by the CDK stack (`AWS::ApiGateway::GatewayResponse`) and by the local API, so the two cannot
 * drift. Every one carries the Error body, so no response of the API has another shape.
 *
 * This module is plain data: it must not import aws-cdk-lib, since the local API loads it.
 */
import {
  type ErrorBody,
  type ErrorCode,
  errorBody,
  errorCodes,
  gatewayErrorCodes,
} from '../functions/shared/errors/error-codes.ts';

/** The API Gateway response types the Plant Store customises (names as in CloudFormation). */
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

/** Every gateway response is JSON, says so (nosniff), and is kept by no cache. */
const json = {
  'Content-Type': 'application/json',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
} as const;

function respond(
  type: GatewayResponseType,
  code: ErrorCode,
  headers: Record<string, string> = {},
): GatewayResponse {
  return {
    type,
    statusCode: code.statusCode,
    headers: { ...json, ...headers },
    body: errorBody(code),
  };
}

export const gatewayResponses: Readonly<Record<GatewayResponseType, GatewayResponse>> = {
  // No, malformed or rejected token: the authorizer threw "Unauthorized" or the header is missing.
  UNAUTHORIZED: respond('UNAUTHORIZED', gatewayErrorCodes.unauthorized, {
    'WWW-Authenticate': `Bearer realm="${authenticationRealm}"`,
  }),
  // The authorizer answered Deny: a valid token without the required scope.
  ACCESS_DENIED: respond('ACCESS_DENIED', gatewayErrorCodes.forbidden, {
    'WWW-Authenticate': `Bearer realm="${authenticationRealm}", error="insufficient_scope"`,
  }),
  // REST APIs answer an unknown path or method with 403 "Missing Authentication Token";
  // the contract calls that what it is: 404.
  MISSING_AUTHENTICATION_TOKEN: respond('MISSING_AUTHENTICATION_TOKEN', gatewayErrorCodes.notFound),
  RESOURCE_NOT_FOUND: respond('RESOURCE_NOT_FOUND', gatewayErrorCodes.notFound),
  THROTTLED: respond('THROTTLED', errorCodes.throttled, { 'Retry-After': '1' }),
  QUOTA_EXCEEDED: respond('QUOTA_EXCEEDED', errorCodes.throttled, { 'Retry-After': '1' }),
  // The client's API key is not in the usage plan (yet): the authorizer adds it before it answers,
  // so this is a key still on its way; API Gateway's 403 would tell the client to give up.
  INVALID_API_KEY: respond('INVALID_API_KEY', errorCodes.storeUnavailable, { 'Retry-After': '1' }),
  // REQUEST_TOO_LARGE is left out on purpose: API Gateway does not apply a customised 413
  // (see `awsOwnResponses` below), so defining one would only pretend.
  UNSUPPORTED_MEDIA_TYPE: respond('UNSUPPORTED_MEDIA_TYPE', errorCodes.unsupportedMediaType),
  // The function did not answer in time. Creates are idempotent, so a retry is safe.
  INTEGRATION_TIMEOUT: respond('INTEGRATION_TIMEOUT', errorCodes.storeUnavailable, {
    'Retry-After': '1',
  }),
  DEFAULT_4XX: respond('DEFAULT_4XX', gatewayErrorCodes.badRequest),
  DEFAULT_5XX: respond('DEFAULT_5XX', errorCodes.internal),
};

/**
 * What AWS answers itself, before any gateway response can reshape it, for requests too large
 * for it; the Limits of docs/api.md cite where each comes from. The local stand-in sends the
 * same.
 *
 * - Over API Gateway's 10 MB payload limit: its own 413. "Customizing the default gateway
 *   response for 413 REQUEST_TOO_LARGE isn't currently supported" (API Gateway developer guide,
 *   "Important notes"); the body is the text captured from real responses.
 * - An invocation event over Lambda's 6 MB synchronous payload limit (the stack's binary media
 *   type sends bodies base64-encoded, so bodies from about 4.5 MB): API Gateway answers 413 with
 *   its own JSON message, as captured from real responses.
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
