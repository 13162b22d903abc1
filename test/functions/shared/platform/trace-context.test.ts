import { describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { errorCodes } from '../../../../functions/shared/errors/error-codes.ts';
import { ApiError } from '../../../../functions/shared/errors/errors.ts';
import { jsonResponse } from '../../../../functions/shared/http/api-responses.ts';
import { createRouteHandler } from '../../../../functions/shared/http/route-handler.ts';
import { createLogger } from '../../../../functions/shared/platform/logger.ts';
import {
  childOf,
  formatTraceparent,
  newSpanId,
  parseTraceparent,
  requestTrace,
} from '../../../../functions/shared/platform/trace-context.ts';

// The examples of the W3C Trace Context recommendation, §3.2.
const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const parentId = '00f067aa0ba902b7';
const example = `00-${traceId}-${parentId}-01`;
const traceresponse = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

describe('parseTraceparent', () => {
  it('reads the recommendation’s example, and writes it back the same', () => {
    const context = parseTraceparent(example);
    expect(context).toEqual({ traceId, spanId: parentId, flags: '01' });
    expect(formatTraceparent(context as never)).toBe(example);
  });

  it.each([
    ['no value', undefined],
    ['empty', ''],
    ['upper case', example.toUpperCase()],
    ['version ff', `ff-${traceId}-${parentId}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${parentId}-01`],
    ['an all-zero parent id', `00-${traceId}-${'0'.repeat(16)}-01`],
    ['a short trace id', `00-${traceId.slice(1)}-${parentId}-01`],
    ['version 00 with more after the flags', `${example}-extra`],
    ['no flags', `00-${traceId}-${parentId}`],
  ])('refuses %s', (_name, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it('keeps only the sampled flag, sending the reserved ones as zeros (§3.2.2.5)', () => {
    const flagsOf = (flags: string) =>
      parseTraceparent(`00-${traceId}-${parentId}-${flags}`)?.flags;
    expect(['ff', '09', '01', '02', '00'].map(flagsOf)).toEqual(['01', '01', '01', '00', '00']);
    expect(parseTraceparent(`cc-${traceId}-${parentId}-fb-later`)?.flags).toBe('01');
  });

  it('reads a later version’s first four fields and leaves what follows (§4.3)', () => {
    expect(parseTraceparent(`cc-${traceId}-${parentId}-01-what-the-future-holds`)).toEqual({
      traceId,
      spanId: parentId,
      flags: '01',
    });
  });
});

describe('requestTrace', () => {
  it('continues the client’s trace in a span of its own, keeping its flags', () => {
    const trace = requestTrace(`00-${traceId}-${parentId}-00`, undefined);
    expect(trace.traceId).toBe(traceId);
    expect(trace.spanId).not.toBe(parentId);
    expect(trace.flags).toBe('00');
    expect(childOf(trace).traceId).toBe(traceId);
    expect(childOf(trace).spanId).not.toBe(trace.spanId);
  });

  it('starts a trace from X-Ray’s, whose root is the same 128 bits, sampled as X-Ray says', () => {
    const header = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0';
    expect(requestTrace(undefined, header)).toEqual({
      traceId: '5759e988bd862e3fe1be46a994272793',
      spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
      flags: '00',
    });
  });

  it('starts a new trace, sampled, when there is neither, or the client’s is invalid', () => {
    const one = requestTrace(undefined, undefined);
    const other = requestTrace(`00-${'0'.repeat(32)}-${parentId}-01`, undefined);
    for (const trace of [one, other]) expect(formatTraceparent(trace)).toMatch(traceresponse);
    expect(one.traceId).not.toBe(other.traceId);
    expect(one.flags).toBe('01');
  });

  it('draws ids that never repeat, past many refills of the random pool', () => {
    // 4 KiB a refill: 2,000 traces (24 bytes each) and 2,000 span ids take about 16 refills.
    const ids = Array.from({ length: 2_000 }, () => [
      requestTrace(undefined, undefined).traceId,
      newSpanId(),
    ]).flat();
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^(?!0+$)([0-9a-f]{16}|[0-9a-f]{32})$/);
  });
});

describe('a route function', () => {
  const handlerWith = (work: () => Promise<never> | ReturnType<typeof jsonResponse>) => {
    const lines: string[] = [];
    const handler = createRouteHandler(
      'traced',
      { logger: createLogger({}, (line) => lines.push(line)) },
      async ({ logger, trace }) => {
        logger.info('working', { sawTrace: formatTraceparent(trace) });
        return work();
      },
    );
    const invoke = (headers: Record<string, string>) =>
      handler(
        { headers, requestContext: { requestId: 'r-1' } } as unknown as APIGatewayProxyEvent,
        { awsRequestId: 'a-1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context,
      );
    return { invoke, entries: () => lines.map((line) => JSON.parse(line)) };
  };

  it('answers traceresponse in the client’s trace, the span its work saw, on every log line', async () => {
    const { invoke, entries } = handlerWith(() => jsonResponse(200, {}));
    const response = await invoke({ TraceParent: example });
    const [, answeredTrace, answeredSpan] = traceresponse.exec(
      String(response.headers?.traceresponse),
    ) as RegExpExecArray;
    expect(answeredTrace).toBe(traceId);
    expect(answeredSpan).not.toBe(parentId);
    expect(entries().map((entry) => entry.traceId)).toEqual([traceId, traceId]);
    expect(entries()[0].sawTrace).toBe(response.headers?.traceresponse);
  });

  it('answers traceresponse on an error too, a trace of its own begun', async () => {
    const { invoke, entries } = handlerWith(() => {
      throw new ApiError(errorCodes.plantConflict);
    });
    const response = await invoke({});
    expect(response.statusCode).toBe(errorCodes.plantConflict.statusCode);
    const [, answeredTrace] = traceresponse.exec(
      String(response.headers?.traceresponse),
    ) as RegExpExecArray;
    expect(entries().map((entry) => entry.traceId)).toEqual([answeredTrace, answeredTrace]);
  });
});
