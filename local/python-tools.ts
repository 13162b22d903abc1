/**
 * The AWS tools the tests and the SAM recipe run that come from Python, not npm: cfn-lint (AWS's
 * CloudFormation linter), moto's server (an AWS emulator) and the SAM CLI. `.ci/python-tools`
 * installs them, pinned, into the git-ignored `.data/python` virtualenv; only those are used, so
 * that every machine runs the same versions. A tool that is not there fails with one line saying
 * how to get it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from '../infra/plant-store-function.ts';

/** The project's own virtualenv for the Python tools. */
export const pythonToolsDirectory = path.join(repositoryRoot, '.data', 'python');

/** MiniStack's virtualenv (its boto3 would move the SAM CLI's botocore). */
const miniStackDirectory = path.join(repositoryRoot, '.data', 'ministack');

/**
 * The command to run `tool` (`ministack-python` is the Python of MiniStack's virtualenv); throws
 * one line when it is not installed.
 */
export function findPythonTool(
  tool: 'cfn-lint' | 'moto_server' | 'sam' | 'python' | 'ministack-python',
): string {
  const inVirtualenv =
    tool === 'ministack-python'
      ? path.join(miniStackDirectory, 'bin', 'python')
      : path.join(pythonToolsDirectory, 'bin', tool);
  const ready =
    existsSync(inVirtualenv) &&
    (tool !== 'ministack-python' || existsSync(path.join(miniStackDirectory, 'bin', 'ministack')));
  if (ready) return inVirtualenv;
  throw new Error(
    `${tool === 'ministack-python' ? 'MiniStack' : tool} not found in ${path.relative(repositoryRoot, path.dirname(path.dirname(inVirtualenv)))}: run \`bash .ci/python-tools\` (pip installs the pinned aws-sam-cli, cfn-lint, moto[server] and ministack there).`,
  );
}
