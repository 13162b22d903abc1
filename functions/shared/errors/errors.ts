/**
 * The failures answered on purpose ({@link ApiError}); anything else thrown is a 500, logged.
 * Two have classes of their own, because code catches them by type.
 */
import { type ErrorCode, errorCodes } from './error-codes.ts';

/** A failure with a stable code; only a 4xx sends its own message (as middy's `expose`). */
export class ApiError extends Error {
  readonly code: ErrorCode;
  /** Whole seconds until a call is allowed again (a 429's `Retry-After`), when the code has one. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message: string = code.message,
    options?: ErrorOptions & { readonly retryAfterSeconds?: number },
  ) {
    super(message, options);
    this.code = code;
    const seconds = options?.retryAfterSeconds;
    this.retryAfterSeconds = seconds === undefined ? undefined : Math.max(1, Math.ceil(seconds));
  }

  /** The message the client may read. */
  get clientMessage(): string {
    return this.code.statusCode < 500 ? this.message : this.code.message;
  }
}

/** 40401: no plant has the requested id. Caught by the delete: a plant already gone is no error. */
export class PlantNotFoundError extends ApiError {
  override readonly name = 'PlantNotFoundError';
  constructor() {
    super(errorCodes.plantNotFound);
  }
}

/** 50300: the store unavailable after retries. Caught where a write or a delivery is retried. */
export class StoreUnavailableError extends ApiError {
  override readonly name = 'StoreUnavailableError';
  constructor(options?: ErrorOptions) {
    super(errorCodes.storeUnavailable, errorCodes.storeUnavailable.message, options);
  }
}

/** 40005: a path or query parameter that is not what `problem` says it must be. */
export function invalidParameter(problem: string): ApiError {
  return new ApiError(errorCodes.invalidParameter, `Invalid parameter: ${problem}`);
}

/** What a conditional request changes, as its messages name it. */
type Subject = 'plant' | 'webhook endpoint';

/** 41200: `If-Match` names no version the subject has, or `If-None-Match` names the one it has. */
export function preconditionFailed(
  header: 'If-Match' | 'If-None-Match' = 'If-Match',
  subject: Subject = 'plant',
): ApiError {
  const message =
    header === 'If-Match'
      ? errorCodes.preconditionFailed.message
      : 'The plant has a version that If-None-Match names (any version, for *).';
  return new ApiError(errorCodes.preconditionFailed, message.replace('plant', subject));
}

/** 42800: a change without `If-Match`. */
export function preconditionRequired(subject: Subject = 'plant'): ApiError {
  const code = errorCodes.preconditionRequired;
  return new ApiError(code, code.message.replace('plant', subject));
}
