import { describe, expect, it } from '@jest/globals';
import {
  ConfigurationError,
  parseJson,
  readEnvironment,
} from '../../../../functions/shared/platform/environment.ts';

function problemsOf(read: () => void): readonly string[] {
  try {
    read();
  } catch (error) {
    if (error instanceof ConfigurationError) return error.problems;
    throw error;
  }
  return [];
}

describe('readEnvironment', () => {
  it('reads required and defaulted variables, an empty or blank one as not set', () => {
    const read = readEnvironment({ TABLE_NAME: 'plants', EMPTY: '', BLANK: '  ' }, 'fn');
    expect(read.string('TABLE_NAME')).toBe('plants');
    expect(read.string('EMPTY', { fallback: 'x' })).toBe('x');
    expect(read.optional('BLANK')).toBeUndefined();
    expect(read.parse('PORT', Number, { fallback: 3000 })).toBe(3000);
    expect(() => read.check()).not.toThrow();
  });

  it('names every problem at once, each with its variable, and fails once', () => {
    const environment = { SUBSCRIBERS: '{"not": "a list"}', PORT: ' 80' };
    const problems = problemsOf(() => {
      const read = readEnvironment(environment, 'deliver-webhook');
      read.string('DELIVERY_QUEUE_URL', { description: 'the delivery queue' });
      read.parse('SUBSCRIBERS', parseJson(Array.isArray, 'a JSON array'));
      read.parse('PORT', (text) => {
        if (!/^[0-9]+$/.test(text)) throw new Error('must be digits');
        return Number(text);
      });
      read.check();
    });
    expect(problems).toEqual([
      'DELIVERY_QUEUE_URL is required: the delivery queue.',
      'SUBSCRIBERS must be a JSON array, got "{"not": "a list"}".',
      'PORT must be digits, got " 80".',
    ]);
  });

  it('starts its message with the owner, so a failed cold start says which function', () => {
    const read = readEnvironment({}, 'webhook-fanout');
    read.string('DELIVERY_QUEUE_URL');
    expect(() => read.check()).toThrow('webhook-fanout: DELIVERY_QUEUE_URL is required.');
  });
});
