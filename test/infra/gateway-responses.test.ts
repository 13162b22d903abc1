import { describe, expect, it } from '@jest/globals';
import { everyErrorCode } from '../../functions/shared/errors/error-codes.ts';
import { gatewayResponses } from '../../infra/gateway-responses.ts';

describe('gateway responses', () => {
  const responses = Object.values(gatewayResponses);

  it.each(responses)('$type answers the Error body with a documented code', (response) => {
    expect(Object.keys(response.body).sort()).toEqual(['error', 'message']);
    const code = everyErrorCode().find((candidate) => candidate.error === response.body.error);
    expect(code?.statusCode).toBe(response.statusCode);
    expect(response.headers['Content-Type']).toBe('application/json');
  });

  it.each(responses)('$type says nosniff and no-store, as every answer does', (response) => {
    expect(response.headers['X-Content-Type-Options']).toBe('nosniff');
    expect(response.headers['Cache-Control']).toBe('no-store');
  });

  it('asks a client to retry a timed-out integration (503) after a second', () => {
    expect(gatewayResponses.INTEGRATION_TIMEOUT.statusCode).toBe(503);
    expect(gatewayResponses.INTEGRATION_TIMEOUT.headers['Retry-After']).toBe('1');
  });

  it('challenges a missing or invalid token with WWW-Authenticate: Bearer', () => {
    expect(gatewayResponses.UNAUTHORIZED.statusCode).toBe(401);
    expect(gatewayResponses.UNAUTHORIZED.headers['WWW-Authenticate']).toMatch(/^Bearer /);
  });

  it('answers an unknown path or method 404/40400, not 403', () => {
    expect(gatewayResponses.MISSING_AUTHENTICATION_TOKEN.statusCode).toBe(404);
    expect(gatewayResponses.MISSING_AUTHENTICATION_TOKEN.body.error).toBe(40400);
  });
});
