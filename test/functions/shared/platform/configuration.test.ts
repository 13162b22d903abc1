import { describe, expect, it } from '@jest/globals';
import * as v from 'valibot';
import {
  ConfigurationError,
  optional,
  parsed,
  parseJson,
  readConfiguration,
  required,
} from '../../../../functions/shared/platform/configuration.ts';

function problemsOf(read: () => void): readonly string[] {
  try {
    read();
  } catch (error) {
    if (error instanceof ConfigurationError) return error.problems;
    throw error;
  }
  return [];
}

describe('readConfiguration', () => {
  it('reads required and defaulted variables, an empty or blank one as not set', () => {
    const variables = readConfiguration(
      'fn',
      {
        TABLE_NAME: required(),
        EMPTY: parsed((text) => text, { fallback: 'x' }),
        BLANK: optional,
        PORT: parsed(Number, { fallback: 3000 }),
      },
      { TABLE_NAME: 'plants', EMPTY: '', BLANK: '  ' },
    );
    expect(variables).toEqual({ TABLE_NAME: 'plants', EMPTY: 'x', BLANK: undefined, PORT: 3000 });
  });

  it('names every problem at once, each with its variable, and fails once', () => {
    const environment = { SUBSCRIBERS: '{"not": "a list"}', PORT: ' 80', SECRET: 'oops' };
    const problems = problemsOf(() =>
      readConfiguration(
        'deliver-webhook',
        {
          DELIVERY_QUEUE_URLS: required('the delivery queue'),
          SUBSCRIBERS: parsed(parseJson(v.array(v.unknown()), 'a JSON array')),
          PORT: parsed((text) => {
            if (!/^[0-9]+$/.test(text)) throw new Error('must be digits');
            return Number(text);
          }),
          SECRET: parsed((): string => {
            throw new Error('must be whsec_ and base64');
          }),
        },
        environment,
        { secrets: ['SECRET'] },
      ),
    );
    expect(problems).toEqual([
      'DELIVERY_QUEUE_URLS is required: the delivery queue.',
      'SUBSCRIBERS must be a JSON array, got "{"not": "a list"}".',
      'PORT must be digits, got " 80".',
      // A secret's value is never shown.
      'SECRET must be whsec_ and base64.',
    ]);
  });

  it('starts its message with the owner, so a failed cold start says which function', () => {
    expect(() =>
      readConfiguration('webhook-fanout', { DELIVERY_QUEUE_URLS: required() }, {}),
    ).toThrow('webhook-fanout: DELIVERY_QUEUE_URLS is required.');
  });
});
