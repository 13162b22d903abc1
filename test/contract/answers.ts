/**
 * What the contract suite expects of every answer: one `openapi.yaml` documents for the
 * operation (`test/api/openapi.ts`), and, for a failure, the Error shape with its code.
 */
import { expect } from '@jest/globals';
import { expectDocumentedResponse } from '../api/openapi.ts';
import { type Answer, target } from './target.ts';

/** Expects `answer` to be documented for `operationId`; resolves its body. */
export async function expectDocumented(answer: Answer, operationId: string): Promise<unknown> {
  const bodyless = answer.status === 204 || answer.status === 304;
  const response = new Response(bodyless || answer.text === '' ? null : answer.text, {
    status: answer.status,
    headers: Object.entries(answer.headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, value] as [string, string]],
    ),
  });
  return expectDocumentedResponse(response, operationId, {
    without: target().omitsHeaders ?? [],
  });
}

/** Expects the Error shape with `code`, as `openapi.yaml` documents it for `operationId`. */
export async function expectError(
  answer: Answer,
  operationId: string,
  status: number,
  code: number,
): Promise<void> {
  expect({ operationId, status: answer.status, body: answer.text }).toEqual({
    operationId,
    status,
    body: expect.stringContaining(`"error":${code}`),
  });
  const body = (await expectDocumented(answer, operationId)) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(code);
}
