/**
 * The authorizer's test fixture: signing keys of every kind a test needs (made before the
 * importing file's tests), a JWKS server on 127.0.0.1 serving the issuer's keys, and an
 * authorizer per test whose log lines the test reads.
 */
import { afterAll, beforeAll, expect } from '@jest/globals';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import {
  clientKeyValue,
  type RegisterClientKey,
} from '../../../functions/authorizer/client-keys.ts';
import type { AuthorizerConfig } from '../../../functions/authorizer/config.ts';
import { createHandler } from '../../../functions/authorizer/create-handler.ts';
import { createLogger } from '../../../functions/shared/platform/logger.ts';
import { type JwksServer, startJwksServer } from '../../../local/jwks-server.ts';
import type { Jwks } from '../../../local/token-issuer.ts';
import {
  type Claims,
  createSigningKey,
  nowInSeconds,
  type TestSigningKey,
} from './token-factory.ts';

export const issuer = 'https://issuer.plant-store.test';
export const audience = 'plant-store-test';
export const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/dev/POST/plants';
export const stageArn = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/dev';
export const apiWide = `${stageArn}/*/*`;
/** What each scope grants, as the route table says: the method ARNs of its routes. */
export const readRoutes = [`${stageArn}/GET/plants`, `${stageArn}/GET/plants/*`];
export const writeRoutes = [
  `${stageArn}/POST/plants`,
  `${stageArn}/PUT/plants/*`,
  `${stageArn}/PATCH/plants/*`,
  `${stageArn}/DELETE/plants/*`,
];
export const allRoutes = [
  `${stageArn}/POST/plants`,
  `${stageArn}/GET/plants`,
  `${stageArn}/GET/plants/*`,
  `${stageArn}/PUT/plants/*`,
  `${stageArn}/PATCH/plants/*`,
  `${stageArn}/DELETE/plants/*`,
];

export let rsaKey: TestSigningKey;
export let ecKey: TestSigningKey;
export let rsaKeyWithoutAlgorithm: TestSigningKey;
export let rotatedKey: TestSigningKey;
export let weakRsaKey: TestSigningKey;
export let foreignKeyWithIssuersKid: TestSigningKey;
export let servedKeys: TestSigningKey[];

/** Changes the keys the JWKS server serves (a rotation). */
export function serveKeys(keys: TestSigningKey[]): void {
  servedKeys = keys;
}
export let jwksServer: JwksServer;

beforeAll(async () => {
  rsaKey = createSigningKey('RS256', 'rsa-1');
  ecKey = createSigningKey('ES256', 'ec-1', { declareAlgorithm: false });
  rsaKeyWithoutAlgorithm = createSigningKey('RS256', 'rsa-no-alg', { declareAlgorithm: false });
  rotatedKey = createSigningKey('RS256', 'rsa-2');
  foreignKeyWithIssuersKid = createSigningKey('RS256', rsaKey.kid);
  weakRsaKey = createSigningKey('RS256', 'rsa-1024', { modulusLength: 1024 });
  servedKeys = [rsaKey, ecKey, rsaKeyWithoutAlgorithm, weakRsaKey];
  jwksServer = await startJwksServer(
    () => ({ keys: servedKeys.map((key) => key.publicJwk) }) as unknown as Jwks,
  );
});

afterAll(async () => {
  await jwksServer.close();
});

export function validClaims(overrides: Claims = {}): Claims {
  const now = nowInSeconds();
  return {
    iss: issuer,
    aud: audience,
    sub: 'client-42',
    scope: 'plants/write',
    iat: now,
    exp: now + 300,
    ...overrides,
  };
}

export function configWith(overrides: Partial<AuthorizerConfig> = {}): AuthorizerConfig {
  return {
    issuer,
    audiences: [audience],
    audienceClaim: 'aud',
    jwksUri: jwksServer.jwksUri,
    ...overrides,
  };
}

/** A fresh authorizer (its own JWKS cache) whose log lines the test can read. */
export function createAuthorizer(
  overrides: Partial<AuthorizerConfig> = {},
  jwksRefetchWaitSeconds = 10,
  registerClientKey?: RegisterClientKey,
) {
  const logLines: Record<string, unknown>[] = [];
  const logger = createLogger({}, (line) => logLines.push(JSON.parse(line)));
  const handler = createHandler(configWith(overrides), {
    logger,
    jwksRefetchWaitSeconds,
    ...(registerClientKey === undefined ? {} : { registerClientKey }),
  });
  const authorize = (authorizationToken: string | undefined) =>
    handler({ type: 'TOKEN', methodArn, authorizationToken: authorizationToken as string });
  const reasons = () =>
    logLines.map((line) => line.reason).filter((reason) => reason !== undefined);
  return { authorize, logLines, reasons };
}

/** Expects a 401 logged for `reason`: the only outcome that is not a policy. */
export async function expectUnauthorized(
  authorizationToken: string | undefined,
  reason: string,
  authorizer = createAuthorizer(),
) {
  await expect(authorizer.authorize(authorizationToken)).rejects.toThrow(new Error('Unauthorized'));
  expect(authorizer.reasons().at(-1)).toBe(reason);
}

export function allowPolicy(
  sub: string,
  scope: string,
  resources: readonly string[] = writeRoutes,
): APIGatewayAuthorizerResult {
  return {
    principalId: sub,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: [...resources] }],
    },
    context: { sub, scope },
    // The test issuer's client `sub`, in the local plan (no usage plan named).
    usageIdentifierKey: clientKeyValue('local', `${issuer} ${sub}`),
  };
}
