/**
 * The authorizer's configuration: read once from the environment at cold start and checked, so a
 * missing or wrong setting fails the start with a message naming every problem instead of
 * letting every request through or turning every request away for a reason nobody can see.
 */
import * as v from 'valibot';
import {
  ConfigurationError,
  commaList,
  optional,
  parsed,
  readConfiguration,
} from '../shared/platform/configuration.ts';

/** The claims that can name who a token was issued for. */
export const audienceClaims = ['aud', 'client_id'] as const;

/**
 * `aud` for OIDC tokens (the audience list); `client_id` for Cognito access tokens, which carry
 * no `aud` and name the app client instead.
 */
export type AudienceClaim = (typeof audienceClaims)[number];

export interface AuthorizerConfig {
  /** The exact `iss` a token must carry. */
  readonly issuer: string;
  /** The accepted audiences or Cognito app client ids: a token must name at least one. */
  readonly audiences: readonly string[];
  readonly audienceClaim: AudienceClaim;
  /** Where the issuer's public keys are published (https, or http on a loopback host). */
  readonly jwksUri: string;
  /**
   * Whether `jwksUri` may be plain http on a private IPv4 address too: only under `sam local`,
   * whose containers reach the local issuer at the Docker bridge's gateway. @default false
   */
  readonly jwksOnPrivateNetwork?: boolean;
  /**
   * The stage's usage plan, which throttles each client: the authorizer adds a client's key to it
   * on first sight (`client-keys.ts`). Unset (locally), keys are named but not registered.
   */
  readonly usagePlanName?: string;
  /** API Gateway's control plane, where not AWS's (an emulator under `sam local`). */
  readonly apiGatewayUrl?: string;
}

/** Thrown at cold start when the environment does not describe a usable authorizer. */
export class AuthorizerConfigError extends ConfigurationError {
  override readonly name = 'AuthorizerConfigError';
}

/**
 * Reads and checks the authorizer's environment variables: `TOKEN_ISSUER`, `TOKEN_AUDIENCE`
 * (comma-separated), `TOKEN_AUDIENCE_CLAIM` (`aud` or `client_id`, default `aud`), `JWKS_URI`
 * (default `${TOKEN_ISSUER}/.well-known/jwks.json`), `USAGE_PLAN_NAME` and `API_GATEWAY_ENDPOINT`
 * (both optional). An optional variable set to an empty string
 * counts as not set. The scopes each operation needs come from the route table, not from here.
 *
 * @throws {AuthorizerConfigError} listing every problem found, not only the first.
 */
export function readAuthorizerConfig(env: Record<string, string | undefined>): AuthorizerConfig {
  // `sam local` sets AWS_SAM_LOCAL=true in its containers; Lambda never sets it.
  const jwksOnPrivateNetwork = env.AWS_SAM_LOCAL === 'true';
  const variables = readConfiguration(
    'authorizer',
    {
      TOKEN_ISSUER: parsed(secureUrl, { description: 'the exact `iss` of accepted tokens' }),
      TOKEN_AUDIENCE: parsed(audienceList, {
        description: 'comma-separated audiences or Cognito app client ids',
      }),
      TOKEN_AUDIENCE_CLAIM: parsed(audienceClaimOf, { fallback: 'aud' as AudienceClaim }),
      JWKS_URI: v.optional(parsed((text) => secureUrl(text, { jwksOnPrivateNetwork }))),
      USAGE_PLAN_NAME: optional,
      API_GATEWAY_ENDPOINT: optional,
    },
    env,
    { createError: (problems) => new AuthorizerConfigError('authorizer', problems) },
  );
  const issuer = variables.TOKEN_ISSUER;
  return {
    issuer,
    audiences: variables.TOKEN_AUDIENCE,
    audienceClaim: variables.TOKEN_AUDIENCE_CLAIM,
    jwksUri: variables.JWKS_URI ?? `${issuer.replace(/\/+$/, '')}/.well-known/jwks.json`,
    ...(jwksOnPrivateNetwork ? { jwksOnPrivateNetwork } : {}),
    usagePlanName: variables.USAGE_PLAN_NAME,
    apiGatewayUrl: variables.API_GATEWAY_ENDPOINT,
  };
}

function secureUrl(text: string, options: SecureUrlOptions = {}): string {
  const url = text.trim();
  if (!isSecureUrl(url, options)) {
    throw new Error(
      options.jwksOnPrivateNetwork === true
        ? 'must be an https URL (http only on a loopback host or, under sam local, a private address)'
        : 'must be an https URL (http only on a loopback host)',
    );
  }
  return url;
}

function audienceList(text: string): string[] {
  const audiences = commaList(text);
  if (audiences.length === 0) throw new Error('must name at least one audience or app client id');
  return audiences;
}

function audienceClaimOf(text: string): AudienceClaim {
  const claim = text.trim();
  if (!isAudienceClaim(claim)) throw new Error(`must be one of ${audienceClaims.join(', ')}`);
  return claim;
}

function isAudienceClaim(claim: string): claim is AudienceClaim {
  return (audienceClaims as readonly string[]).includes(claim);
}

const loopbackHosts = new Set(['127.0.0.1', '[::1]', 'localhost']);

export interface SecureUrlOptions {
  /** Allow plain http on a private IPv4 address (`sam local`'s Docker bridge). @default false */
  readonly jwksOnPrivateNetwork?: boolean;
}

/**
 * Keys fetched over plain http could be swapped by anyone on the path, so http is allowed only
 * for a loopback host (the local issuer's JWKS server during development and tests) and, under
 * `sam local`, a private IPv4 address: the Docker bridge between this machine and its containers.
 */
export function isSecureUrl(text: string, options: SecureUrlOptions = {}): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  if (url.protocol === 'https:') return true;
  if (url.protocol !== 'http:') return false;
  if (loopbackHosts.has(url.hostname)) return true;
  return options.jwksOnPrivateNetwork === true && isPrivateIpv4(url.hostname);
}

/** 10/8, 172.16/12 and 192.168/16 (RFC 1918), written as a dotted quad. */
function isPrivateIpv4(host: string): boolean {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (match === null) return false;
  const [a, b] = [Number(match[1]), Number(match[2])];
  return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
}
