import { describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import {
  checkAllowedOrigins,
  corsHeaders,
  gatewayAllowOrigin,
  isOriginAllowed,
} from '../../../../functions/shared/http/cors.ts';
import { PlantStoreStack } from '../../../../infra/plant-store-stack.ts';
import { stages } from '../../../../infra/stages.ts';

describe('allowed origins', () => {
  it('match exactly, any port where the rule says so, and anything for *', () => {
    const local = ['http://localhost:*', 'https://app.example.com'];
    expect(isOriginAllowed('http://localhost:5173', local)).toBe(true);
    expect(isOriginAllowed('http://localhost', local)).toBe(true);
    expect(isOriginAllowed('https://app.example.com', local)).toBe(true);
    for (const origin of [
      'http://localhost.evil.example:80',
      'http://localhost:5173.evil.example',
      'https://localhost:5173',
      'https://app.example.com.evil.example',
      'http://localhost:99999',
      'http://localhost:00080',
      'http://localhost:*',
      'http://localhost:',
      'http://app.example.com',
      'null',
    ]) {
      expect([origin, isOriginAllowed(origin, local)]).toEqual([origin, false]);
    }
    expect(isOriginAllowed('https://anything.example', ['*'])).toBe(true);
  });

  it('are checked: origins only, * and any port only where allowed', () => {
    const strict = { anyOrigin: false, anyPort: false };
    expect(
      checkAllowedOrigins(['https://app.example.com', 'http://localhost:5173'], strict),
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(() => checkAllowedOrigins(['*'], strict)).toThrow('"*" (any origin) is not allowed');
    expect(() => checkAllowedOrigins(['http://localhost:*'], strict)).toThrow('is not an origin');
    for (const origin of [
      'https://app.example.com/',
      'app.example.com',
      'HTTPS://A.EXAMPLE',
      'ftp://x',
    ]) {
      expect(() => checkAllowedOrigins([origin], { anyOrigin: true, anyPort: true })).toThrow(
        `"${origin}" is not an origin`,
      );
    }
  });

  it('give the CORS headers only to an allowed origin, and Vary: Origin whenever any is allowed', () => {
    const allowed = ['https://app.example.com'];
    expect(corsHeaders('https://app.example.com', allowed)).toEqual({
      'Access-Control-Allow-Origin': 'https://app.example.com',
      'Access-Control-Expose-Headers':
        'ETag, Idempotent-Replayed, Link, Retry-After, traceresponse, WWW-Authenticate, x-amzn-RequestId',
      Vary: 'Origin',
    });
    expect(corsHeaders('https://evil.example', allowed)).toEqual({ Vary: 'Origin' });
    expect(corsHeaders(undefined, allowed)).toEqual({ Vary: 'Origin' });
    expect(corsHeaders('https://app.example.com', [])).toEqual({});
    expect(corsHeaders('https://x.example', ['*'])['Access-Control-Allow-Origin']).toBe('*');
  });

  it('name one origin in the gateway’s own answers when there is one, the request’s otherwise', () => {
    expect(gatewayAllowOrigin([])).toBeUndefined();
    expect(gatewayAllowOrigin(['https://a.example'])).toEqual({ literal: 'https://a.example' });
    expect(gatewayAllowOrigin(['*', 'https://a.example'])).toEqual({ literal: '*' });
    expect(gatewayAllowOrigin(['https://a.example', 'https://b.example'])).toBe('request-origin');
    expect(gatewayAllowOrigin(['http://localhost:*'])).toBe('request-origin');
  });

  it('refuse * in a production-like stage before anything is built', () => {
    const build =
      (cors: { allowedOrigins: readonly string[] }, base = stages.prod) =>
      () =>
        new PlantStoreStack(new App(), 'PlantStore-test', { stage: { ...base, cors } });
    expect(build({ allowedOrigins: ['*'] })).toThrow(
      'Stage prod, cors.allowedOrigins: "*" (any origin) is not allowed here.',
    );
    expect(build({ allowedOrigins: ['https://app.example.com/path'] }, stages.dev)).toThrow(
      'Stage dev, cors.allowedOrigins: "https://app.example.com/path" is not an origin',
    );
  });
});
