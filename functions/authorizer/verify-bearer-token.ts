/**
 * Bearer-token verification with aws-jwt-verify, which caches the JWKS and its keys across
 * invocations and rate-limits refetches for unknown key ids.
 */
import {
  FetchError,
  JwkInvalidKtyError,
  JwkInvalidUseError,
  JwksValidationError,
  JwkValidationError,
  JwtExpiredError,
  JwtInvalidAudienceError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtNotBeforeError,
  JwtParseError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
  NonRetryableFetchError,
  WaitPeriodNotYetEndedJwkError,
} from 'aws-jwt-verify/error';
import { type Fetcher, SimpleFetcher } from 'aws-jwt-verify/https';
import type { Jwk } from 'aws-jwt-verify/jwk';
import { SimpleJwksCache, SimplePenaltyBox } from 'aws-jwt-verify/jwk';
import { type DecomposedJwt, decomposeUnverifiedJwt } from 'aws-jwt-verify/jwt';
import type { JwtHeader, JwtPayload } from 'aws-jwt-verify/jwt-model';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import { type AuthorizerConfig, isSecureUrl } from './config.ts';

/** Clock skew tolerated on `exp` and `nbf`, in seconds: enough for drift, too little to matter. */
export const leewaySeconds = 5;

/** How far ahead `exp`, `nbf` or `iat` may lie: a year (`1e300` would break date arithmetic). */
export const maxFutureClaimSeconds = 366 * 24 * 60 * 60;

/** The smallest RSA key accepted, in bits: NIST SP 800-57 deems smaller keys unsafe. */
export const minRsaKeyBits = 2048;

/** Seconds before the JWKS may be fetched again after an unknown `kid` or a failed fetch. */
export const defaultJwksRefetchWaitSeconds = 10;

/** The accepted algorithms, each with its key type: asymmetric only, no `none`, no HMAC. */
export const keyTypeOfAlgorithm: Readonly<Record<string, string>> = {
  RS256: 'RSA',
  RS384: 'RSA',
  RS512: 'RSA',
  ES256: 'EC',
  ES384: 'EC',
  ES512: 'EC',
  EdDSA: 'OKP',
};

/** What the rest of the request may know about a verified token. */
export interface VerifiedToken {
  /** The token's `sub`: the user, or the app client for a client-credentials token. */
  readonly subject: string;
  /** The issuer and the client (`client_id`, else `azp`, else `sub`) the token was issued to. */
  readonly client: string;
  /** The `scope` claim as issued: space-separated scopes, `''` when it has none. */
  readonly scope: string;
  readonly scopes: readonly string[];
}

/** Why a token was rejected, for the log only; codes, since a bundler may rename classes. */
export type RejectionReason =
  | 'missing-bearer-token'
  | 'malformed'
  | 'critical-header'
  | 'implausible-time'
  | 'weak-key'
  | 'algorithm-not-allowed'
  | 'bad-signature'
  | 'expired'
  | 'not-yet-valid'
  | 'no-expiry'
  | 'no-subject'
  | 'wrong-issuer'
  | 'wrong-audience'
  | 'wrong-client'
  | 'unknown-key'
  | 'jwks-refetch-wait'
  | 'jwks-unavailable'
  | 'jwks-invalid'
  | 'unexpected';

/** A token this module rejects itself (the library's own rejections are its `JwtBaseError`s). */
export class InvalidTokenError extends Error {
  readonly reason: RejectionReason;

  constructor(reason: RejectionReason, message: string) {
    super(message);
    this.name = 'InvalidTokenError';
    this.reason = reason;
  }
}

// Most specific first: several of the library's errors share a base class.
const reasonOfLibraryError: ReadonlyArray<
  readonly [new (...args: never[]) => Error, RejectionReason]
> = [
  [JwtParseError, 'malformed'],
  [JwtInvalidSignatureAlgorithmError, 'algorithm-not-allowed'],
  [JwtInvalidSignatureError, 'bad-signature'],
  [JwtExpiredError, 'expired'],
  [JwtNotBeforeError, 'not-yet-valid'],
  [JwtInvalidIssuerError, 'wrong-issuer'],
  [JwtInvalidAudienceError, 'wrong-audience'],
  [JwtWithoutValidKidError, 'unknown-key'],
  [KidNotFoundInJwksError, 'unknown-key'],
  [WaitPeriodNotYetEndedJwkError, 'jwks-refetch-wait'],
  [FetchError, 'jwks-unavailable'],
  [JwksValidationError, 'jwks-invalid'],
  [JwkValidationError, 'jwks-invalid'],
  [JwkInvalidUseError, 'jwks-invalid'],
  [JwkInvalidKtyError, 'jwks-invalid'],
];

/** The reason code of an error thrown by a {@link BearerTokenVerifier}. */
export function rejectionReasonOf(error: unknown): RejectionReason {
  if (error instanceof InvalidTokenError) return error.reason;
  const known = reasonOfLibraryError.find(([errorClass]) => error instanceof errorClass);
  return known?.[1] ?? 'unexpected';
}

export interface BearerTokenVerifierOptions {
  readonly jwksRefetchWaitSeconds?: number;
}

/** Verifies the value of an `Authorization` header and returns the token's subject and scopes. */
export type BearerTokenVerifier = (authorization: string | undefined) => Promise<VerifiedToken>;

/** One verifier per cold start (it caches the JWKS); the scope is the caller's to check. */
export function createBearerTokenVerifier(
  config: AuthorizerConfig,
  options: BearerTokenVerifierOptions = {},
): BearerTokenVerifier {
  const penaltyBox = new SimplePenaltyBox({
    waitSeconds: options.jwksRefetchWaitSeconds ?? defaultJwksRefetchWaitSeconds,
  });
  const jwksCache = new FailClosedJwksCache({ penaltyBox, fetcher: loopbackHttpFetcher(config) });
  const verifier = JwtVerifier.create(
    {
      issuer: config.issuer,
      jwksUri: config.jwksUri,
      // Cognito access tokens have no `aud`: their app client is checked below instead.
      audience: config.audienceClaim === 'aud' ? [...config.audiences] : null,
      graceSeconds: leewaySeconds,
      customJwtCheck: ({ header, payload, jwk }) => checkToken(config, header, payload, jwk),
    },
    { jwksCache },
  );

  return async (authorization) => {
    const token = readBearerToken(authorization);
    checkUnverifiedToken(token);
    const payload = await verifier.verify(token);
    const scope = payload.scope ?? '';
    return {
      subject: String(payload.sub),
      client: clientOf(payload),
      scope,
      scopes: scope.split(' ').filter((item) => item !== ''),
    };
  };
}

// RFC 6750 §2.1: `Bearer` (any case), one or more spaces, a b64token.
const bearerPattern = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The token of an `Authorization: Bearer <token>` header value. */
export function readBearerToken(authorization: string | undefined): string {
  const match = bearerPattern.exec(authorization?.trim() ?? '');
  if (match?.[1] === undefined) {
    throw new InvalidTokenError(
      'missing-bearer-token',
      'The Authorization header does not hold a bearer token.',
    );
  }
  return match[1];
}

/**
 * Refused before the library's checks: a `crit` header (RFC 7515 §4.1.11: this verifier knows
 * no extension), and times too far off for the library's date arithmetic.
 */
function checkUnverifiedToken(token: string): void {
  const { header, payload } = decomposeUnverifiedJwt(token);
  if ((header as Record<string, unknown>).crit !== undefined) {
    throw new InvalidTokenError('critical-header', 'The token names critical header extensions.');
  }
  const latest = Date.now() / 1000 + maxFutureClaimSeconds;
  for (const claim of ['exp', 'nbf', 'iat'] as const) {
    const value = payload[claim];
    if (value !== undefined && !(typeof value === 'number' && value >= 0 && value <= latest)) {
      throw new InvalidTokenError(
        'implausible-time',
        `The token's ${claim} is not a plausible time.`,
      );
    }
  }
}

/** The checks aws-jwt-verify leaves to its user; run after the signature, `iss` and `aud`. */
function checkToken(config: AuthorizerConfig, header: JwtHeader, payload: JwtPayload, jwk: Jwk) {
  const keyType = header.alg === undefined ? undefined : keyTypeOfAlgorithm[header.alg];
  if (keyType === undefined || keyType !== jwk.kty) {
    throw new InvalidTokenError(
      'algorithm-not-allowed',
      `Algorithm ${header.alg} is not allowed for a ${jwk.kty} key.`,
    );
  }
  if (jwk.kty === 'RSA' && rsaKeyBits(jwk) < minRsaKeyBits) {
    throw new InvalidTokenError('weak-key', `RSA keys under ${minRsaKeyBits} bits are refused.`);
  }
  // The library checks `exp` only when present; a token that never expires is not accepted.
  if (typeof payload.exp !== 'number') {
    throw new InvalidTokenError('no-expiry', 'The token has no expiry (exp).');
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    throw new InvalidTokenError('no-subject', 'The token has no subject (sub).');
  }
  if (config.audienceClaim === 'client_id') {
    const clientId = payload.client_id;
    if (typeof clientId !== 'string' || !config.audiences.includes(clientId)) {
      throw new InvalidTokenError(
        'wrong-client',
        'The token was issued for another client (client_id).',
      );
    }
  }
}

/** The issuer and the client a token names (RFC 9068 `client_id`, OIDC `azp`, or its `sub`). */
function clientOf(payload: Readonly<Record<string, unknown>>): string {
  const named = [payload.client_id, payload.azp].find(
    (claim): claim is string => typeof claim === 'string' && claim !== '',
  );
  return `${String(payload.iss)} ${named ?? String(payload.sub)}`;
}

/** The size of an RSA JWK's modulus in bits (leading zero bits of `n` do not count). */
function rsaKeyBits(jwk: Jwk): number {
  const modulus = Buffer.from(typeof jwk.n === 'string' ? jwk.n : '', 'base64url');
  const first = modulus.findIndex((byte) => byte !== 0);
  if (first === -1) return 0;
  return (modulus.length - first) * 8 - (Math.clz32(modulus[first] as number) - 24);
}

/** An unfetchable JWKS waits out the penalty too, so an issuer outage costs a quick 401. */
class FailClosedJwksCache extends SimpleJwksCache {
  override async getJwk(jwksUri: string, decomposedJwt: DecomposedJwt) {
    try {
      return await super.getJwk(jwksUri, decomposedJwt);
    } catch (error) {
      if (
        error instanceof FetchError ||
        error instanceof JwksValidationError ||
        error instanceof JwkValidationError
      ) {
        this.penaltyBox.registerFailedAttempt(jwksUri, decomposedJwt.header.kid ?? '');
      }
      throw error;
    }
  }
}

/** Per try: the library tries twice, ~3 s in all, inside the authorizer's 5 s, so 401, not 500. */
const jwksFetchTimeoutMilliseconds = 1500;

/**
 * Node's `https` refuses `http:`; plain http, whose keys anyone on the path could swap, is fetched
 * only from a loopback host (or `sam local`'s private address, `isSecureUrl`).
 */
function loopbackHttpFetcher(config: AuthorizerConfig): Fetcher {
  const httpsFetcher = new SimpleFetcher({
    defaultRequestOptions: { responseTimeout: jwksFetchTimeoutMilliseconds },
  });
  const fetchJwks = async (uri: string): Promise<ArrayBuffer> => {
    if (!isSecureUrl(uri, { jwksOnPrivateNetwork: config.jwksOnPrivateNetwork === true })) {
      throw new NonRetryableFetchError(uri, 'Only https, or http on a loopback host, is fetched.');
    }
    if (new URL(uri).protocol === 'https:') return httpsFetcher.fetch(uri);
    let response: Response;
    try {
      response = await fetch(uri, {
        redirect: 'error',
        signal: AbortSignal.timeout(jwksFetchTimeoutMilliseconds),
      });
    } catch (error) {
      throw new FetchError(uri, error instanceof Error ? error.message : String(error));
    }
    if (response.status !== 200) {
      throw new NonRetryableFetchError(uri, `Status code is ${response.status}, expected 200`);
    }
    return response.arrayBuffer();
  };
  return { fetch: fetchJwks };
}
