/** What a function's answer names its trace by (`functions/shared/platform/trace-context.ts`). */
import { expect } from '@jest/globals';

/** Any `traceresponse`: W3C Trace Context Level 2, version 00. */
export const anyTraceresponse = expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
