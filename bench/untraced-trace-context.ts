/**
 * `functions/shared/platform/trace-context.ts` with nothing behind it, for the benchmark's
 * `deployed-untraced` build: the same exports, one fixed context, no parsing and no random ids.
 * The create function built with it shows what carrying W3C Trace Context costs a cold start.
 */
import type { TraceContext } from '../functions/shared/platform/trace-context.ts';

const fixed: TraceContext = { traceId: '1'.repeat(32), spanId: '1'.repeat(16), flags: '01' };

export const parseTraceparent = (): TraceContext | undefined => undefined;
export const formatTraceparent = (): string | undefined => undefined;
export const newSpanId = (): string => fixed.spanId;
export const childOf = (): TraceContext => fixed;
export const requestTrace = (): TraceContext => fixed;
export const traceIdOfXRay = (): string | undefined => undefined;
export const xrayHeader = (): string | undefined => undefined;
