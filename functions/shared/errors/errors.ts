/**
 * The failures the API answers on purpose, one class each, tied to its row of {@link errorCodes}.
 * Anything else that is thrown is a fault: 500/50000, logged, never shown to the client.
 */
import { type ErrorCode, errorCodes } from './error-codes.ts';

/**
 * A failure with a stable code. Like middy's `HttpError.expose`, only client errors (4xx) send
 * their own message; a 5xx sends the code's default message and keeps the detail for the log.
 */
export class ApiError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string = code.message, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }

  /** The message the client may read. */
  get clientMessage(): string {
    return this.code.statusCode < 500 ? this.message : this.code.message;
  }
}

/** 40001: the body is empty or not JSON. */
export class InvalidJsonError extends ApiError {
  override readonly name = 'InvalidJsonError';
  constructor(options?: ErrorOptions) {
    super(errorCodes.invalidJson, errorCodes.invalidJson.message, options);
  }
}

/** 40002: the body is JSON but not a valid plant; the message names every failing field. */
export class InvalidPlantError extends ApiError {
  override readonly name = 'InvalidPlantError';
  constructor(message: string) {
    super(errorCodes.invalidPlant, message);
  }
}

/** 40003: the content type is missing or not the one the operation takes. */
export class UnsupportedMediaTypeError extends ApiError {
  override readonly name = 'UnsupportedMediaTypeError';
  constructor(mediaType = 'application/json') {
    super(
      errorCodes.unsupportedMediaType,
      errorCodes.unsupportedMediaType.message.replace('application/json', mediaType),
    );
  }
}

/** 40004: the body is larger than the API accepts. */
export class BodyTooLargeError extends ApiError {
  override readonly name = 'BodyTooLargeError';
  constructor() {
    super(errorCodes.bodyTooLarge);
  }
}

/** 40005: a path or query parameter is invalid; the message names it. */
export class InvalidParameterError extends ApiError {
  override readonly name = 'InvalidParameterError';
  constructor(message: string) {
    super(errorCodes.invalidParameter, message);
  }
}

/** 40401: no plant has the requested id. */
export class PlantNotFoundError extends ApiError {
  override readonly name = 'PlantNotFoundError';
  constructor() {
    super(errorCodes.plantNotFound);
  }
}

/** 40009: a plant with this id is stored with different content. */
export class PlantConflictError extends ApiError {
  override readonly name = 'PlantConflictError';
  constructor() {
    super(errorCodes.plantConflict);
  }
}

/** 41200: `If-Match` names no version the plant has, or `If-None-Match` names the one it has. */
export class PreconditionFailedError extends ApiError {
  override readonly name = 'PreconditionFailedError';
  /**
   * @param header the precondition that failed: `If-Match` (the code's message) or `If-None-Match`.
   * @param subject what the request changes: a plant, or a webhook endpoint.
   */
  constructor(header: 'If-Match' | 'If-None-Match' = 'If-Match', subject: Subject = 'plant') {
    super(
      errorCodes.preconditionFailed,
      (header === 'If-Match'
        ? errorCodes.preconditionFailed.message
        : 'The plant has a version that If-None-Match names (any version, for *).'
      ).replace('plant', subject),
    );
  }
}

/** What a conditional request changes, as its messages name it. */
type Subject = 'plant' | 'webhook endpoint';

/** 42800: a change without `If-Match`. */
export class PreconditionRequiredError extends ApiError {
  override readonly name = 'PreconditionRequiredError';
  constructor(subject: Subject = 'plant') {
    super(
      errorCodes.preconditionRequired,
      errorCodes.preconditionRequired.message.replace('plant', subject),
    );
  }
}

/** 42900: a limit on calls was reached; `Retry-After` says when the next one is allowed. */
export class TooManyRequestsError extends ApiError {
  override readonly name = 'TooManyRequestsError';
  /** Whole seconds until a call is allowed again. */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(errorCodes.throttled, message);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/** 50300: the store is unreachable, too slow or throttling after retries; safe to retry. */
export class StoreUnavailableError extends ApiError {
  override readonly name = 'StoreUnavailableError';
  constructor(options?: ErrorOptions) {
    super(errorCodes.storeUnavailable, errorCodes.storeUnavailable.message, options);
  }
}
