/**
 * The AWS tools the tests run that come from Python, not npm: cfn-lint (AWS's CloudFormation
 * linter) and moto's server (an AWS emulator). Machines of this project's kind have both on the
 * PATH; elsewhere `.ci/python-tools` installs them into the git-ignored `.data/python` virtualenv,
 * which is looked in second. A tool found nowhere fails the suite with one line saying how to get it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from '../../infra/plant-store-function.ts';

/** The project's own virtualenv for the Python tools, when the machine has none. */
export const pythonToolsDirectory = path.join(repositoryRoot, '.data', 'python');

/** The command to run `tool` (`cfn-lint`, `moto_server`); throws one line when there is none. */
export function findPythonTool(tool: 'cfn-lint' | 'moto_server'): string {
  const onPath = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim() !== '') return onPath.stdout.trim();
  const inVirtualenv = path.join(pythonToolsDirectory, 'bin', tool);
  if (existsSync(inVirtualenv)) return inVirtualenv;
  throw new Error(
    `${tool} not found: run \`bash .ci/python-tools\` (pip installs cfn-lint and moto[server] into .data/python).`,
  );
}
