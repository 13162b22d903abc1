/**
 * `functions/shared/platform/spans.ts` with nothing behind it, for the benchmark's
 * `deployed-untraced` build: work runs as it is, nothing is recorded, nothing is sent.
 */
import type { Span, SpanOptions } from '../functions/shared/platform/spans.ts';

export const exportTimeoutMilliseconds = 500;
export const activeSpan = (): Span | undefined => undefined;
export const inSpan = <T>(
  _name: string,
  _options: SpanOptions,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> => work(undefined);
export const flushSpans = async (): Promise<void> => undefined;
export const traceAwsCalls = (): void => undefined;
