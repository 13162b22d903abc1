/**
 * The local API in a process of its own, for the reliability suite, started by `api-process.ts`:
 * the store can hang or die under it while the test watches. Environment: `DYNAMODB_ENDPOINT`,
 * `TABLE_NAME`, `KEYS_DIRECTORY`, and optionally `THROTTLING` (`<rate>/<burst>` for every method,
 * no per-client limit). Prints one `{"reliabilityApiUrl": …}` line when ready, then the API's
 * logs; exits when its stdin closes, so it cannot outlive the test process.
 */
import { startLocalApi } from '../../local/local-api.ts';

function requireSetting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

function readThrottling(text: string | undefined) {
  if (text === undefined || text === '') return {};
  const [rateLimit, burstLimit] = text.split('/').map(Number);
  if (!Number.isFinite(rateLimit) || !Number.isFinite(burstLimit)) {
    throw new Error(`THROTTLING must read <rate>/<burst>, got "${text}"`);
  }
  return {
    throttling: { rateLimit: rateLimit as number, burstLimit: burstLimit as number },
    tokenLimits: [],
  };
}

const api = await startLocalApi({
  port: 0,
  dynamoDbUrl: requireSetting('DYNAMODB_ENDPOINT'),
  tableName: requireSetting('TABLE_NAME'),
  keysDirectory: requireSetting('KEYS_DIRECTORY'),
  gateway: readThrottling(process.env.THROTTLING),
});
process.stdout.write(`${JSON.stringify({ reliabilityApiUrl: api.url })}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await api.stop();
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
