/**
 * The development token issuer: an RSA key pair kept in the git-ignored local data folder, the
 * JWKS the local API's authorizer verifies against, and RS256 tokens shaped like the deployed
 * issuer's (`iss`, `aud`, `sub`, `scope`, `exp`). Plain `node:crypto`, no dependency.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomUUID,
  sign,
} from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scopes } from '../functions/shared/http/routes.ts';
import { ensurePrivateDirectory } from './private-directory.ts';

/** The local tokens' `iss`: a stable name (nothing fetches it), so tokens survive restarts. */
export const localIssuer = 'https://plant-store.local';

/** The local tokens' `aud`. */
export const localAudience = 'plant-store-local';

/** The `sub` of a local token when none is asked for. */
export const defaultLocalSubject = 'local-developer';

/**
 * The scopes of a local token when none are asked for: both plant scopes (`--scope
 * webhooks/manage` asks for the endpoints').
 */
export const defaultLocalScope = `${scopes.read} ${scopes.write}`;

/** The lifetime of a local token when none is asked for, in seconds. */
export const defaultExpiresInSeconds = 3600;

/** RS256, as Cognito signs, so the local API exercises the same verification path. */
const algorithm = 'RS256';

const privateKeyFileName = 'local-issuer.private.pem';

/** A JWK as published in the JWKS. */
export interface PublicJwk {
  readonly kty: string;
  readonly n?: string;
  readonly e?: string;
  readonly kid: string;
  readonly alg: string;
  readonly use: 'sig';
}

/** The JSON Web Key Set the local authorizer fetches. */
export interface Jwks {
  readonly keys: readonly PublicJwk[];
}

export interface LocalKeys {
  readonly privateKey: KeyObject;
  readonly publicJwk: PublicJwk;
  /** The RFC 7638 thumbprint of the public key: stable for as long as the key file lives. */
  readonly kid: string;
}

export interface LocalTokenOptions {
  /** Space-separated scopes; default every scope of the API; `''` for a token without any. */
  readonly scope?: string;
  readonly subject?: string;
  /** Lifetime from now; zero or negative gives an already expired token (for trying 401s). */
  readonly expiresInSeconds?: number;
}

/** The folder holding the local key pair: `${PLANT_STORE_DATA_DIR:-.data}/keys`. */
export function localKeysDirectory(env: Record<string, string | undefined> = process.env): string {
  return join(env.PLANT_STORE_DATA_DIR || '.data', 'keys');
}

/**
 * Loads the local issuer's key pair, creating it on first use: the private key is written with
 * mode 0600 in a 0700 folder, and never overwritten (a concurrent first start reads the winner's).
 */
export function loadOrCreateLocalKeys(keysDirectory: string = localKeysDirectory()): LocalKeys {
  const keyFile = join(keysDirectory, privateKeyFileName);
  let pem: string;
  try {
    pem = readFileSync(keyFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    pem = createKeyFile(keysDirectory, keyFile);
  }
  const privateKey = createPrivateKey(pem);
  const { kty, n, e } = createPublicKey(privateKey).export({ format: 'jwk' });
  if (kty !== 'RSA' || n === undefined || e === undefined) {
    throw new Error(`${keyFile} does not hold an RSA private key; delete it to get a new one.`);
  }
  const kid = thumbprintOf({ e, kty, n });
  return { privateKey, kid, publicJwk: { kty, n, e, kid, alg: algorithm, use: 'sig' } };
}

function createKeyFile(keysDirectory: string, keyFile: string): string {
  ensurePrivateDirectory(keysDirectory);
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  try {
    writeFileSync(keyFile, pem, { mode: 0o600, flag: 'wx' });
    return pem;
  } catch (error) {
    // Another process created it between our read and write: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(keyFile, 'utf8');
    throw error;
  }
}

/** RFC 7638: SHA-256 of the required members in lexicographic order, base64url. */
function thumbprintOf(members: { e: string; kty: string; n: string }): string {
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

/** The JWKS publishing the local issuer's public key. */
export function localJwks(keys: LocalKeys): Jwks {
  return { keys: [keys.publicJwk] };
}

/** Signs a token the local API accepts (with the default scope) or refuses (per the options). */
export function signLocalToken(keys: LocalKeys, options: LocalTokenOptions = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const scope = options.scope ?? defaultLocalScope;
  const header = { alg: algorithm, typ: 'JWT', kid: keys.kid };
  const payload = {
    iss: localIssuer,
    aud: localAudience,
    sub: options.subject ?? defaultLocalSubject,
    ...(scope === '' ? {} : { scope }),
    iat: now,
    exp: now + (options.expiresInSeconds ?? defaultExpiresInSeconds),
    jti: randomUUID(),
  };
  const signingInput = `${encodeJson(header)}.${encodeJson(payload)}`;
  const signature = sign('sha256', Buffer.from(signingInput), keys.privateKey);
  return `${signingInput}.${signature.toString('base64url')}`;
}

function encodeJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
