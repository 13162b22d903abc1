/**
 * `npm run -s token`: prints a bearer token the local API accepts, and nothing else on stdout,
 * so `TOKEN=$(npm run -s token)` works. Options make the tokens for trying the 401 and 403 cases.
 */
import { parseArgs } from 'node:util';
import {
  defaultExpiresInSeconds,
  defaultLocalScope,
  defaultLocalSubject,
  type LocalTokenOptions,
  loadOrCreateLocalKeys,
  localKeysDirectory,
  signLocalToken,
} from './token-issuer.ts';

const usage = `Usage: npm run -s token -- [options]

Prints a bearer token for the local API (key pair in \${PLANT_STORE_DATA_DIR:-.data}/keys).

Options:
  --scope <scopes>        space-separated scopes (default "${defaultLocalScope}");
                          "plants/read" reads only, "plants/write" writes only, "" none: 403;
                          "webhooks/manage" manages the subject's webhook endpoints
                          (creating, changing or recovering one needs "plants/read" too)
  --subject <sub>         the token's subject (default "${defaultLocalSubject}"): the client
                          whose webhook endpoints the token manages
  --expires-in <seconds>  lifetime in whole seconds (default ${defaultExpiresInSeconds});
                          0 or less, as in --expires-in=-60, gives an expired token: 401
  --help                  show this help
`;

/** Thrown for arguments the CLI cannot use; the message is shown above the usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The token options named by the command-line arguments, or `'help'`. */
export function parseTokenArguments(args: readonly string[]): LocalTokenOptions | 'help' {
  let values: { scope?: string; subject?: string; 'expires-in'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        scope: { type: 'string' },
        subject: { type: 'string' },
        'expires-in': { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return 'help';
  const expiresIn = values['expires-in'];
  if (expiresIn !== undefined && !/^-?\d+$/.test(expiresIn)) {
    throw new UsageError(`--expires-in must be a whole number of seconds, got "${expiresIn}".`);
  }
  if (values.subject === '') throw new UsageError('--subject must not be empty.');
  return {
    ...(values.scope === undefined ? {} : { scope: values.scope.trim() }),
    ...(values.subject === undefined ? {} : { subject: values.subject }),
    ...(expiresIn === undefined ? {} : { expiresInSeconds: Number(expiresIn) }),
  };
}

function main(): void {
  let options: LocalTokenOptions | 'help';
  try {
    options = parseTokenArguments(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n\n${usage}`);
    process.exitCode = 2;
    return;
  }
  if (options === 'help') {
    process.stdout.write(usage);
    return;
  }
  const keys = loadOrCreateLocalKeys(localKeysDirectory());
  process.stdout.write(`${signLocalToken(keys, options)}\n`);
}

if (import.meta.main) main();
