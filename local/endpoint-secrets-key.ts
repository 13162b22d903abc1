/**
 * The key that seals webhook endpoint secrets locally (deployed, a KMS key does): 32 random
 * bytes in the private keys folder, mode 0600, made on first use and never overwritten.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDirectory } from './private-directory.ts';

const keyFileName = 'webhook-endpoint-secrets.key';

/** The local key, created when missing (a concurrent first start reads the winner's). */
export function loadOrCreateEndpointSecretsKey(keysDirectory: string): Buffer {
  const keyFile = join(keysDirectory, keyFileName);
  try {
    return readKey(keyFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  ensurePrivateDirectory(keysDirectory);
  try {
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readKey(keyFile);
}

function readKey(keyFile: string): Buffer {
  const key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
  if (key.byteLength !== 32)
    throw new Error(`${keyFile} is not a 32-byte key; delete it to get a new one.`);
  return key;
}
