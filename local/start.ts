/**
 * `npm start`: the Plant Store on this machine, no AWS account needed (see `local-api.ts`).
 *
 * Environment: `PORT` (default 3000; 0 picks a free port), `TABLE_NAME` (default `plants`),
 * `DYNAMODB_ENDPOINT` (use a running store instead of starting DynamoDB Local),
 * `PLANT_STORE_DATA_DIR` (default `.data`: the issuer's keys and DynamoDB Local's data).
 * Ctrl-C or SIGTERM stops everything it started and exits 0; a failed start prints one line
 * and exits 1, leaving nothing running.
 */
import { join } from 'node:path';
import { type LocalApi, startLocalApi } from './local-api.ts';
import { localKeysDirectory } from './token-issuer.ts';

const samplePlant = { id: 1, name: 'Monstera', tag: 'tropical' };
const tokenLifetimeSeconds = 3600;

/** An environment setting that cannot be used; shown as the one line of a failed start. */
class LocalSettingError extends Error {
  override readonly name = 'LocalSettingError';
}

function readPort(text: string | undefined): number {
  if (text === undefined || text === '') return 3000;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new LocalSettingError(`PORT must be a port number from 0 to 65535, got "${text}".`);
  }
  return port;
}

/** The curl command printed at start-up: one line, single-quoted for POSIX shells. */
function formatCurl(url: string, token: string): string {
  return [
    `curl -i -X POST ${url}/plants`,
    `-H 'Authorization: Bearer ${token}'`,
    `-H 'Content-Type: application/json'`,
    `-d '${JSON.stringify(samplePlant)}'`,
  ].join(' ');
}

function describeStart(api: LocalApi, dataDirectory: string | undefined): string {
  const seconds = (performance.now() / 1000).toFixed(1);
  const store =
    dataDirectory === undefined
      ? `${api.storeEndpoint} (DYNAMODB_ENDPOINT), table "${api.tableName}"`
      : `${api.storeEndpoint} DynamoDB Local (pid ${api.dynamoDbLocalPid}), table "${api.tableName}", data in ${dataDirectory}`;
  return [
    `Plant Store local API ready in ${seconds} s`,
    `  API:    ${api.url}  (POST /plants)`,
    `  Store:  ${store}`,
    '',
    'Try it (the token is valid for 1 hour; `npm run -s token` prints a new one):',
    '',
    formatCurl(api.url, api.signToken({ expiresInSeconds: tokenLifetimeSeconds })),
    '',
    'Ctrl-C stops it. Request logs follow.',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const environment = process.env;
  const dynamoDbEndpoint = environment.DYNAMODB_ENDPOINT || undefined;
  const dataDirectory = environment.PLANT_STORE_DATA_DIR || '.data';
  const dynamoDbDataDirectory =
    dynamoDbEndpoint === undefined ? join(dataDirectory, 'dynamodb') : undefined;

  let api: LocalApi;
  try {
    api = await startLocalApi({
      port: readPort(environment.PORT),
      tableName: environment.TABLE_NAME || 'plants',
      keysDirectory: localKeysDirectory(environment),
      ...(dynamoDbEndpoint === undefined ? { dynamoDbDataDirectory } : { dynamoDbEndpoint }),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`Could not start the Plant Store locally: ${message}\n`);
    process.exit(1);
  }
  process.stdout.write(describeStart(api, dynamoDbDataDirectory));

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    // A second Ctrl-C while stopping changes nothing: stop() already ends the JVM, forcibly if slow.
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping…\n`);
    try {
      await api.stop();
      process.stdout.write('Stopped.\n');
      process.exit(0);
    } catch (error) {
      process.stderr.write(
        `Could not stop cleanly: ${error instanceof Error ? error.message : error}\n`,
      );
      process.exit(1);
    }
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

await main();
