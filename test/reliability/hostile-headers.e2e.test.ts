/**
 * Hostile headers and broken HTTP never produce a 5xx, an answer outside the contract's shapes,
 * or a stored item the client was not told about: any content type (fast-check, fixed seed),
 * repeated and odd headers, and request lines Node's parser refuses, sent over HTTP to the local
 * API in its own process, then the table is audited.
 *
 * @services dynamodb-local
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { errorCodes, gatewayErrorCodes } from '../../functions/shared/errors/error-codes.ts';
import {
  describeAudit,
  recordRawAnswer,
  seed,
  uniquePlant,
  useHostileSession,
} from './hostile-session.ts';
import { errorCodeOf, expectContractShape } from './plant-client.ts';
import { postRaw, type RawAnswer, sendRawText } from './raw-request.ts';

const runs = { contentTypes: 200 };

const session = useHostileSession();

describe('odd headers', () => {
  const isJson = (contentType: string) =>
    contentType.split(';', 1)[0]?.trim().toLowerCase() === 'application/json';

  it(`answer any content type with 200 for application/json (any case, parameters) and 400/40003 otherwise (${runs.contentTypes} cases)`, async () => {
    const printable = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
      maxLength: 60,
    });
    const contentType = fc.oneof(
      printable,
      fc.constantFrom(
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'Application/Json;charset=UTF-16',
        'application/json;',
        'application/json, text/plain',
        'application/jsonp',
        'application/vnd.api+json',
        'text/json',
        'text/plain',
        'multipart/form-data; boundary=plant',
        'application/x-www-form-urlencoded',
        '',
      ),
      printable.map((parameters) => `application/json;${parameters}`),
    );
    await fc.assert(
      fc.asyncProperty(contentType, async (type) => {
        const { id, body, plant } = uniquePlant();
        const answer = await postRaw(
          session.api.url,
          [
            ['Authorization', `Bearer ${session.token}`],
            ['Content-Type', type],
          ],
          body,
        );
        recordRawAnswer(session, answer, id, plant);
        // Node trims the value's surrounding spaces, as API Gateway does.
        expect(answer.status).toBe(isJson(type.trim()) ? 200 : 400);
        if (answer.status === 400)
          expect(errorCodeOf(answer)).toBe(errorCodes.unsupportedMediaType.error);
      }),
      { seed, numRuns: runs.contentTypes },
    );
  }, 120_000);

  const authorization = () => ['Authorization', `Bearer ${session.token}`] as const;
  const json = ['Content-Type', 'application/json'] as const;

  // Over Node's 16 KiB header limit the server answers before reading the rest and closes; a
  // client still writing may see the connection reset instead of the answer. Either way: no 5xx,
  // nothing stored.
  it.each([
    ['no content type at all', false, () => [authorization()]],
    [
      'repeated content types, JSON last',
      false,
      () => [authorization(), ['Content-Type', 'text/plain'], json],
    ],
    [
      'repeated content types, JSON first',
      false,
      () => [authorization(), json, ['Content-Type', 'text/plain']],
    ],
    [
      'a valid token, then a forged one',
      false,
      () => [authorization(), ['Authorization', 'Bearer forged.token.value'], json],
    ],
    [
      'a forged token, then a valid one',
      false,
      () => [['Authorization', 'Bearer forged.token.value'], authorization(), json],
    ],
    [
      '500 extra headers',
      false,
      () => [
        authorization(),
        json,
        ...Array.from({ length: 500 }, (_, index) => [`X-Extra-${index}`, 'value']),
      ],
    ],
    ['an 8 KiB header', false, () => [authorization(), json, ['X-Padding', 'p'.repeat(8 * 1024)]]],
    ['a 20 KiB header', true, () => [authorization(), json, ['X-Padding', 'p'.repeat(20 * 1024)]]],
    [
      'a 100 KiB Authorization header',
      true,
      () => [['Authorization', `Bearer ${'a'.repeat(100 * 1024)}`], json],
    ],
    [
      'Latin-1 bytes in a header value',
      false,
      () => [authorization(), json, ['X-Odd', 'caf\u00e9 \u00ff']],
    ],
  ] as const)(
    'answer %s without a 5xx, in the contract shape, storing only what they answer 200',
    async (_case, mayBeReset, headers) => {
      const { id, body, plant } = uniquePlant();
      const sentHeaders = headers() as readonly (readonly [string, string])[];
      for (const [name, value] of sentHeaders)
        if (name === 'Authorization') session.sent.push(value);
      let answer: RawAnswer;
      try {
        answer = await postRaw(session.api.url, sentHeaders, body);
      } catch (error) {
        const { code } = error as { code?: string };
        if (mayBeReset && (code === 'ECONNRESET' || code === 'EPIPE')) return;
        throw error;
      }
      recordRawAnswer(session, answer, id, plant);
      if (mayBeReset)
        expect([answer.status, errorCodeOf(answer)]).toEqual([
          400,
          gatewayErrorCodes.badRequest.error,
        ]);
    },
  );
});

describe('broken HTTP', () => {
  it.each([
    ['a request without a Host header', 'POST /plants HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}'],
    ['an unknown method token', 'PL@NT /plants HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a header line without a colon', 'POST /plants HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n'],
    ['a negative Content-Length', 'POST /plants HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'],
  ])('answers %s with 400/40000 in the contract shape', async (_case, text) => {
    session.countCase();
    const answer = await sendRawText(session.api.url, text);
    expectContractShape(answer);
    expect([answer.status, errorCodeOf(answer)]).toEqual([400, gatewayErrorCodes.badRequest.error]);
  });
});

describeAudit(session, 50);
