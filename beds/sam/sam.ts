/**
 * `npm run -s sam -- <arguments>`: the project's pinned SAM CLI with telemetry and version checks
 * off (`sam-cli.ts`); the arguments are SAM's own.
 */
import { spawnSync } from 'node:child_process';
import { samCommand } from './sam-cli.ts';

const { command, environment } = samCommand();
const run = spawnSync(command, process.argv.slice(2), { env: environment, stdio: 'inherit' });
process.exitCode = run.status ?? 1;
