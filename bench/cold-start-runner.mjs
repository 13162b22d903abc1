// One cold start, in a fresh Node.js process spawned by bench/cold-start.ts: import a bundle the
// way the Lambda runtime does, answer one invocation, print monotonic times (process.hrtime is
// the same clock in every process). Plain JavaScript, so no TypeScript loader is paid for.
// argv: <bundle path, or "none" for a bare process> <event JSON file>
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const started = process.hrtime.bigint();
const [bundlePath = 'none', eventPath = ''] = process.argv.slice(2);
let imported = started;
let outcome = 'none';
if (bundlePath !== 'none') {
  const { handler } = await import(pathToFileURL(bundlePath).href);
  imported = process.hrtime.bigint();
  const event = JSON.parse(readFileSync(eventPath, 'utf8'));
  const context = {
    awsRequestId: 'cold-start',
    functionName: 'bench',
    getRemainingTimeInMillis: () => 10_000,
  };
  const result = await handler(event, context);
  outcome = String(result?.statusCode ?? result?.policyDocument?.Statement?.[0]?.Effect);
}
const answered = process.hrtime.bigint();
const cpu = process.cpuUsage();
// The last line of stdout; the handler's own log lines come before it.
process.stdout.write(
  `${JSON.stringify({ outcome, started: `${started}`, imported: `${imported}`, answered: `${answered}`, cpuMicroseconds: cpu.user + cpu.system })}\n`,
);
