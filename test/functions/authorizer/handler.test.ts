import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import type { AuthorizerConfig } from '../../../functions/authorizer/config.ts';
import { createHandler, stageArnOf } from '../../../functions/authorizer/create-handler.ts';
import { createLogger } from '../../../functions/shared/logger.ts';
import { type JwksServer, startJwksServer } from '../../../local/jwks-server.ts';
import type { Jwks } from '../../../local/token-issuer.ts';
import {
  type Claims,
  createSigningKey,
  hmacWithPublicKeyToken,
  nowInSeconds,
  signToken,
  type TestSigningKey,
  unsignedToken,
} from './token-factory.ts';

const issuer = 'https://issuer.plant-store.test';
const audience = 'plant-store-test';
const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/dev/POST/plants';
const stageArn = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/dev';
const apiWide = `${stageArn}/*/*`;
/** What each scope grants, as the route table says: the method ARNs of its routes. */
const readRoutes = [`${stageArn}/GET/plants`, `${stageArn}/GET/plants/*`];
const writeRoutes = [
  `${stageArn}/POST/plants`,
  `${stageArn}/PUT/plants/*`,
  `${stageArn}/PATCH/plants/*`,
  `${stageArn}/DELETE/plants/*`,
];
const allRoutes = [
  `${stageArn}/POST/plants`,
  `${stageArn}/GET/plants`,
  `${stageArn}/GET/plants/*`,
  `${stageArn}/PUT/plants/*`,
  `${stageArn}/PATCH/plants/*`,
  `${stageArn}/DELETE/plants/*`,
];

let rsaKey: TestSigningKey;
let ecKey: TestSigningKey;
let rsaKeyWithoutAlgorithm: TestSigningKey;
let rotatedKey: TestSigningKey;
let weakRsaKey: TestSigningKey;
let foreignKeyWithIssuersKid: TestSigningKey;
let servedKeys: TestSigningKey[];
let jwksServer: JwksServer;

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

function validClaims(overrides: Claims = {}): Claims {
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

function configWith(overrides: Partial<AuthorizerConfig> = {}): AuthorizerConfig {
  return {
    issuer,
    audiences: [audience],
    audienceClaim: 'aud',
    jwksUri: jwksServer.jwksUri,
    ...overrides,
  };
}

/** A fresh authorizer (its own JWKS cache) whose log lines the test can read. */
function createAuthorizer(overrides: Partial<AuthorizerConfig> = {}, jwksRefetchWaitSeconds = 10) {
  const logLines: Record<string, unknown>[] = [];
  const logger = createLogger({}, (line) => logLines.push(JSON.parse(line)));
  const handler = createHandler(configWith(overrides), { logger, jwksRefetchWaitSeconds });
  const authorize = (authorizationToken: string | undefined) =>
    handler({ type: 'TOKEN', methodArn, authorizationToken: authorizationToken as string });
  const reasons = () =>
    logLines.map((line) => line.reason).filter((reason) => reason !== undefined);
  return { authorize, logLines, reasons };
}

/** Expects a 401 logged for `reason`: the only outcome that is not a policy. */
async function expectUnauthorized(
  authorizationToken: string | undefined,
  reason: string,
  authorizer = createAuthorizer(),
) {
  await expect(authorizer.authorize(authorizationToken)).rejects.toThrow(new Error('Unauthorized'));
  expect(authorizer.reasons().at(-1)).toBe(reason);
}

function allowPolicy(
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
  };
}

describe('authorizer handler', () => {
  describe('allows a valid token with the required scope', () => {
    it('answers Allow for the routes its scopes grant, with the subject and scopes in the context', async () => {
      const { authorize, logLines } = createAuthorizer();
      const token = signToken(rsaKey, validClaims({ scope: 'openid plants/write' }));
      await expect(authorize(`Bearer ${token}`)).resolves.toEqual(
        allowPolicy('client-42', 'openid plants/write'),
      );
      expect(logLines).toEqual([]);
    });

    it('accepts ES256 tokens and any case of the scheme name', async () => {
      const { authorize } = createAuthorizer();
      const token = signToken(ecKey, validClaims());
      for (const scheme of ['bearer', 'BEARER', 'Bearer  ']) {
        await expect(authorize(`${scheme} ${token}`)).resolves.toEqual(
          allowPolicy('client-42', 'plants/write'),
        );
      }
    });

    it('accepts an aud array that names the audience', async () => {
      const { authorize } = createAuthorizer();
      const token = signToken(rsaKey, validClaims({ aud: ['other-api', audience] }));
      await expect(authorize(`Bearer ${token}`)).resolves.toEqual(
        allowPolicy('client-42', 'plants/write'),
      );
    });

    it('tolerates 5 seconds of clock skew on exp and nbf', async () => {
      const { authorize } = createAuthorizer();
      const now = nowInSeconds();
      const token = signToken(rsaKey, validClaims({ exp: now - 2, nbf: now + 2 }));
      await expect(authorize(`Bearer ${token}`)).resolves.toEqual(
        allowPolicy('client-42', 'plants/write'),
      );
    });
  });

  describe('answers Unauthorized (401) without a usable bearer token', () => {
    it('when the Authorization header is missing', async () => {
      await expectUnauthorized(undefined, 'missing-bearer-token');
    });

    it('when the credential is empty', async () => {
      await expectUnauthorized('', 'missing-bearer-token');
      await expectUnauthorized('Bearer', 'missing-bearer-token');
      await expectUnauthorized('Bearer    ', 'missing-bearer-token');
    });

    it('when the scheme is not Bearer', async () => {
      const token = signToken(rsaKey, validClaims());
      await expectUnauthorized(
        `Basic ${Buffer.from('a:b').toString('base64')}`,
        'missing-bearer-token',
      );
      await expectUnauthorized(`Token ${token}`, 'missing-bearer-token');
      await expectUnauthorized(token, 'missing-bearer-token');
    });

    it('when the token is malformed', async () => {
      await expectUnauthorized('Bearer not-a-jwt', 'malformed');
      await expectUnauthorized('Bearer a.b.c', 'malformed');
      await expectUnauthorized(
        `Bearer ${signToken(rsaKey, validClaims())} extra`,
        'missing-bearer-token',
      );
    });
  });

  describe('answers Unauthorized (401) for forged tokens', () => {
    it('when the payload was changed after signing', async () => {
      const [header, , signature] = signToken(rsaKey, validClaims()).split('.');
      const forgedPayload = Buffer.from(JSON.stringify(validClaims({ sub: 'admin' }))).toString(
        'base64url',
      );
      await expectUnauthorized(`Bearer ${header}.${forgedPayload}.${signature}`, 'bad-signature');
    });

    it("when another key signed it under the issuer's kid", async () => {
      const token = signToken(foreignKeyWithIssuersKid, validClaims());
      await expectUnauthorized(`Bearer ${token}`, 'bad-signature');
    });

    it('when it says alg none', async () => {
      // Without a signature part the parser already refuses it; with one, the allowlist does.
      await expectUnauthorized(
        `Bearer ${unsignedToken(validClaims(), { kid: rsaKey.kid })}`,
        'malformed',
      );
      await expectUnauthorized(
        `Bearer ${unsignedToken(validClaims(), { kid: rsaKey.kid }, 'AAAA')}`,
        'algorithm-not-allowed',
      );
      await expectUnauthorized(
        `Bearer ${unsignedToken(validClaims(), { kid: ecKey.kid }, 'AAAA')}`,
        'algorithm-not-allowed',
      );
    });

    it('when it is HS256 keyed with the public key (algorithm confusion)', async () => {
      // Against a key that declares RS256, and against one that declares no algorithm at all.
      await expectUnauthorized(
        `Bearer ${hmacWithPublicKeyToken(rsaKey, validClaims())}`,
        'algorithm-not-allowed',
      );
      await expectUnauthorized(
        `Bearer ${hmacWithPublicKeyToken(rsaKeyWithoutAlgorithm, validClaims())}`,
        'algorithm-not-allowed',
      );
    });

    it("when its algorithm does not belong to the key's type", async () => {
      // An RSA signature under an ES256 header would verify (the digest is the same); it is refused.
      const token = signToken(rsaKeyWithoutAlgorithm, validClaims(), { alg: 'ES256' });
      await expectUnauthorized(`Bearer ${token}`, 'algorithm-not-allowed');
    });
  });

  describe('answers Unauthorized (401) for invalid claims', () => {
    it('when the token has expired', async () => {
      const token = signToken(rsaKey, validClaims({ exp: nowInSeconds() - 60 }));
      await expectUnauthorized(`Bearer ${token}`, 'expired');
    });

    it('when the token is not valid yet', async () => {
      const token = signToken(rsaKey, validClaims({ nbf: nowInSeconds() + 60 }));
      await expectUnauthorized(`Bearer ${token}`, 'not-yet-valid');
    });

    it('when the token never expires', async () => {
      const token = signToken(rsaKey, validClaims({ exp: undefined }));
      await expectUnauthorized(`Bearer ${token}`, 'no-expiry');
    });

    it('when the token has no subject', async () => {
      const token = signToken(rsaKey, validClaims({ sub: undefined }));
      await expectUnauthorized(`Bearer ${token}`, 'no-subject');
    });

    it('when another issuer issued it', async () => {
      const token = signToken(rsaKey, validClaims({ iss: 'https://evil.example' }));
      await expectUnauthorized(`Bearer ${token}`, 'wrong-issuer');
    });

    it('when it is meant for another audience', async () => {
      await expectUnauthorized(
        `Bearer ${signToken(rsaKey, validClaims({ aud: 'other-api' }))}`,
        'wrong-audience',
      );
      await expectUnauthorized(
        `Bearer ${signToken(rsaKey, validClaims({ aud: undefined }))}`,
        'wrong-audience',
      );
    });

    it.each([
      ['exp', 1e300],
      ['nbf', 1e300],
      ['iat', 1e300],
      ['exp', -1],
      ['exp', nowInSeconds() + 400 * 24 * 3600],
    ])('when %s is %d, a time no real token has', async (claim, value) => {
      const authorizer = createAuthorizer();
      await expectUnauthorized(
        `Bearer ${signToken(rsaKey, validClaims({ [claim]: value }))}`,
        'implausible-time',
        authorizer,
      );
      // The client's doing, not a fault to page anyone about.
      expect(authorizer.logLines.map((line) => line.level)).toEqual(['warn']);
    });

    it('when exp is not a number', async () => {
      await expectUnauthorized(
        `Bearer ${signToken(rsaKey, validClaims({ exp: String(nowInSeconds() + 60) }))}`,
        'malformed',
      );
    });

    it('when its header names critical extensions (crit), which this verifier does not know', async () => {
      for (const crit of [['exp'], ['b64'], [], 'exp']) {
        await expectUnauthorized(
          `Bearer ${signToken(rsaKey, validClaims(), { crit, exp: 1 })}`,
          'critical-header',
        );
      }
    });

    it('when an RSA key under 2048 bits signed it, even one the JWKS publishes', async () => {
      await expectUnauthorized(`Bearer ${signToken(weakRsaKey, validClaims())}`, 'weak-key');
    });

    it('when the scope is missing but another claim is wrong too: 401 wins over 403', async () => {
      const token = signToken(rsaKey, validClaims({ aud: 'other-api', scope: 'plants/read' }));
      await expectUnauthorized(`Bearer ${token}`, 'wrong-audience');
    });
  });

  describe('with Cognito access tokens (audience claim client_id)', () => {
    const cognito = {
      audienceClaim: 'client_id',
      audiences: ['app-client-1', 'app-client-2'],
    } as const;

    it('allows a token whose client_id is one of the app clients', async () => {
      const { authorize } = createAuthorizer(cognito);
      const token = signToken(
        rsaKey,
        validClaims({
          aud: undefined,
          client_id: 'app-client-2',
          sub: 'app-client-2',
          token_use: 'access',
        }),
      );
      await expect(authorize(`Bearer ${token}`)).resolves.toEqual(
        allowPolicy('app-client-2', 'plants/write'),
      );
    });

    it('rejects another client, and an ID token (aud, no client_id)', async () => {
      const otherClient = signToken(
        rsaKey,
        validClaims({ aud: undefined, client_id: 'app-client-9' }),
      );
      await expectUnauthorized(`Bearer ${otherClient}`, 'wrong-client', createAuthorizer(cognito));
      const idToken = signToken(rsaKey, validClaims({ aud: 'app-client-1', token_use: 'id' }));
      await expectUnauthorized(`Bearer ${idToken}`, 'wrong-client', createAuthorizer(cognito));
    });
  });

  describe('allows exactly the routes the scopes grant, so a cached result fits every method', () => {
    it.each([
      ['plants/read', readRoutes],
      ['plants/write', writeRoutes],
      ['plants/read plants/write', allRoutes],
      ['plants/write openid plants/read', allRoutes],
    ])('with scope "%s"', async (scope, resources) => {
      const { authorize } = createAuthorizer();
      const result = await authorize(`Bearer ${signToken(rsaKey, validClaims({ scope }))}`);
      expect(result).toEqual(allowPolicy('client-42', scope, resources));
    });
  });

  describe('answers Deny (403) for a valid token that grants no operation', () => {
    it.each([
      ['another scope', 'plants/admin'],
      ['a scope that merely starts like one', 'plants/writer plants/reader'],
      ['an empty scope', ''],
      ['no scope claim', undefined],
    ])('with %s', async (_name, scope) => {
      const { authorize, logLines } = createAuthorizer();
      const result = await authorize(`Bearer ${signToken(rsaKey, validClaims({ scope }))}`);
      expect(result).toEqual({
        principalId: 'client-42',
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: [apiWide] }],
        },
        context: { sub: 'client-42', scope: scope ?? '' },
      });
      expect(logLines).toEqual([expect.objectContaining({ level: 'warn', sub: 'client-42' })]);
    });
  });

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
      servedKeys = [...servedKeys, rotatedKey];
      try {
        await expect(authorize(`Bearer ${signToken(rotatedKey, validClaims())}`)).resolves.toEqual(
          allowPolicy('client-42', 'plants/write'),
        );
      } finally {
        servedKeys = servedKeys.filter((key) => key !== rotatedKey);
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

describe('the Lambda entry', () => {
  it('reads its configuration from the environment as it loads', async () => {
    const settings = {
      TOKEN_ISSUER: issuer,
      TOKEN_AUDIENCE: audience,
      JWKS_URI: jwksServer.jwksUri,
    };
    const saved = { ...process.env };
    Object.assign(process.env, settings);
    try {
      const { handler } = await import('../../../functions/authorizer/handler.ts');
      const token = `Bearer ${signToken(rsaKey, validClaims())}`;
      await expect(
        handler({ type: 'TOKEN', methodArn, authorizationToken: token }),
      ).resolves.toEqual(allowPolicy('client-42', 'plants/write'));
    } finally {
      for (const name of Object.keys(settings)) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });
});

describe('stageArnOf', () => {
  it('names the stage of a method ARN', () => {
    expect(stageArnOf(methodArn)).toBe(stageArn);
    expect(stageArnOf('arn:aws-cn:execute-api:cn-north-1:1:api/prod/GET/')).toBe(
      'arn:aws-cn:execute-api:cn-north-1:1:api/prod',
    );
  });

  it('refuses anything else', () => {
    for (const arn of ['', 'arn:aws:execute-api:eu-west-1:1:api', 'arn:aws:s3:::bucket/dev/GET/']) {
      expect(stageArnOf(arn)).toBeUndefined();
    }
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
