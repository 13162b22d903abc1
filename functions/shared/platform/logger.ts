/**
 * Structured JSON logs on stdout, a small logger of our own (docs/decisions/logger.md). Never
 * pass a token, an Authorization header or a request body in `fields`.
 */
import { traceIdOfXRay, xrayHeader } from './trace-context.ts';

export type LogLevel = 'info' | 'warn' | 'error';

export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger whose every entry also carries `fields` (for example the request id). */
  child(fields: LogFields): Logger;
}

export type LogWriter = (line: string) => void;

/** In Lambda, a line written to stdout passes the JSON log format unchanged (`console` does not). */
const writeToStdout: LogWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

/** The fields the stage's metric filters read, as JSON selectors. */
export const logFields = {
  level: '$.level',
  message: '$.message',
  /** `$LATEST` or a number: canary alarms count one version. */
  functionVersion: '$.functionVersion',
} as const;

/** A logger of one JSON object a line: `{level, message, timestamp, functionVersion, ...fields}`. */
export function createLogger(base: LogFields = {}, write: LogWriter = writeToStdout): Logger {
  // Lambda sets it in every version's environment; absent elsewhere (then not logged).
  const functionVersion = process.env.AWS_LAMBDA_FUNCTION_VERSION;
  const log = (level: LogLevel, message: string, fields: LogFields = {}) => {
    const entry = { level, message, timestamp: new Date().toISOString(), functionVersion };
    write(JSON.stringify({ ...entry, ...base, ...fields }, replaceErrors));
  };
  return {
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
    child: (fields) => createLogger({ ...base, ...fields }, write),
  };
}

/** What a line names its invocation by, from the Lambda context. */
export interface InvocationContext {
  readonly awsRequestId: string;
  /** Lambda's: the time left before the function's timeout. */
  getRemainingTimeInMillis?(): number;
}

/**
 * Loggers per invocation, for one handler: each line names the invocation (`awsRequestId`), its
 * trace (`traceId`, 32 hex digits: the request's W3C trace given by `traceIdOf`, else X-Ray's, from
 * the runtime's invoke store or `_X_AMZN_TRACE_ID`, in W3C form) and whether it is the handler's
 * first (`coldStart`). The same context gets the same logger.
 */
export function invocationLoggers(
  logger: Logger,
  traceIdOf: (context: InvocationContext) => string | undefined = () => undefined,
): (context?: InvocationContext) => Logger {
  let coldStart = true;
  const loggers = new WeakMap<InvocationContext, Logger>();
  return (context) => {
    const known = context === undefined ? undefined : loggers.get(context);
    if (known !== undefined) return known;
    const xray = xrayHeader();
    const traceId = (context && traceIdOf(context)) ?? traceIdOfXRay(xray) ?? xray;
    const child = logger.child({ awsRequestId: context?.awsRequestId, traceId, coldStart });
    coldStart = false;
    if (context !== undefined) loggers.set(context, child);
    return child;
  };
}

/** Errors serialise to `{}` by default; keep what an operator needs, causes included. */
function replaceErrors(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    // `code` names socket failures (ECONNREFUSED, ETIMEDOUT…), often all an operator needs.
    const { code } = value as { code?: unknown };
    const { name, message, stack, cause } = value;
    return { name, message, code, stack, cause };
  }
  if (typeof value === 'bigint') return value.toString();
  return value;
}
