/**
 * `npm run -s sam -- <arguments>`: the project's pinned SAM CLI, telemetry and version checks off
 * (`sam-cli.ts`). Ctrl-C reaches SAM with the process group; a SIGTERM or SIGHUP to this process
 * reaches SAM as the Ctrl-C it handles, so it stops its containers (a SIGTERM would leave them
 * running). A closing terminal's SIGHUP ends SAM at once: stop it with Ctrl-C first. SAM's line
 * "No current session found, using default AWS::AccountId" (no STS here) is dropped.
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
