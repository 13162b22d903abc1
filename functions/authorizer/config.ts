/**
 * The authorizer's configuration, read and checked at cold start: a wrong setting fails the start
 * naming every problem, rather than letting every request through or turning all away.
 */
import * as v from 'valibot';
import {
  ConfigurationError,
  commaList,
  optional,
  parsed,
  readConfiguration,
} from '../shared/platform/configuration.ts';

export const audienceClaims = ['aud', 'client_id'] as const;

/** `aud` for OIDC tokens; `client_id` for Cognito access tokens, which carry no `aud`. */
export type AudienceClaim = (typeof audienceClaims)[number];

export interface AuthorizerConfig {
  /** The exact `iss` a token must carry. */
  readonly issuer: string;
  /** The accepted audiences or Cognito app client ids: a token must name at least one. */
  readonly audiences: readonly string[];
  readonly audienceClaim: AudienceClaim;
  /** Where the issuer's public keys are published (https, or http on a loopback host). */
  readonly jwksUri: string;
  /** Whether `jwksUri` may be http on a private IPv4 too: `sam local` only. @default false */
  readonly jwksOnPrivateNetwork?: boolean;
  /** The usage plan the authorizer adds each client's key to; unset locally. */
  readonly usagePlanName?: string;
  /** API Gateway's control plane, where not AWS's. */
  readonly apiGatewayUrl?: string;
  /** The webhook log table, which records the keys in the plan; unset locally. */
  readonly clientKeysTableName?: string;
  /** DynamoDB, where not AWS's. */
  readonly dynamoDbUrl?: string;
}

export class AuthorizerConfigError extends ConfigurationError {
  override readonly name = 'AuthorizerConfigError';
}

/** The authorizer's variables, checked. @throws {AuthorizerConfigError} naming every problem */
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
      WEBHOOK_LOG_TABLE_NAME: optional,
      DYNAMODB_ENDPOINT: optional,
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
    // An emulator's: named, or every AWS client's (`AWS_ENDPOINT_URL`).
    apiGatewayUrl: variables.API_GATEWAY_ENDPOINT ?? (env.AWS_ENDPOINT_URL?.trim() || undefined),
    clientKeysTableName: variables.WEBHOOK_LOG_TABLE_NAME,
    dynamoDbUrl: variables.DYNAMODB_ENDPOINT ?? (env.AWS_ENDPOINT_URL?.trim() || undefined),
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
  const claim = text.trim() as AudienceClaim;
  if (!audienceClaims.includes(claim))
    throw new Error(`must be one of ${audienceClaims.join(', ')}`);
  return claim;
}

const loopbackHosts = new Set(['127.0.0.1', '[::1]', 'localhost']);

export interface SecureUrlOptions {
  /** Allow plain http on a private IPv4 address (`sam local`'s Docker bridge). @default false */
  readonly jwksOnPrivateNetwork?: boolean;
}

/** http only on a loopback host, or under `sam local` a private IPv4 (the Docker bridge). */
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
