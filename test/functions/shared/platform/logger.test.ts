import { describe, expect, it } from '@jest/globals';
import { createLogger, invocationLoggers } from '../../../../functions/shared/platform/logger.ts';

describe('createLogger', () => {
  it('writes one JSON object per entry with the base and child fields', () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 'plants' }, (line) => lines.push(line));
    logger.child({ requestId: 'r-1' }).info('created', { statusCode: 200 });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toEqual({
      level: 'info',
      message: 'created',
      timestamp: expect.any(String),
      service: 'plants',
      requestId: 'r-1',
      statusCode: 200,
    });
  });

  it('keeps the name, message and cause of an error', () => {
    const lines: string[] = [];
    const cause = new Error('socket hang up');
    createLogger({}, (line) => lines.push(line)).error('failed', {
      error: new Error('put failed', { cause }),
    });
    const entry = JSON.parse(lines[0] ?? '');
    expect(entry.error).toMatchObject({ name: 'Error', message: 'put failed' });
    expect(entry.error.cause).toMatchObject({ message: 'socket hang up' });
  });
});

describe('invocationLoggers', () => {
  const linesOf = () => {
    const lines: string[] = [];
    const loggerOf = invocationLoggers(
      createLogger({ service: 'plants' }, (line) => lines.push(line)),
    );
    return { lines, loggerOf, entries: () => lines.map((line) => JSON.parse(line)) };
  };

  it('names the invocation on every line, and the handler’s first invocation as its cold start', () => {
    const { loggerOf, entries } = linesOf();
    const first = { awsRequestId: 'request-1' };
    loggerOf(first).info('one');
    loggerOf(first).warn('two', { itemsNotPlants: 1 });
    loggerOf({ awsRequestId: 'request-2' }).info('three');
    expect(
      entries().map(({ message, awsRequestId, coldStart }) => ({
        message,
        awsRequestId,
        coldStart,
      })),
    ).toEqual([
      { message: 'one', awsRequestId: 'request-1', coldStart: true },
      { message: 'two', awsRequestId: 'request-1', coldStart: true },
      { message: 'three', awsRequestId: 'request-2', coldStart: false },
    ]);
  });

  it('takes the trace id from the runtime’s invoke store, else from _X_AMZN_TRACE_ID, in W3C form', () => {
    const global = globalThis as { awslambda?: unknown };
    const saved = { awslambda: global.awslambda, trace: process.env._X_AMZN_TRACE_ID };
    try {
      process.env._X_AMZN_TRACE_ID = 'Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1';
      global.awslambda = {
        InvokeStore: { getXRayTraceId: () => 'Root=1-67891233-abcdef012345678912345678' },
      };
      const { loggerOf, entries } = linesOf();
      loggerOf({ awsRequestId: 'a' }).info('from the store');
      global.awslambda = { InvokeStore: { getXRayTraceId: () => undefined } };
      loggerOf({ awsRequestId: 'b' }).info('from the environment');
      delete global.awslambda;
      delete process.env._X_AMZN_TRACE_ID;
      loggerOf({ awsRequestId: 'c' }).info('from nowhere');
      expect(entries().map((entry) => entry.traceId)).toEqual([
        '67891233abcdef012345678912345678',
        '5759e988bd862e3fe1be46a994272793',
        undefined,
      ]);
    } finally {
      global.awslambda = saved.awslambda;
      if (saved.trace === undefined) delete process.env._X_AMZN_TRACE_ID;
      else process.env._X_AMZN_TRACE_ID = saved.trace;
    }
  });
});
