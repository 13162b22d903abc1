/**
 * What every function answer carries, whatever the work answered: `X-Content-Type-Options:
 * nosniff`; `Cache-Control: no-store`, or `private, no-cache` with an ETag (a browser may keep the
 * plant but must revalidate); no `Content-Type` on a 204; and `Retry-After` on a 503.
 */
import { describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { StoreUnavailableError } from '../../../../functions/shared/errors/errors.ts';
import { jsonResponse } from '../../../../functions/shared/http/api-responses.ts';
import { createRouteHandler } from '../../../../functions/shared/http/route-handler.ts';
import { createLogger } from '../../../../functions/shared/platform/logger.ts';
import { createLambdaContext, createPlantsEvent } from '../../../support/api-gateway-event.ts';

const quiet = createLogger({}, () => {});

async function answer(work: () => Promise<APIGatewayProxyResult>, allowedOrigins: string[] = []) {
  const handler = createRouteHandler('test', { logger: quiet, allowedOrigins }, work);
  const event: APIGatewayProxyEvent = createPlantsEvent('GET', {
    headers: { Origin: 'http://localhost:5173' },
  });
  return (await handler(event, createLambdaContext())) as APIGatewayProxyResult;
}

describe('every answer of a function', () => {
  it('says nosniff and no-store on an answer without an ETag', async () => {
    const { headers } = await answer(async () => jsonResponse(200, []));
    expect(headers).toMatchObject({
      'Content-Type': 'application/json',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
    });
  });

  it('says private, no-cache on an answer with an ETag, and on its 304', async () => {
    const ok = await answer(async () => jsonResponse(200, {}, { ETag: '"7"' }));
    expect(ok.headers).toMatchObject({
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'private, no-cache',
    });
    const notModified = await answer(async () => ({
      statusCode: 304,
      headers: { ETag: '"7"' },
      body: '',
    }));
    expect(notModified.headers?.['Cache-Control']).toBe('private, no-cache');
    expect(notModified.headers).not.toHaveProperty('Content-Type');
  });

  it('gives a 204 no Content-Type, and the rest', async () => {
    const { headers } = await answer(async () => ({
      statusCode: 204,
      headers: { 'Content-Type': 'application/json' },
      body: '',
    }));
    expect(headers).not.toHaveProperty('Content-Type');
    expect(headers).toMatchObject({
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
    });
  });

  it('says the same on a failure, and Retry-After: 1 on a 503, with the CORS headers', async () => {
    const unavailable = await answer(async () => {
      throw new StoreUnavailableError();
    }, ['http://localhost:5173']);
    expect(unavailable.statusCode).toBe(503);
    expect(unavailable.headers).toMatchObject({
      'Retry-After': '1',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      'Access-Control-Allow-Origin': 'http://localhost:5173',
    });
    const fault = await answer(async () => {
      throw new TypeError('boom');
    });
    expect(fault.statusCode).toBe(500);
    expect(fault.headers).toMatchObject({
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
    });
    expect(fault.headers).not.toHaveProperty('Retry-After');
  });

  it('answers 503/50300 with Retry-After when a dependency is slow or unavailable, whichever it is', async () => {
    const refusals = [
      // SQS, KMS or Secrets Manager answering 503, or throttling after the SDK's retries.
      Object.assign(new Error('Service Unavailable'), {
        name: 'ServiceUnavailable',
        $metadata: { httpStatusCode: 503 },
      }),
      Object.assign(new Error('Rate exceeded'), {
        name: 'ThrottlingException',
        $metadata: { httpStatusCode: 400 },
      }),
      // A call that timed out, or whose connection was refused.
      Object.assign(new Error('timed out'), { name: 'TimeoutError' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4566'), { code: 'ECONNREFUSED' }),
    ];
    for (const refusal of refusals) {
      const unavailable = await answer(async () => {
        throw refusal;
      });
      expect([refusal.name, unavailable.statusCode, unavailable.headers?.['Retry-After']]).toEqual([
        refusal.name,
        503,
        '1',
      ]);
      expect(JSON.parse(unavailable.body)).toEqual({
        error: 50300,
        message: 'The plant store is temporarily unavailable; it is safe to retry.',
      });
    }
    // A refusal that is ours to fix (no permission) stays a fault.
    const denied = await answer(async () => {
      throw Object.assign(new Error('not authorized'), {
        name: 'AccessDeniedException',
        $metadata: { httpStatusCode: 400 },
      });
    });
    expect(denied.statusCode).toBe(500);
  });
});
