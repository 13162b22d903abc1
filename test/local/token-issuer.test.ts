import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { readAuthorizerConfig } from '../../functions/authorizer/config.ts';
import { createHandler } from '../../functions/authorizer/create-handler.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { localAuthorizerEnvironment, startJwksServer } from '../../local/jwks-server.ts';
import {
  loadOrCreateLocalKeys,
  localAudience,
  localIssuer,
  localJwks,
  localKeysDirectory,
  signLocalToken,
} from '../../local/token-issuer.ts';

const dataDirectory = mkdtempSync(join(tmpdir(), 'plant-store-issuer-'));
const keysDirectory = join(dataDirectory, 'keys');
const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:local/local/POST/plants';

afterAll(() => {
  rmSync(dataDirectory, { recursive: true, force: true });
});

function decodePart(token: string, index: number): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[index] ?? '', 'base64url').toString());
}

describe('the local token issuer', () => {
  it('creates its key pair on first use, readable by its owner only, and reuses it', () => {
    const first = loadOrCreateLocalKeys(keysDirectory);
    const keyFile = join(keysDirectory, 'local-issuer.private.pem');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(keysDirectory).mode & 0o777).toBe(0o700);
    const pem = readFileSync(keyFile, 'utf8');
    const second = loadOrCreateLocalKeys(keysDirectory);
    expect(second.kid).toBe(first.kid);
    expect(readFileSync(keyFile, 'utf8')).toBe(pem);
  });

  it('publishes the public key, and only it, in the JWKS', () => {
    const keys = loadOrCreateLocalKeys(keysDirectory);
    const jwks = localJwks(keys);
    expect(jwks).toEqual({
      keys: [
        { kty: 'RSA', n: expect.any(String), e: 'AQAB', kid: keys.kid, alg: 'RS256', use: 'sig' },
      ],
    });
    expect(JSON.stringify(jwks)).not.toMatch(/"(d|p|q|dp|dq|qi)":/);
  });

  it('signs tokens with the local issuer, audience, default scope and lifetime', () => {
    const keys = loadOrCreateLocalKeys(keysDirectory);
    const token = signLocalToken(keys);
    expect(decodePart(token, 0)).toEqual({ alg: 'RS256', typ: 'JWT', kid: keys.kid });
    const claims = decodePart(token, 1);
    expect(claims).toMatchObject({
      iss: localIssuer,
      aud: localAudience,
      sub: 'local-developer',
      scope: 'plants/read plants/write',
    });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);
    const custom = decodePart(
      signLocalToken(keys, { scope: '', subject: 'alice', expiresInSeconds: 60 }),
      1,
    );
    expect(custom).not.toHaveProperty('scope');
    expect(custom).toMatchObject({ sub: 'alice' });
    expect(Number(custom.exp) - Number(custom.iat)).toBe(60);
  });

  it('keeps its keys under PLANT_STORE_DATA_DIR, .data by default', () => {
    expect(localKeysDirectory({})).toBe(join('.data', 'keys'));
    expect(localKeysDirectory({ PLANT_STORE_DATA_DIR: '/tmp/x' })).toBe(join('/tmp/x', 'keys'));
  });
});

describe('the local JWKS server with the authorizer', () => {
  it('serves the JWKS the authorizer verifies local tokens with', async () => {
    const keys = loadOrCreateLocalKeys(keysDirectory);
    const server = await startJwksServer(localJwks(keys));
    try {
      expect(server.jwksUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\.well-known\/jwks\.json$/);
      const response = await fetch(server.jwksUri);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.json()).toEqual(localJwks(keys));
      expect((await fetch(new URL('/other', server.jwksUri))).status).toBe(404);

      const handler = createHandler(
        readAuthorizerConfig(localAuthorizerEnvironment(server.jwksUri)),
        { logger: createLogger({}, () => {}) },
      );
      const authorize = (token: string) =>
        handler({ type: 'TOKEN', methodArn, authorizationToken: `Bearer ${token}` });
      await expect(authorize(signLocalToken(keys, { subject: 'alice' }))).resolves.toMatchObject({
        principalId: 'alice',
        context: { sub: 'alice', scope: 'plants/read plants/write' },
      });
      const denied = await authorize(signLocalToken(keys, { scope: 'plants/admin' }));
      expect(denied.policyDocument.Statement[0]?.Effect).toBe('Deny');
      await expect(authorize(signLocalToken(keys, { expiresInSeconds: -60 }))).rejects.toThrow(
        'Unauthorized',
      );
    } finally {
      await server.close();
    }
  });
});
