import { describe, expect, it } from '@jest/globals';
import { createLogger } from '../../../functions/shared/logger.ts';

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
