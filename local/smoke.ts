/**
 * `npm run smoke -- --stack PlantStore-dev`: the contract suite (`test/contract/`) against a
 * deployed stage, with a client-credentials token from the stack's own user pool, removing what
 * it made. On a production-like stage it writes nothing unless asked (`--allow-writes`). With
 * `AWS_ENDPOINT_URL` (an emulator) the outputs' AWS host names map to the emulator's addresses.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  CognitoIdentityProviderClient,
  DescribeUserPoolClientCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { repositoryRoot } from '../infra/plant-store-function.ts';
import { resolveStageConfig, stages } from '../infra/stages.ts';
import type { TargetDescription } from '../test/contract/target.ts';

const usage = `Usage: npm run smoke -- --stack <name> [--allow-writes]

Runs the contract suite against a deployed stage: its outputs from DescribeStacks, a token
from its user pool (client credentials). Credentials and region: the AWS SDK's usual ones
(AWS_PROFILE, AWS_REGION…); AWS_ENDPOINT_URL for an AWS emulator.

Options:
  --stack <name>    the stack, e.g. PlantStore-dev
  --allow-writes    create, change and delete (cleaned up) on a production-like stage too;
                    without it only reads and refusals run there
  --help            show this help
`;

/** The stack's outputs this command reads, and its stage. */
interface StackFacts {
  readonly outputs: Readonly<Record<string, string>>;
  readonly stageName: string;
}

/** The stack's outputs and stage, from `DescribeStacks`. */
export async function describeStack(name: string): Promise<StackFacts> {
  const cloudFormation = new CloudFormationClient({});
  try {
    const { Stacks = [] } = await cloudFormation.send(
      new DescribeStacksCommand({ StackName: name }),
    );
    const [stack] = Stacks;
    if (stack === undefined) throw new Error(`No stack ${name}.`);
    return {
      outputs: Object.fromEntries(
        (stack.Outputs ?? []).map((output) => [output.OutputKey ?? '', output.OutputValue ?? '']),
      ),
      stageName:
        stack.Tags?.find((tag) => tag.Key === 'stage')?.Value ?? name.replace(/^PlantStore-/, ''),
    };
  } finally {
    cloudFormation.destroy();
  }
}

/** The app client's secret, from the pool the issuer URL names. */
async function clientSecretOf(issuerUrl: string, clientId: string): Promise<string> {
  const userPoolId = issuerUrl.split('/').at(-1) ?? '';
  const cognito = new CognitoIdentityProviderClient({});
  try {
    const { UserPoolClient } = await cognito.send(
      new DescribeUserPoolClientCommand({ UserPoolId: userPoolId, ClientId: clientId }),
    );
    if (UserPoolClient?.ClientSecret === undefined) {
      throw new Error(`The app client ${clientId} has no secret: not a client-credentials client.`);
    }
    return UserPoolClient.ClientSecret;
  } finally {
    cognito.destroy();
  }
}

/** A client-credentials token for `scope` from a stage's token endpoint. */
async function clientCredentialsToken(
  client: { readonly tokenUrl: string; readonly clientId: string; readonly clientSecret: string },
  scope: string,
): Promise<string> {
  const basic = Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64');
  const answer = await fetch(client.tokenUrl, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${basic}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
  });
  if (answer.status !== 200) {
    throw new Error(`The token endpoint answered ${answer.status}: ${await answer.text()}`);
  }
  return ((await answer.json()) as { access_token: string }).access_token;
}

/**
 * A stage deployed on an emulator, as a client reaches it: a token for `scope` from the stage's
 * own pool, and the stage's path-style URL (`<endpoint>/_aws/execute-api/<api>/<stage>`: this
 * machine resolves no `*.execute-api.localhost`).
 */
export async function emulatedStageAccess(
  stackName: string,
  stageName: string,
  endpoint: string,
  scope: string,
) {
  const { outputs } = await describeStack(stackName);
  const { baseUrl, tokenUrl } = targetAddresses(outputs, endpoint);
  const clientId = outputs.ClientId as string;
  const clientSecret = await clientSecretOf(outputs.IssuerUrl as string, clientId);
  const token = await clientCredentialsToken({ tokenUrl, clientId, clientSecret }, scope);
  const apiId = new URL(baseUrl).hostname.split('.')[0];
  const stageUrl = `${endpoint}/_aws/execute-api/${apiId}/${stageName}`;
  return { token, stageUrl, tokenUrl, clientId, clientSecret };
}

/**
 * Where the outputs' addresses answer. In AWS, as they are. On an emulator (`endpoint`), the API
 * at `<api>.execute-api.localhost:<port>` (sent to 127.0.0.1 with that Host, so the `Link`s the
 * API writes work as they are) and the token endpoint at `<endpoint>/oauth2/token`.
 */
export function targetAddresses(
  outputs: Readonly<Record<string, string>>,
  endpoint: string | undefined,
): Pick<TargetDescription, 'baseUrl' | 'loopbackHosts'> & { readonly tokenUrl: string } {
  const apiUrl = new URL(requiredOutput(outputs, 'ApiUrl'));
  const baseUrl = apiUrl.href.replace(/\/plants\/?$/, '');
  const tokenUrl = requiredOutput(outputs, 'TokenUrl');
  if (endpoint === undefined) return { baseUrl, tokenUrl };
  const emulator = new URL(endpoint);
  const apiId = apiUrl.hostname.split('.')[0] ?? '';
  const host = `${apiId}.execute-api.localhost`;
  return {
    baseUrl: `http://${host}:${emulator.port}${apiUrl.pathname.replace(/\/plants\/?$/, '')}`,
    tokenUrl: `${emulator.origin}/oauth2/token`,
    loopbackHosts: [host],
  };
}

function requiredOutput(outputs: Readonly<Record<string, string>>, key: string): string {
  const value = outputs[key];
  if (value === undefined || value === '') {
    throw new Error(`The stack has no ${key} output: is it a Plant Store stack?`);
  }
  return value;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      stack: { type: 'string' },
      'allow-writes': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help || values.stack === undefined) {
    process.stderr.write(usage);
    return values.help ? 0 : 2;
  }
  const endpoint = process.env.AWS_ENDPOINT_URL?.trim() || undefined;
  const { outputs, stageName } = await describeStack(values.stack);
  const stage = Object.hasOwn(stages, stageName) ? resolveStageConfig(stageName) : undefined;
  const productionLike = stage?.productionLike ?? true;
  const browserOrigin = stage?.cors?.allowedOrigins.find((origin) => origin !== '*');
  const { tokenUrl, ...addresses } = targetAddresses(outputs, endpoint);
  const clientId = requiredOutput(outputs, 'ClientId');
  const description: TargetDescription = {
    name: endpoint === undefined ? 'stack' : 'emulated-stack',
    ...addresses,
    tokens: {
      kind: 'client-credentials',
      tokenUrl,
      clientId,
      clientSecret: await clientSecretOf(requiredOutput(outputs, 'IssuerUrl'), clientId),
    },
    // The emulator runs the stage's functions on this machine: they reach its loopback.
    ...(endpoint === undefined ? {} : { receiverHost: '127.0.0.1' }),
    writes: !productionLike || values['allow-writes'] === true,
    ...(browserOrigin === undefined ? {} : { browserOrigin }),
  };
  const work = mkdtempSync(path.join(tmpdir(), 'plant-store-smoke-'));
  try {
    const file = path.join(work, 'target.json');
    writeFileSync(file, JSON.stringify(description), { mode: 0o600 });
    process.stdout.write(
      `Smoke test of ${values.stack} (${stageName}${productionLike ? ', production-like' : ''}${description.writes ? '' : ', reads and refusals only'}): ${description.baseUrl}\n`,
    );
    const jest = spawnSync(
      process.execPath,
      [
        '--experimental-vm-modules',
        path.join(repositoryRoot, 'node_modules/jest/bin/jest.js'),
        '--selectProjects',
        'contract',
        // Every case by name: what ran, and what this stage cannot run and why.
        '--verbose',
      ],
      {
        cwd: repositoryRoot,
        stdio: 'inherit',
        env: { ...process.env, PLANT_STORE_CONTRACT_TARGET_FILE: file },
      },
    );
    return jest.status ?? 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
