/** The one table of error codes behind every failure: functions, gateway responses, OpenAPI. */
import { plantEventTypes } from '../event-types.ts';

/** The body of every failure response: `{"error": <int32>, "message": <string>}` and nothing else. */
export interface ErrorBody {
  readonly error: number;
  readonly message: string;
}

/** One row of the contract's error table. `message` is the default, written for the client. */
export interface ErrorCode {
  readonly error: number;
  readonly statusCode: number;
  readonly message: string;
}

/** The codes the functions answer: those every function may, and the plants'. */
export const errorCodes = {
  invalidJson: { error: 40001, statusCode: 400, message: 'The request body is not valid JSON.' },
  invalidPlant: {
    error: 40002,
    statusCode: 400,
    message: 'The request body is not a valid plant.',
  },
  unsupportedMediaType: {
    error: 40003,
    statusCode: 400,
    message: 'The request content type must be application/json.',
  },
  bodyTooLarge: {
    error: 40004,
    statusCode: 400,
    message: 'The request body is larger than 16384 bytes.',
  },
  invalidParameter: {
    error: 40005,
    statusCode: 400,
    message: 'A path or query parameter is invalid.',
  },
  plantConflict: {
    error: 40009,
    statusCode: 400,
    message: 'A plant with this id already exists with different content.',
  },
  plantNotFound: { error: 40401, statusCode: 404, message: 'No plant with this id.' },
  preconditionFailed: {
    error: 41200,
    statusCode: 412,
    message: 'The plant has changed since the ETag in If-Match; read it again.',
  },
  preconditionRequired: {
    error: 42800,
    statusCode: 428,
    message: 'A change needs If-Match with the ETag of the plant read last.',
  },
  throttled: { error: 42900, statusCode: 429, message: 'Too many requests; retry later.' },
  internal: { error: 50000, statusCode: 500, message: 'An unexpected error occurred.' },
  storeUnavailable: {
    error: 50300,
    statusCode: 503,
    message: 'The plant store is temporarily unavailable; it is safe to retry.',
  },
} as const satisfies Record<string, ErrorCode>;

/** The codes only API Gateway answers (and the web ACL), apart, so no function bundles them. */
export const gatewayErrorCodes = {
  /** The gateway rejected the request for a reason no other code names. */
  badRequest: { error: 40000, statusCode: 400, message: 'The request was rejected.' },
  unauthorized: {
    error: 40100,
    statusCode: 401,
    message: 'A valid bearer token is required.',
  },
  forbidden: {
    error: 40300,
    statusCode: 403,
    message: 'The bearer token does not grant the required scope.',
  },
  notFound: { error: 40400, statusCode: 404, message: 'No such resource or method.' },
  tokenThrottled: {
    error: 42900,
    statusCode: 429,
    message: 'Too many requests with this token in the last minute; retry later.',
  },
} as const satisfies Record<string, ErrorCode>;

/** The webhook endpoints' codes, apart, so the plants' bundles do not hold them. */
export const endpointErrorCodes = {
  invalidWebhookEndpoint: {
    error: 40020,
    statusCode: 400,
    message: 'The request body is not a valid webhook endpoint.',
  },
  endpointUrlMalformed: {
    error: 40021,
    statusCode: 400,
    message: 'url must be an absolute URL.',
  },
  endpointUrlScheme: {
    error: 40022,
    statusCode: 400,
    message: 'url must use an allowed scheme (https in a deployed stage).',
  },
  endpointUrlUserInfo: {
    error: 40023,
    statusCode: 400,
    message: 'url must not carry a user name or password.',
  },
  endpointUrlNotPublic: {
    error: 40024,
    statusCode: 400,
    message: "url's host must be, and resolve to, public addresses only.",
  },
  endpointUrlUnresolvable: {
    error: 40025,
    statusCode: 400,
    message: "url's host does not resolve.",
  },
  unknownEventType: {
    error: 40026,
    statusCode: 400,
    message: `events must be a non-empty list of ${plantEventTypes.join(', ')}.`,
  },
  invalidWebhookFormat: {
    error: 40027,
    statusCode: 400,
    message: 'format must be event, or plant (which carries plant.created only).',
  },
  invalidRecoverySince: {
    error: 40028,
    statusCode: 400,
    message: 'since must be an RFC 3339 time within the 7 days events are kept.',
  },
  endpointLimitReached: {
    error: 40029,
    statusCode: 400,
    message: 'This client has as many webhook endpoints as it may; delete one first.',
  },
  invalidIdempotencyKey: {
    error: 40030,
    statusCode: 400,
    message: 'Idempotency-Key must be 1 to 255 printable ASCII characters.',
  },
  webhookEndpointNotFound: {
    error: 40402,
    statusCode: 404,
    message: 'No webhook endpoint of this client has this id.',
  },
  webhookEndpointDisabled: {
    error: 40900,
    statusCode: 409,
    message: 'The webhook endpoint is disabled; enable it first (PATCH {"enabled": true}).',
  },
  idempotencyKeyInUse: {
    error: 40901,
    statusCode: 409,
    message: 'A request with this Idempotency-Key is under way; retry when it has answered.',
  },
  idempotencyKeyReused: {
    error: 42200,
    statusCode: 422,
    message: 'This Idempotency-Key was sent with a different request; use a new key.',
  },
} as const satisfies Record<string, ErrorCode>;

/** The contract's whole error table: the functions', the gateway's and the webhook endpoints' codes. */
export function everyErrorCode(): ErrorCode[] {
  return [
    ...Object.values(errorCodes),
    ...Object.values(gatewayErrorCodes),
    ...Object.values(endpointErrorCodes),
  ];
}

/** The largest request body the API accepts, in bytes (16 KiB). */
export const maxBodyBytes = 16 * 1024;

/** The Error body of a code, with its default message unless another is given. */
export function errorBody(code: ErrorCode, message: string = code.message): ErrorBody {
  return { error: code.error, message };
}
