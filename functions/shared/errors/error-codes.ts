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

/** A row, its status the code's first three digits; pure, so bundles leave out unused tables. */
/* @__NO_SIDE_EFFECTS__ */
function code(error: number, message: string): ErrorCode {
  return { error, statusCode: Math.trunc(error / 100), message };
}

/** The codes the functions answer: those every function may, and the plants'. */
export const errorCodes = {
  invalidJson: code(40001, 'The request body is not valid JSON.'),
  invalidPlant: code(40002, 'The request body is not a valid plant.'),
  unsupportedMediaType: code(40003, 'The request content type must be application/json.'),
  bodyTooLarge: code(40004, 'The request body is larger than 16384 bytes.'),
  invalidParameter: code(40005, 'A path or query parameter is invalid.'),
  plantConflict: code(40009, 'A plant with this id already exists with different content.'),
  plantNotFound: code(40401, 'No plant with this id.'),
  preconditionFailed: code(
    41200,
    'The plant has changed since the ETag in If-Match; read it again.',
  ),
  preconditionRequired: code(
    42800,
    'A change needs If-Match with the ETag of the plant read last.',
  ),
  throttled: code(42900, 'Too many requests; retry later.'),
  internal: code(50000, 'An unexpected error occurred.'),
  storeUnavailable: code(50300, 'The plant store is temporarily unavailable; it is safe to retry.'),
};

/** The codes only API Gateway answers (and the web ACL), apart, so no function bundles them. */
export const gatewayErrorCodes = {
  /** The gateway rejected the request for a reason no other code names. */
  badRequest: code(40000, 'The request was rejected.'),
  unauthorized: code(40100, 'A valid bearer token is required.'),
  forbidden: code(40300, 'The bearer token does not grant the required scope.'),
  notFound: code(40400, 'No such resource or method.'),
  tokenThrottled: code(42900, 'Too many requests with this token in the last minute; retry later.'),
};

/** The webhook endpoints' codes, apart (and built in a pure call) so plants' bundles leave them. */
export const endpointErrorCodes = /* @__PURE__ */ (() => ({
  invalidWebhookEndpoint: code(40020, 'The request body is not a valid webhook endpoint.'),
  endpointUrlMalformed: code(40021, 'url must be an absolute URL.'),
  endpointUrlScheme: code(40022, 'url must use an allowed scheme (https in a deployed stage).'),
  endpointUrlUserInfo: code(40023, 'url must not carry a user name or password.'),
  endpointUrlNotPublic: code(40024, "url's host must be, and resolve to, public addresses only."),
  endpointUrlUnresolvable: code(40025, "url's host does not resolve."),
  unknownEventType: code(
    40026,
    `events must be a non-empty list of ${plantEventTypes.join(', ')}.`,
  ),
  invalidWebhookFormat: code(
    40027,
    'format must be event, or plant (which carries plant.created only).',
  ),
  invalidRecoverySince: code(
    40028,
    'since must be an RFC 3339 time within the 7 days events are kept.',
  ),
  endpointLimitReached: code(
    40029,
    'This client has as many webhook endpoints as it may; delete one first.',
  ),
  invalidIdempotencyKey: code(
    40030,
    'Idempotency-Key must be 1 to 255 printable ASCII characters.',
  ),
  webhookEndpointNotFound: code(40402, 'No webhook endpoint of this client has this id.'),
  webhookEndpointDisabled: code(
    40900,
    'The webhook endpoint is disabled; enable it first (PATCH {"enabled": true}).',
  ),
  idempotencyKeyInUse: code(
    40901,
    'A request with this Idempotency-Key is under way; retry when it has answered.',
  ),
  idempotencyKeyReused: code(
    42200,
    'This Idempotency-Key was sent with a different request; use a new key.',
  ),
}))();

/** The contract's whole error table: the functions', the gateway's and the webhook endpoints' codes. */
export function everyErrorCode(): ErrorCode[] {
  const tables = [errorCodes, gatewayErrorCodes, endpointErrorCodes];
  return tables.flatMap((codes) => Object.values(codes));
}

/** The largest request body the API accepts, in bytes (16 KiB). */
export const maxBodyBytes = 16 * 1024;

/** The Error body of a code, with its default message unless another is given. */
export function errorBody(code: ErrorCode, message: string = code.message): ErrorBody {
  return { error: code.error, message };
}
