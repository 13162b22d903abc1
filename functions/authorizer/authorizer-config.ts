/**
 * The authorizer's configuration: read once from the environment at cold start and checked, so a
 * missing or wrong setting fails the start with a message naming every problem instead of
 * letting every request through or turning every request away for a reason nobody can see.
 */

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
}

/** Thrown at cold start when the environment does not describe a usable authorizer. */
export class AuthorizerConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`Invalid authorizer configuration:\n- ${problems.join('\n- ')}`);
    this.name = 'AuthorizerConfigError';
    this.problems = problems;
  }
}

/**
 * Reads and checks the authorizer's environment variables: `TOKEN_ISSUER`, `TOKEN_AUDIENCE`
 * (comma-separated), `TOKEN_AUDIENCE_CLAIM` (`aud` or `client_id`, default `aud`), `JWKS_URI`
 * (default `${TOKEN_ISSUER}/.well-known/jwks.json`). An optional variable set to an empty string
 * counts as not set. The scopes each operation needs come from the route table, not from here.
 *
 * @throws {AuthorizerConfigError} listing every problem found, not only the first.
 */
export function readAuthorizerConfig(env: Record<string, string | undefined>): AuthorizerConfig {
  const problems: string[] = [];
  const value = (name: string) => {
    const text = env[name]?.trim();
    return text === '' ? undefined : text;
  };

  const issuer = value('TOKEN_ISSUER');
  if (issuer === undefined) {
    problems.push('TOKEN_ISSUER is required: the exact `iss` of accepted tokens.');
  } else if (!isSecureUrl(issuer)) {
    problems.push(
      `TOKEN_ISSUER must be an https URL (http only on a loopback host), got "${issuer}".`,
    );
  }

  const audiences = (value('TOKEN_AUDIENCE') ?? '')
    .split(',')
    .map((audience) => audience.trim())
    .filter((audience) => audience !== '');
  if (audiences.length === 0) {
    problems.push(
      'TOKEN_AUDIENCE is required: comma-separated audiences or Cognito app client ids.',
    );
  }

  const audienceClaim = value('TOKEN_AUDIENCE_CLAIM') ?? 'aud';
  if (!isAudienceClaim(audienceClaim)) {
    problems.push(
      `TOKEN_AUDIENCE_CLAIM must be one of ${audienceClaims.join(', ')}, got "${audienceClaim}".`,
    );
  }

  const issuerJwksUri =
    issuer !== undefined && isSecureUrl(issuer)
      ? `${issuer.replace(/\/+$/, '')}/.well-known/jwks.json`
      : undefined;
  const jwksUri = value('JWKS_URI') ?? issuerJwksUri;
  if (jwksUri !== undefined && !isSecureUrl(jwksUri)) {
    problems.push(
      `JWKS_URI must be an https URL (http only on a loopback host), got "${jwksUri}".`,
    );
  }

  if (problems.length > 0 || issuer === undefined || jwksUri === undefined) {
    throw new AuthorizerConfigError(problems);
  }
  return {
    issuer,
    audiences,
    audienceClaim: audienceClaim as AudienceClaim,
    jwksUri,
  };
}

function isAudienceClaim(claim: string): claim is AudienceClaim {
  return (audienceClaims as readonly string[]).includes(claim);
}

const loopbackHosts = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Keys fetched over plain http could be swapped by anyone on the path, so http is allowed only
 * for a loopback host: the local issuer's JWKS server during development and tests.
 */
export function isSecureUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return url.protocol === 'https:' || (url.protocol === 'http:' && loopbackHosts.has(url.hostname));
}
