/**
 * The deployed preflight's mapping templates, run by a Velocity engine (velocityjs) against the
 * variables API Gateway gives a mock integration: `$input.params().header` (a map of the request's
 * headers as the client spelled them) and `$context.responseOverride.header`, whose entries
 * become response headers ("Override your API's request and response parameters and status codes
 * for REST APIs", API Gateway developer guide). The answer's headers are the integration
 * response's literal parameters plus what the template put in the override.
 *
 * A Java map answers null for a header that is absent; velocityjs's null is `undefined`.
 */
import { describe, expect, it } from '@jest/globals';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Compile, parse } from 'velocityjs';
import { createPlantsApi } from './bare-plants-api.ts';

/** The preflight of `/plants` in an API allowing `allowedOrigins`. */
function preflightOf(allowedOrigins: readonly string[]) {
  const stack = new Stack();
  createPlantsApi(stack, { allowedOrigins });
  const [method] = Object.values(
    Template.fromStack(stack).findResources('AWS::ApiGateway::Method'),
  ).filter(
    (candidate) =>
      candidate.Properties.HttpMethod === 'OPTIONS' &&
      JSON.stringify(candidate.Properties.ResourceId).includes('plants') &&
      !JSON.stringify(candidate.Properties.ResourceId).includes('id'),
  );
  const integration = method?.Properties.Integration;
  const [response] = integration.IntegrationResponses;
  return {
    requestTemplate: integration.RequestTemplates['application/json'] as string,
    responseTemplate: response.ResponseTemplates?.['application/json'] as string | undefined,
    literalHeaders: Object.fromEntries(
      Object.entries(response.ResponseParameters as Record<string, string>).map(([name, value]) => [
        name.replace('method.response.header.', ''),
        value.slice(1, -1),
      ]),
    ),
  };
}

/** What API Gateway answers a preflight with these request headers: status and headers. */
function answer(preflight: ReturnType<typeof preflightOf>, requestHeaders: Record<string, string>) {
  const input = { params: () => ({ path: {}, querystring: {}, header: javaMap(requestHeaders) }) };
  const integrationRequest = JSON.parse(
    new Compile(parse(preflight.requestTemplate)).render({ input, context: {} }),
  );
  const context = { responseOverride: { header: {} as Record<string, string> } };
  if (preflight.responseTemplate !== undefined) {
    new Compile(parse(preflight.responseTemplate)).render({ input, context });
  }
  return {
    statusCode: integrationRequest.statusCode,
    headers: { ...preflight.literalHeaders, ...context.responseOverride.header },
  };
}

function javaMap(entries: Record<string, string>) {
  return { get: (name: string) => entries[name] };
}

describe('the deployed preflight, its templates evaluated', () => {
  const preflight = preflightOf(['https://app.example.com', 'https://admin.example.com']);

  it.each([
    ['Origin', 'https://app.example.com'],
    ['Origin', 'https://admin.example.com'],
    // HTTP/2 clients send header names in lower case.
    ['origin', 'https://app.example.com'],
  ])('allows %s: %s, naming it alone', (header, origin) => {
    const { statusCode, headers } = answer(preflight, {
      [header]: origin,
      'Access-Control-Request-Method': 'PATCH',
    });
    expect(statusCode).toBe(204);
    expect(headers).toEqual({
      'Access-Control-Allow-Origin': origin,
      'Access-Control-Allow-Methods': 'POST, GET, OPTIONS',
      'Access-Control-Allow-Headers':
        'Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, traceparent, tracestate',
      'Access-Control-Max-Age': '7200',
      Vary: 'Origin',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
    });
  });

  it.each([
    ['a foreign origin', { Origin: 'https://evil.example' }],
    ['an allowed origin with more after it', { Origin: 'https://app.example.com.evil.example' }],
    ['an allowed origin in another case', { Origin: 'HTTPS://APP.EXAMPLE.COM' }],
    ['an origin written as a condition', { Origin: 'x" || "" == "' }],
    ['the null origin', { Origin: 'null' }],
    ['no origin', {}],
  ])('names no origin for %s', (_, requestHeaders) => {
    const { statusCode, headers } = answer(preflight, requestHeaders);
    expect(statusCode).toBe(204);
    expect(headers['Access-Control-Allow-Origin']).toBeUndefined();
    expect(headers.Vary).toBe('Origin');
  });

  it('answers every origin with * when the stage allows any, without a template', () => {
    const open = preflightOf(['*']);
    expect(open.responseTemplate).toBeUndefined();
    expect(answer(open, { Origin: 'https://anyone.example' }).headers).toMatchObject({
      'Access-Control-Allow-Origin': '*',
    });
  });
});
