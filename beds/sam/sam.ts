/**
 * `npm run -s sam -- <arguments>`: the project's pinned SAM CLI with telemetry and version checks
 * off (`sam-cli.ts`); the arguments are SAM's own. It stops as `npm start` does: Ctrl-C reaches
 * SAM with the rest of the process group, and a SIGTERM or SIGHUP to this process (npm hands its
 * own on; the script `exec`s node) reaches SAM as the Ctrl-C it handles, stopping its containers
 * (a SIGTERM would end SAM at once and leave them running). This process takes SAM's exit status.
 * A terminal that closes sends SIGHUP to the whole process group, SAM included, which then ends
 * at once and leaves its containers: stop it with Ctrl-C first.
 *
 * One line SAM prints on every run is dropped: "No current session found, using default
 * AWS::AccountId", its warning that no AWS credentials answer STS, which is how it always runs
 * here. (The other warnings it printed for every resource, one per `aws:cdk:path` it could not
 * name, are gone from the template itself: `infra/sam-resource-ids.ts`.)
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { createInterface } from 'node:readline';
import { samCommand } from './sam-cli.ts';

const { command, environment } = samCommand();
const sam = spawn(command, process.argv.slice(2), {
  env: environment,
  stdio: ['inherit', 'inherit', 'pipe'],
});
const noise = /No current session found, using default AWS::AccountId/;
if (sam.stderr !== null) {
  createInterface({ input: sam.stderr, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
    if (!noise.test(line)) process.stderr.write(`${line}\n`);
  });
}
for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => sam.kill('SIGINT'));
}
// Ctrl-C reaches SAM itself (same process group); this process waits for it to end.
process.on('SIGINT', () => undefined);
sam.on('error', (error) => {
  process.stderr.write(`Could not run the SAM CLI: ${error.message}\n`);
  process.exitCode = 1;
});
sam.on('exit', (code, signal) => {
  process.exitCode = code ?? 128 + (signal === null ? 0 : constants.signals[signal]);
});
