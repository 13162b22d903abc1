import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readAuthorizerConfig } from '../../functions/authorizer/config.ts';
import { createHandler } from '../../functions/authorizer/create-handler.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import {
  type JwksServer,
  localAuthorizerEnvironment,
  startJwksServer,
} from '../../local/jwks-server.ts';
import { loadOrCreateLocalKeys, localJwks } from '../../local/token-issuer.ts';

const tokenCli = fileURLToPath(new URL('../../local/token.ts', import.meta.url));
const dataDirectory = mkdtempSync(join(tmpdir(), 'plant-store-token-'));
const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:local/local/POST/plants';

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `npm run -s token` as npm would (Node 24, the repository's script), in a temp data dir. */
function runTokenCli(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [tokenCli, ...args],
      { env: { PATH: process.env.PATH ?? '', PLANT_STORE_DATA_DIR: dataDirectory } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

let jwksServer: JwksServer;
let authorize: (token: string) => Promise<unknown>;

beforeAll(async () => {
  // The key pair the CLI will find: the server publishes the key the CLI signs with.
  const keys = loadOrCreateLocalKeys(join(dataDirectory, 'keys'));
  jwksServer = await startJwksServer(localJwks(keys));
  const handler = createHandler(
    readAuthorizerConfig(localAuthorizerEnvironment(jwksServer.jwksUri)),
    {
      logger: createLogger({}, () => {}),
    },
  );
  authorize = (token) =>
    handler({ type: 'TOKEN', methodArn, authorizationToken: `Bearer ${token}` });
});

afterAll(async () => {
  await jwksServer?.close();
  rmSync(dataDirectory, { recursive: true, force: true });
});

describe('npm run -s token', () => {
  it('prints only a token, and a newline, that the local authorizer allows for both scopes', async () => {
    const { code, stdout, stderr } = await runTokenCli();
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    await expect(authorize(stdout.trim())).resolves.toMatchObject({
      principalId: 'local-developer',
      context: { sub: 'local-developer', scope: 'plants/read plants/write' },
    });
  });

  it('takes the scope, subject and lifetime from its options', async () => {
    const { stdout } = await runTokenCli(
      '--scope',
      'plants/read',
      '--subject',
      'alice',
      '--expires-in',
      '3600',
    );
    await expect(authorize(stdout.trim())).resolves.toMatchObject({
      principalId: 'alice',
      context: { scope: 'plants/read' },
      policyDocument: {
        Statement: [
          {
            Effect: 'Allow',
            Resource: [
              expect.stringMatching(/GET\/plants$/),
              expect.stringMatching(/GET\/plants\/\*$/),
            ],
          },
        ],
      },
    });
  });

  it('makes the token for a 403 everywhere: no scope of the API', async () => {
    const { stdout } = await runTokenCli('--scope', '');
    await expect(authorize(stdout.trim())).resolves.toMatchObject({
      policyDocument: { Statement: [{ Effect: 'Deny' }] },
    });
  });

  it('makes the token for a 401: an expired one', async () => {
    const { stdout } = await runTokenCli('--expires-in=-60');
    await expect(authorize(stdout.trim())).rejects.toThrow('Unauthorized');
  });

  it.each([
    [['--bogus'], "Unknown option '--bogus'"],
    [['--expires-in', 'soon'], '--expires-in must be a whole number of seconds, got "soon".'],
    [['--expires-in', '1.5'], '--expires-in must be a whole number of seconds, got "1.5".'],
    [['--subject', ''], '--subject must not be empty.'],
    [['--scope'], "Option '--scope <value>' argument missing"],
    [['extra'], "Unexpected argument 'extra'"],
  ])('answers %j with the usage on stderr and exit code 2', async (args, message) => {
    const { code, stdout, stderr } = await runTokenCli(...args);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toContain(message);
    expect(stderr).toContain('Usage: npm run -s token');
  });

  it('prints the usage on stdout for --help', async () => {
    const { code, stdout } = await runTokenCli('--help');
    expect(code).toBe(0);
    expect(stdout).toContain('--expires-in <seconds>');
  });
});
