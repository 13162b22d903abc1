/**
 * Real key pairs and real signed tokens for the authorizer's tests, including the forgeries an
 * attacker would try: no mocked verifier anywhere.
 */
import {
  createHmac,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
  sign,
} from 'node:crypto';

export type TestAlgorithm = 'RS256' | 'ES256';

export interface TestSigningKey {
  readonly kid: string;
  readonly algorithm: TestAlgorithm;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** The public key as the JWKS publishes it. */
  readonly publicJwk: JsonWebKey & { kid: string };
}

/**
 * A fresh key pair. `declareAlgorithm: false` leaves `alg` out of the JWK, as some issuers do,
 * so that only the verifier's own allowlist stands between a forged header and the key.
 * `modulusLength` sets an RSA key's size (the verifier refuses keys under 2048 bits).
 */
export function createSigningKey(
  algorithm: TestAlgorithm,
  kid: string,
  { declareAlgorithm = true, modulusLength = 2048 } = {},
): TestSigningKey {
  const { privateKey, publicKey } =
    algorithm === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = {
    ...publicKey.export({ format: 'jwk' }),
    kid,
    use: 'sig',
    ...(declareAlgorithm ? { alg: algorithm } : {}),
  };
  return { kid, algorithm, privateKey, publicKey, publicJwk };
}

export type Claims = Record<string, unknown>;
export type Header = Record<string, unknown>;

/** Seconds since the epoch, as JWT times are written. */
export function nowInSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function encodeJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Signs with `key` (its own algorithm); `header` is merged over `{alg, typ, kid}`. */
export function signToken(key: TestSigningKey, claims: Claims, header: Header = {}): string {
  const signingInput = `${encodeJson({ alg: key.algorithm, typ: 'JWT', kid: key.kid, ...header })}.${encodeJson(claims)}`;
  const signature = sign('sha256', Buffer.from(signingInput), {
    key: key.privateKey,
    // JWS wants ECDSA signatures as r || s, not DER.
    dsaEncoding: 'ieee-p1363',
  });
  return `${signingInput}.${signature.toString('base64url')}`;
}

/** A token with `alg: none`; `signature` lets it pass a parser that wants three parts. */
export function unsignedToken(claims: Claims, header: Header, signature = ''): string {
  return `${encodeJson({ alg: 'none', typ: 'JWT', ...header })}.${encodeJson(claims)}.${signature}`;
}

/**
 * The algorithm-confusion forgery: HS256 keyed with the issuer's PUBLIC key (which anyone can
 * fetch), accepted by verifiers that let the token's header choose the algorithm.
 */
export function hmacWithPublicKeyToken(key: TestSigningKey, claims: Claims): string {
  const signingInput = `${encodeJson({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${encodeJson(claims)}`;
  const secret = key.publicKey.export({ format: 'pem', type: 'spki' });
  const signature = createHmac('sha256', secret).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}
