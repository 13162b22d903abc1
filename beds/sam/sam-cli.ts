/**
 * Runs the project's pinned SAM CLI (`.data/python`, installed by `.ci/python-tools`) the way the
 * tests run it: telemetry off (`SAM_CLI_TELEMETRY=0`) and no weekly version check against PyPI
 * (SAM has no switch for it, so its settings folder is the project's own, where the last check
 * is recorded as far in the future). Everything else is SAM's own.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { findPythonTool } from '../../local/python-tools.ts';

/** SAM's settings folder (`__SAM_CLI_APP_DIR`), with telemetry and version checks off. */
export const samSettingsDirectory = path.join(repositoryRoot, '.data', 'sam', 'settings');

/** The command and environment that run the pinned SAM CLI quietly. */
export function samCommand(environment: NodeJS.ProcessEnv = process.env): {
  command: string;
  environment: NodeJS.ProcessEnv;
} {
  mkdirSync(samSettingsDirectory, { recursive: true, mode: 0o700 });
  writeFileSync(
    path.join(samSettingsDirectory, 'metadata.json'),
    // The year 3000: the weekly check is never due.
    `${JSON.stringify({ telemetryEnabled: false, lastVersionCheck: 32503680000 })}\n`,
  );
  return {
    command: findPythonTool('sam'),
    environment: {
      ...environment,
      SAM_CLI_TELEMETRY: '0',
      __SAM_CLI_APP_DIR: samSettingsDirectory,
    },
  };
}
