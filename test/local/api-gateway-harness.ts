/**
 * The gateway stand-in started around a stand-in authorizer (the token names the outcome) and a
 * function that echoes the event it got, and requests as tests send them.
 */
import { connect } from 'node:net';
import { expect } from '@jest/globals';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { gatewayResponses } from '../../infra/gateway-responses.ts';
import {
  type ApiGateway,
  type ApiGatewayOptions,
  type ProxyIntegrationHandler,
  startApiGateway,
} from '../../local/api-gateway/gateway.ts';

/** A stand-in authorizer: the token names the outcome, as the real one decides from a JWT. */
export function fakeAuthorizer(calls: APIGatewayTokenAuthorizerEvent[]) {
  return async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    calls.push(event);
    const stageArn = event.methodArn.split('/').slice(0, 2).join('/');
    const policy = (effect: string, resource: string, context?: Record<string, unknown>) =>
      ({
        principalId: 'client-1',
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }],
        },
        context,
      }) as APIGatewayAuthorizerResult;
    switch (event.authorizationToken) {
      case 'Bearer allow':
        return policy('Allow', `${stageArn}/*/*`, { sub: 'client-1', scope: 'plants/write' });
      case 'Bearer deny':
        return policy('Deny', `${stageArn}/*/*`);
      case 'Bearer allow-get-only':
        return policy('Allow', `${stageArn}/GET/*`);
      case 'Bearer nested-context':
        return policy('Allow', `${stageArn}/*/*`, { claims: { sub: 'client-1' } });
      case 'Bearer broken':
        throw new TypeError('cannot read properties of undefined');
      case 'Bearer hang':
        return new Promise(() => {});
      default:
        throw new Error('Unauthorized');
    }
  };
}

/** Echoes the proxy event it received, so tests can look at it. */
export const echo: ProxyIntegrationHandler = async (event) => ({
  statusCode: 200,
  body: JSON.stringify(event),
});

export interface Started {
  gateway: ApiGateway;
  authorizerCalls: APIGatewayTokenAuthorizerEvent[];
  logLines: string[];
}

export async function startWith(
  handler: ProxyIntegrationHandler,
  options: Partial<ApiGatewayOptions> = {},
): Promise<Started> {
  const authorizerCalls: APIGatewayTokenAuthorizerEvent[] = [];
  const logLines: string[] = [];
  const gateway = await startApiGateway({
    port: 0,
    routes: [
      { httpMethod: 'POST', resourcePath: '/plants', functionName: 'create-plant', handler },
      { httpMethod: 'GET', resourcePath: '/plants/{id}', functionName: 'get-plant', handler },
    ],
    authorizer: fakeAuthorizer(authorizerCalls),
    logger: createLogger({}, (line) => logLines.push(line)),
    ...options,
  });
  return { gateway, authorizerCalls, logLines };
}

export function post(
  gateway: ApiGateway,
  token: string | undefined,
  body = '{"id":1}',
  path = '/plants',
) {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(token === undefined ? {} : { Authorization: token }),
    },
    body,
  });
}

export async function expectGatewayResponse(
  response: Response,
  type: keyof typeof gatewayResponses,
): Promise<void> {
  const expected = gatewayResponses[type];
  expect(response.status).toBe(expected.statusCode);
  for (const [name, value] of Object.entries(expected.headers)) {
    expect(response.headers.get(name)).toBe(value);
  }
  expect(await response.json()).toEqual(expected.body);
}

/** Sends a request line and headers as written (curl and fetch would normalise them). */
export function rawRequest(
  gateway: ApiGateway,
  requestLine: string,
  headers: readonly string[] = [],
): Promise<{ status: number; body: string; headers: Record<string, string> }> {
  const head = [requestLine, 'Host: 127.0.0.1', 'Authorization: Bearer allow', ...headers];
  return new Promise((resolve, reject) => {
    const socket = connect(gateway.port, '127.0.0.1', () => {
      socket.end(`${head.join('\r\n')}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('utf8');
    });
    socket.on('end', () => {
      const [head = '', body = ''] = answer.split(/\r\n\r\n/);
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const answerHeaders = Object.fromEntries(
        headerLines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
        }),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), body, headers: answerHeaders });
    });
    socket.on('error', reject);
  });
}
