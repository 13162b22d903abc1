import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import {
  AuthorizerConfigError,
  readAuthorizerConfig,
} from '../../../functions/authorizer/config.ts';

const run = promisify(execFile);
const handlerModule = fileURLToPath(
  new URL('../../../functions/authorizer/handler.ts', import.meta.url),
);
const createHandlerModule = fileURLToPath(
  new URL('../../../functions/authorizer/create-handler.ts', import.meta.url),
);

const cognitoIssuer = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123';

function problemsOf(env: Record<string, string | undefined>): readonly string[] {
  try {
    readAuthorizerConfig(env);
  } catch (error) {
    if (error instanceof AuthorizerConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('readAuthorizerConfig', () => {
  it('reads every setting', () => {
    expect(
      readAuthorizerConfig({
        TOKEN_ISSUER: cognitoIssuer,
        TOKEN_AUDIENCE: ' client-a , client-b ',
        TOKEN_AUDIENCE_CLAIM: 'client_id',
        JWKS_URI: 'https://keys.example/jwks.json',
      }),
    ).toEqual({
      issuer: cognitoIssuer,
      audiences: ['client-a', 'client-b'],
      audienceClaim: 'client_id',
      jwksUri: 'https://keys.example/jwks.json',
    });
  });

  it("defaults to the aud claim and the issuer's well-known JWKS", () => {
    const env = { TOKEN_ISSUER: `${cognitoIssuer}/`, TOKEN_AUDIENCE: 'api' };
    expect(readAuthorizerConfig(env)).toEqual({
      issuer: `${cognitoIssuer}/`,
      audiences: ['api'],
      audienceClaim: 'aud',
      jwksUri: `${cognitoIssuer}/.well-known/jwks.json`,
    });
  });

  it('treats an empty optional setting as not set', () => {
    const config = readAuthorizerConfig({
      TOKEN_ISSUER: cognitoIssuer,
      TOKEN_AUDIENCE: 'api',
      TOKEN_AUDIENCE_CLAIM: '',
      JWKS_URI: ' ',
    });
    expect(config).toMatchObject({
      audienceClaim: 'aud',
      jwksUri: `${cognitoIssuer}/.well-known/jwks.json`,
    });
  });

  it('accepts plain http only on a loopback host', () => {
    const env = { TOKEN_ISSUER: cognitoIssuer, TOKEN_AUDIENCE: 'api' };
    expect(readAuthorizerConfig({ ...env, JWKS_URI: 'http://127.0.0.1:4000/jwks' }).jwksUri).toBe(
      'http://127.0.0.1:4000/jwks',
    );
    expect(problemsOf({ ...env, JWKS_URI: 'http://keys.example/jwks' })).toEqual([
      'JWKS_URI must be an https URL (http only on a loopback host), got "http://keys.example/jwks".',
    ]);
  });

  it('accepts plain http on a private address only under sam local, for the Docker bridge', () => {
    const env = { TOKEN_ISSUER: cognitoIssuer, TOKEN_AUDIENCE: 'api' };
    const bridge = 'http://172.29.213.1:4000/.well-known/jwks.json';
    expect(problemsOf({ ...env, JWKS_URI: bridge })).toEqual([
      `JWKS_URI must be an https URL (http only on a loopback host), got "${bridge}".`,
    ]);
    const samLocal = { ...env, AWS_SAM_LOCAL: 'true' };
    expect(readAuthorizerConfig({ ...samLocal, JWKS_URI: bridge })).toMatchObject({
      jwksUri: bridge,
      jwksOnPrivateNetwork: true,
    });
    for (const address of ['10.0.0.1', '192.168.1.2', '172.31.255.1']) {
      expect(problemsOf({ ...samLocal, JWKS_URI: `http://${address}/jwks` })).toEqual([]);
    }
    for (const address of ['172.32.0.1', '169.254.169.254', 'keys.example', '100.64.0.1']) {
      expect(problemsOf({ ...samLocal, JWKS_URI: `http://${address}/jwks` })).toHaveLength(1);
    }
    expect(
      readAuthorizerConfig({ ...env, JWKS_URI: 'https://keys.example/jwks' }),
    ).not.toHaveProperty('jwksOnPrivateNetwork');
  });

  it('names every missing setting at once', () => {
    expect(problemsOf({})).toEqual([
      'TOKEN_ISSUER is required: the exact `iss` of accepted tokens.',
      'TOKEN_AUDIENCE is required: comma-separated audiences or Cognito app client ids.',
    ]);
    expect(problemsOf({ TOKEN_ISSUER: cognitoIssuer, TOKEN_AUDIENCE: ' , ' })).toHaveLength(1);
  });

  it('names every invalid setting at once', () => {
    const problems = problemsOf({
      TOKEN_ISSUER: 'not a url',
      TOKEN_AUDIENCE: 'api',
      TOKEN_AUDIENCE_CLAIM: 'azp',
      JWKS_URI: 'ftp://keys.example/jwks',
    });
    expect(problems).toEqual([
      'TOKEN_ISSUER must be an https URL (http only on a loopback host), got "not a url".',
      'TOKEN_AUDIENCE_CLAIM must be one of aud, client_id, got "azp".',
      'JWKS_URI must be an https URL (http only on a loopback host), got "ftp://keys.example/jwks".',
    ]);
  });
});

describe('the Lambda entry', () => {
  const importHandler = (env: Record<string, string>, module = handlerModule) =>
    run(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(module)});`],
      {
        env: { PATH: process.env.PATH ?? '', ...env },
      },
    );

  it('fails the cold start, naming the problems, when its environment is incomplete', async () => {
    const failure = importHandler({ AWS_LAMBDA_FUNCTION_NAME: 'authorizer' });
    await expect(failure).rejects.toMatchObject({ code: 1 });
    const { stderr } = await failure.catch((error: { stderr: string }) => error);
    expect(stderr).toContain('AuthorizerConfigError');
    expect(stderr).toContain('TOKEN_ISSUER is required');
    expect(stderr).toContain('TOKEN_AUDIENCE is required');
  });

  it('starts when the environment is complete', async () => {
    const lambda = {
      AWS_LAMBDA_FUNCTION_NAME: 'authorizer',
      TOKEN_ISSUER: cognitoIssuer,
      TOKEN_AUDIENCE: 'api',
    };
    await expect(importHandler(lambda)).resolves.toMatchObject({ stderr: '' });
  });

  it('leaves the handler factory importable anywhere, without an environment', async () => {
    await expect(importHandler({}, createHandlerModule)).resolves.toMatchObject({ stderr: '' });
  });
});
