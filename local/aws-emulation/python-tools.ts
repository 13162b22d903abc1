/**
 * The AWS tools the tests and the SAM recipe run that come from Python, not npm: cfn-lint (AWS's
 * CloudFormation linter), moto's server (an AWS emulator) and the SAM CLI. `.ci/python-tools`
 * installs them, pinned, into the git-ignored `.data/python` virtualenv; only those are used, so
 * that every machine runs the same versions. A tool that is not there fails with one line saying
 * how to get it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from '../../infra/plant-store-function.ts';

/** The project's own virtualenv for the Python tools. */
export const pythonToolsDirectory = path.join(repositoryRoot, '.data', 'python');

/** The command to run `tool`; throws one line when it is not installed. */
export function findPythonTool(tool: 'cfn-lint' | 'moto_server' | 'sam' | 'python'): string {
  const inVirtualenv = path.join(pythonToolsDirectory, 'bin', tool);
  if (existsSync(inVirtualenv)) return inVirtualenv;
  throw new Error(
    `${tool} not found in .data/python: run \`bash .ci/python-tools\` (pip installs the pinned aws-sam-cli, cfn-lint and moto[server] there).`,
  );
}
