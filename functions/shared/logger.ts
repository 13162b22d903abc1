/**
 * Structured JSON logs, one line per entry, on stdout (CloudWatch Logs in Lambda).
 *
 * A dozen lines instead of a logging library (docs/decisions/logger.md). Never pass a token, an
 * Authorization header or a request body in `fields`.
 */

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

/**
 * Written as they are: in Lambda, with JSON log format, the runtime reformats `console` output
 * but passes a line already written to stdout through unchanged.
 */
const writeToStdout: LogWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

/**
 * The fields every line has that the deployed stage's metric filters read, as their JSON
 * selectors: the monitoring imports them, so a rename here cannot silently empty a metric.
 */
export const logFields = {
  level: '$.level',
  message: '$.message',
  /** The Lambda version that wrote the line (`$LATEST` or a number): canary alarms count one version. */
  functionVersion: '$.functionVersion',
} as const;

/**
 * Creates a logger writing one JSON object per line:
 * `{level, message, timestamp, functionVersion, ...fields}`.
 */
export function createLogger(base: LogFields = {}, write: LogWriter = writeToStdout): Logger {
  // Lambda sets it in every version's environment; absent elsewhere (then not logged).
  const functionVersion = process.env.AWS_LAMBDA_FUNCTION_VERSION;
  const log = (level: LogLevel, message: string, fields: LogFields = {}) => {
    write(
      JSON.stringify(
        {
          level,
          message,
          timestamp: new Date().toISOString(),
          functionVersion,
          ...base,
          ...fields,
        },
        replaceErrors,
      ),
    );
  };
  return {
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
    child: (fields) => createLogger({ ...base, ...fields }, write),
  };
}

/** Errors serialise to `{}` by default; keep what an operator needs, causes included. */
function replaceErrors(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    // `code` names socket failures (ECONNREFUSED, ETIMEDOUT…), often all an operator needs.
    const { code } = value as { code?: unknown };
    return {
      name: value.name,
      message: value.message,
      code,
      stack: value.stack,
      cause: value.cause,
    };
  }
  if (typeof value === 'bigint') return value.toString();
  return value;
}
