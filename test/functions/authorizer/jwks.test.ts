/**
 * The authorizer and its issuer's keys (JWKS): fetched once and cached, refetched (rate-limited)
 * for an unknown key id, and failing closed when the keys cannot be had.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { createHandler } from '../../../functions/authorizer/create-handler.ts';
import { createLogger } from '../../../functions/shared/platform/logger.ts';
import { startJwksServer } from '../../../local/jwks-server.ts';
import type { Jwks } from '../../../local/token-issuer.ts';
import {
  allowPolicy,
  configWith,
  createAuthorizer,
  ecKey,
  expectUnauthorized,
  jwksServer,
  rotatedKey,
  rsaKey,
  servedKeys,
  serveKeys,
  validClaims,
} from './authorizer-fixture.ts';
import { createSigningKey, signToken } from './token-factory.ts';

describe('authorizer handler', () => {
  describe('the JWKS', () => {
    it('is fetched once and cached across invocations', async () => {
      const { authorize } = createAuthorizer();
      const before = jwksServer.fetchCount;
      for (let call = 0; call < 3; call += 1) {
        await authorize(`Bearer ${signToken(rsaKey, validClaims())}`);
        await authorize(`Bearer ${signToken(ecKey, validClaims())}`);
      }
      expect(jwksServer.fetchCount - before).toBe(1);
    });

    it('is fetched again for an unknown kid, at most once per wait period', async () => {
      const authorizer = createAuthorizer();
      const before = jwksServer.fetchCount;
      await authorizer.authorize(`Bearer ${signToken(rsaKey, validClaims())}`);
      const unknown = createSigningKey('ES256', 'unknown-kid');
      await expectUnauthorized(
        `Bearer ${signToken(unknown, validClaims())}`,
        'unknown-key',
        authorizer,
      );
      expect(jwksServer.fetchCount - before).toBe(2);
      // A flood of unknown kids does not turn into a flood of fetches.
      await expectUnauthorized(
        `Bearer ${signToken(unknown, validClaims())}`,
        'jwks-refetch-wait',
        authorizer,
      );
      expect(jwksServer.fetchCount - before).toBe(2);
      // Known keys keep working from the cache meanwhile.
      await expect(
        authorizer.authorize(`Bearer ${signToken(rsaKey, validClaims())}`),
      ).resolves.toEqual(allowPolicy('client-42', 'plants/write'));
    });

    it('picks up a rotated key by refetching for its new kid', async () => {
      const { authorize } = createAuthorizer();
      const before = jwksServer.fetchCount;
      await authorize(`Bearer ${signToken(rsaKey, validClaims())}`);
      serveKeys([...servedKeys, rotatedKey]);
      try {
        await expect(authorize(`Bearer ${signToken(rotatedKey, validClaims())}`)).resolves.toEqual(
          allowPolicy('client-42', 'plants/write'),
        );
      } finally {
        serveKeys(servedKeys.filter((key) => key !== rotatedKey));
      }
      expect(jwksServer.fetchCount - before).toBe(2);
    });

    it('answers Unauthorized, never Allow, when the JWKS cannot be fetched', async () => {
      const closedPort = await findClosedPort();
      const authorizer = createAuthorizer({
        jwksUri: `http://127.0.0.1:${closedPort}/.well-known/jwks.json`,
      });
      await expectUnauthorized(
        `Bearer ${signToken(rsaKey, validClaims())}`,
        'jwks-unavailable',
        authorizer,
      );
      expect(authorizer.logLines.at(-1)).toMatchObject({ level: 'error' });
      // Within the wait period the next request fails fast, without trying the issuer again.
      await expectUnauthorized(
        `Bearer ${signToken(rsaKey, validClaims())}`,
        'jwks-refetch-wait',
        authorizer,
      );
    });

    it('answers Unauthorized well inside the authorizer timeout when the JWKS never answers', async () => {
      // Accepts the connection and never answers: a hung issuer.
      const hung = createServer(() => {});
      await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = hung.address() as AddressInfo;
        const authorizer = createAuthorizer({
          jwksUri: `http://127.0.0.1:${port}/.well-known/jwks.json`,
        });
        const started = performance.now();
        await expectUnauthorized(
          `Bearer ${signToken(rsaKey, validClaims())}`,
          'jwks-unavailable',
          authorizer,
        );
        // The Lambda timeout is 5 s; past it the gateway would answer 500 instead of 401.
        expect(performance.now() - started).toBeLessThan(3_000);
      } finally {
        hung.closeAllConnections();
        await new Promise((resolve) => hung.close(resolve));
      }
    });

    it('answers Unauthorized for an invalid JWKS, and recovers after the wait period', async () => {
      let jwks: unknown = { keys: 'not a list' };
      const server = await startJwksServer(() => jwks as Jwks);
      try {
        const authorizer = createAuthorizer({ jwksUri: server.jwksUri }, 0.2);
        const token = signToken(rsaKey, validClaims());
        await expectUnauthorized(`Bearer ${token}`, 'jwks-invalid', authorizer);
        jwks = { keys: [rsaKey.publicJwk] };
        await expectUnauthorized(`Bearer ${token}`, 'jwks-refetch-wait', authorizer);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await expect(authorizer.authorize(`Bearer ${token}`)).resolves.toEqual(
          allowPolicy('client-42', 'plants/write'),
        );
        expect(server.fetchCount).toBe(2);
      } finally {
        await server.close();
      }
    });
  });

  it('answers Unauthorized when the method ARN is not an execute-api ARN', async () => {
    const logLines: string[] = [];
    const handler = createHandler(configWith(), {
      logger: createLogger({}, (line) => logLines.push(line)),
    });
    const token = `Bearer ${signToken(rsaKey, validClaims())}`;
    await expect(
      handler({
        type: 'TOKEN',
        methodArn: 'arn:aws:lambda:eu-west-1:1:function:x',
        authorizationToken: token,
      }),
    ).rejects.toThrow(new Error('Unauthorized'));
    expect(logLines).toHaveLength(1);
  });
});

/** A port nothing listens on: bound, then released. */
async function findClosedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
