/** A logger that keeps its JSON lines in memory, for assertions on what was logged. */
import { createLogger, type Logger } from '../../functions/shared/platform/logger.ts';

export interface CapturedLogs {
  readonly logger: Logger;
  /** Every line written so far. */
  readonly lines: string[];
  /** The lines, parsed. */
  entries(): Record<string, unknown>[];
}

export function captureLogs(): CapturedLogs {
  const lines: string[] = [];
  return {
    logger: createLogger({ service: 'create-plant' }, (line) => lines.push(line)),
    lines,
    entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
