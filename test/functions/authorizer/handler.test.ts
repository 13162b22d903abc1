import { describe, expect, it } from '@jest/globals';
import { clientKeyValue, sharedClient } from '../../../functions/authorizer/client-keys.ts';
import { stageArnOf } from '../../../functions/authorizer/create-handler.ts';
import {
  allowPolicy,
  allRoutes,
  apiWide,
  audience,
  createAuthorizer,
  ecKey,
  expectUnauthorized,
  foreignKeyWithIssuersKid,
  issuer,
  jwksServer,
  methodArn,
  readRoutes,
  rsaKey,
  rsaKeyWithoutAlgorithm,
  stageArn,
  validClaims,
  weakRsaKey,
  writeRoutes,
} from './authorizer-fixture.ts';
import {
  createSigningKey as createKey,
  hmacWithPublicKeyToken,
  nowInSeconds,
  signToken,
  unsignedToken,
} from './token-factory.ts';

describe('authorizer handler', () => {
  describe('names the client’s API key, which the usage plan throttles per client', () => {
    const keyOf = async (claims: Record<string, unknown>, authorizer = createAuthorizer()) =>
      (await authorizer.authorize(`Bearer ${signToken(rsaKey, validClaims(claims))}`))
        .usageIdentifierKey;

    it('gives every token of a client the same key, and another client another', async () => {
      const first = await keyOf({ exp: nowInSeconds() + 100 });
      expect(await keyOf({ exp: nowInSeconds() + 200, scope: 'plants/read' })).toBe(first);
      expect(await keyOf({ sub: 'client-43' })).not.toBe(first);
      // A Cognito user's tokens count against their app client; another issuer is another client.
      const users = [{ sub: 'user-1' }, { sub: 'user-2' }].map((claims) => ({
        ...claims,
        client_id: 'app-7',
      }));
      const [one, two] = await Promise.all(users.map((claims) => keyOf(claims)));
      expect(one).toBe(two);
      expect(one).toBe(clientKeyValue('local', `${issuer} app-7`));
      expect(await keyOf({ azp: 'app-7', sub: 'user-3' })).toBe(one);
    });

    it('adds the key to the named usage plan before it answers, and counts the client as the shared client while it cannot', async () => {
      const registered: string[] = [];
      let failing = false;
      const authorizer = createAuthorizer(
        { usagePlanName: 'plant-store-dev-clients' },
        10,
        async (value) => {
          if (failing) throw new Error('TooManyRequestsException');
          registered.push(value);
          return value;
        },
      );
      const own = clientKeyValue('plant-store-dev-clients', `${issuer} client-42`);
      expect(await keyOf({}, authorizer)).toBe(own);
      expect(registered).toEqual([own]);
      failing = true;
      expect(await keyOf({}, authorizer)).toBe(
        clientKeyValue('plant-store-dev-clients', sharedClient),
      );
      // A warning counted apart: not the authorizer failing (Authorizer-Failures, the JWKS).
      expect(authorizer.logLines.at(-1)).toMatchObject({
        level: 'warn',
        message: 'Could not add the client to the usage plan; counting it as the shared client',
      });
    });
  });

  describe('allows a valid token with the required scope', () => {
    it('answers Allow for the routes its scopes grant, with the subject and scopes in the context', async () => {
      const { authorize, logLines } = createAuthorizer();
      const token = signToken(rsaKey, validClaims({ scope: 'openid plants/write' }));
      await expect(authorize(`Bearer ${token}`)).resolves.toEqual(
        allowPolicy('client-42', 'openid plants/write'),
      );
      expect(logLines).toEqual([]);
    });

    it('lets webhooks/manage alone manage endpoints, but not point one at plant events: creating, changing and recovering need plants/read too', async () => {
      const { authorize } = createAuthorizer();
      const resourcesOf = async (scope: string) => {
        const token = signToken(rsaKey, validClaims({ scope }));
        const result = await authorize(`Bearer ${token}`);
        const [statement] = result.policyDocument.Statement as { Resource: string[] }[];
        return (statement?.Resource ?? []).map((resource) => resource.replace(/^.*?\/dev\//, ''));
      };
      const managing = await resourcesOf('webhooks/manage');
      const pointing = [
        'POST/webhook-endpoints',
        'PATCH/webhook-endpoints/*',
        'POST/webhook-endpoints/*/recover',
      ];
      for (const route of pointing) expect(managing).not.toContain(route);
      expect(managing).toEqual(
        expect.arrayContaining([
          'GET/webhook-endpoints',
          'DELETE/webhook-endpoints/*',
          'POST/webhook-endpoints/*/test',
        ]),
      );
      expect(await resourcesOf('webhooks/manage plants/read')).toEqual(
        expect.arrayContaining(pointing),
      );
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
});

describe('what the authorizer logs of a credential', () => {
  const marker = 'hunter2';
  const b64 = (text: string) => Buffer.from(text).toString('base64url');
  const hostile: readonly [string, string][] = [
    ['a payload that is not JSON', `${b64('{"alg":"RS256"}')}.${b64(`${marker}-db`)}.c2ln`],
    [
      'a payload that is JSON but no object',
      `${b64('{"alg":"RS256"}')}.${b64(`"${marker}-db"`)}.c2ln`,
    ],
    ['a header that is not JSON', `${b64(`{${marker}`)}.${b64('{}')}.c2ln`],
    ['a part that is not base64url', `${marker}!.${marker}!.${marker}!`],
    ['a foreign issuer', ''],
    ['a foreign audience', ''],
    ['an unknown key id', ''],
    ['an expired token', ''],
  ];

  it.each(hostile)('logs a fixed reason for %s, and no part of the token', async (name, given) => {
    const token =
      given !== ''
        ? given
        : name === 'a foreign issuer'
          ? signToken(rsaKey, validClaims({ iss: `https://${marker}.example` }))
          : name === 'a foreign audience'
            ? signToken(rsaKey, validClaims({ aud: `${marker}-audience` }))
            : name === 'an unknown key id'
              ? signToken(createKey('RS256', `${marker}-kid`), validClaims())
              : signToken(
                  rsaKey,
                  validClaims({ exp: nowInSeconds() - 3600, sub: `${marker}-client` }),
                );
    const authorizer = createAuthorizer();
    await expect(authorizer.authorize(`Bearer ${token}`)).rejects.toThrow('Unauthorized');
    const written = JSON.stringify(authorizer.logLines);
    expect(authorizer.logLines.length).toBeGreaterThan(0);
    expect(written).not.toContain(marker);
    for (const part of token.split('.')) {
      if (part.length >= 8) expect(written).not.toContain(part.slice(0, 8));
    }
    expect(authorizer.logLines.at(-1)).toEqual(
      expect.objectContaining({ reason: expect.stringMatching(/^[a-z-]+$/) }),
    );
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
