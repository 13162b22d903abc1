/**
 * The credentials `npm start` uses with the DynamoDB Local it starts. DynamoDB Local has no
 * option to listen on 127.0.0.1 only (its `-help` lists none; it listens on every interface), so
 * anyone who can reach the port can send it requests. Without `-sharedDb` it keeps one database
 * per access key id and region (DynamoDB Local's documentation, "Usage notes"), so a random key
 * id known only to this user works as a password: another key id sees an empty database of its
 * own, not the plants. The key id lives in the data folder (0600), like the token issuer's key.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { localStoreRegion } from '../functions/shared/platform/dynamodb.ts';
import { ensurePrivateDirectory } from './private-directory.ts';

export interface StoreCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** A key id no one can guess: 128 random bits, in the letters AWS key ids use. */
export function createStoreCredentials(): StoreCredentials {
  const accessKeyId = `PLANTSTORE${randomBytes(16).toString('hex').toUpperCase()}`;
  // DynamoDB Local checks no signature: the secret is a placeholder, the key id is what counts.
  return { accessKeyId, secretAccessKey: 'unused-by-dynamodb-local' };
}

/**
 * The credentials kept in `dataDirectory` (made on first use). Data written before the store
 * was private (`-sharedDb`'s `shared-local-instance.db`) is moved to the key's database once,
 * so no plant is lost.
 */
export function loadOrCreateStoreCredentials(dataDirectory: string): StoreCredentials {
  ensurePrivateDirectory(dataDirectory);
  const file = join(dataDirectory, 'access-key-id');
  let credentials: StoreCredentials;
  if (existsSync(file)) {
    credentials = {
      accessKeyId: readFileSync(file, 'utf8').trim(),
      secretAccessKey: 'unused-by-dynamodb-local',
    };
  } else {
    credentials = createStoreCredentials();
    writeFileSync(file, `${credentials.accessKeyId}\n`, { mode: 0o600 });
  }
  const shared = join(dataDirectory, 'shared-local-instance.db');
  const own = join(dataDirectory, `${credentials.accessKeyId}_${localStoreRegion}.db`);
  if (existsSync(shared) && !existsSync(own)) renameSync(shared, own);
  return credentials;
}
