/**
 * The TOKEN authorizer, called and cached as API Gateway does.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import type { TokenAuthorizerHandler } from './gateway-types.ts';
import { createLambdaContext, invokeWithTimeout } from './proxy-integration.ts';

export type AuthorizerDecision =
  | {
      readonly outcome: 'allow';
      readonly authorizerContext: Record<string, unknown>;
      /** The API key the usage plan counts the request under. */
      readonly usageIdentifierKey?: string;
    }
  | { readonly outcome: 'UNAUTHORIZED' | 'ACCESS_DENIED' | 'DEFAULT_5XX' };

/**
 * Calls the authorizer with a TOKEN event and decides as API Gateway does. Policies are cached per
 * token for the TTL and evaluated against each method ARN, which is why the authorizer returns a
 * policy for the whole API. A thrown "Unauthorized" is not cached.
 */
export function createCachedAuthorizer(
  authorizer: TokenAuthorizerHandler,
  ttlMilliseconds: number,
) {
  const cache = new Map<string, { result: APIGatewayAuthorizerResult; expiresAt: number }>();

  const callAuthorizer = async (
    token: string,
    methodArn: string,
    timeoutMilliseconds: number,
  ): Promise<APIGatewayAuthorizerResult | 'UNAUTHORIZED' | 'DEFAULT_5XX'> => {
    const cached = cache.get(token);
    if (cached !== undefined && cached.expiresAt > Date.now()) return cached.result;
    try {
      const result = await invokeWithTimeout(
        () =>
          authorizer(
            { type: 'TOKEN', authorizationToken: token, methodArn },
            createLambdaContext('authorizer', timeoutMilliseconds),
          ),
        timeoutMilliseconds,
      );
      // Lambda ends an authorizer at its timeout, and API Gateway answers 500 (an authorizer
      // failure, answered with DEFAULT_5XX's body); nothing is cached.
      if (result === 'timeout' || result instanceof Error) throw result;
      if (!isAuthorizerResult(result)) return 'DEFAULT_5XX';
      if (ttlMilliseconds > 0) {
        removeExpiredEntries(cache);
        cache.set(token, { result, expiresAt: Date.now() + ttlMilliseconds });
      }
      return result;
    } catch (error) {
      // The one way a Lambda authorizer says 401 is failing with exactly this message.
      return error instanceof Error && error.message === 'Unauthorized'
        ? 'UNAUTHORIZED'
        : 'DEFAULT_5XX';
    }
  };

  return async (
    token: string,
    methodArn: string,
    timeoutMilliseconds: number,
  ): Promise<AuthorizerDecision> => {
    const result = await callAuthorizer(token, methodArn, timeoutMilliseconds);
    if (typeof result === 'string') return { outcome: result };
    if (!isAllowed(result.policyDocument.Statement, methodArn)) return { outcome: 'ACCESS_DENIED' };
    return {
      outcome: 'allow',
      authorizerContext: {
        ...result.context,
        principalId: result.principalId,
        integrationLatency: 0,
      },
      ...(typeof result.usageIdentifierKey === 'string'
        ? { usageIdentifierKey: result.usageIdentifierKey }
        : {}),
    };
  };
}

function removeExpiredEntries(cache: Map<string, { expiresAt: number }>): void {
  const now = Date.now();
  for (const [key, entry] of cache) if (entry.expiresAt <= now) cache.delete(key);
}

interface PolicyStatement {
  readonly Effect: string;
  readonly Action?: string | readonly string[];
  readonly Resource?: string | readonly string[];
}

function isAuthorizerResult(value: unknown): value is APIGatewayAuthorizerResult {
  if (typeof value !== 'object' || value === null) return false;
  const { principalId, policyDocument, context } = value as Record<string, unknown>;
  const statements = (policyDocument as { Statement?: unknown } | undefined)?.Statement;
  // API Gateway accepts only flat context values; an object or array fails the request.
  const flatContext =
    context === undefined ||
    (typeof context === 'object' &&
      context !== null &&
      Object.values(context).every((entry) =>
        ['string', 'number', 'boolean'].includes(typeof entry),
      ));
  return typeof principalId === 'string' && Array.isArray(statements) && flatContext;
}

/** IAM evaluation, reduced to what an authorizer policy uses: an explicit Deny wins over Allow. */
function isAllowed(statements: readonly unknown[], methodArn: string): boolean {
  const matching = (statements as PolicyStatement[]).filter(
    (statement) =>
      toList(statement.Action).some((action) => matchesWildcard(action, 'execute-api:Invoke')) &&
      toList(statement.Resource).some((resource) => matchesWildcard(resource, methodArn)),
  );
  return (
    matching.some((statement) => statement.Effect === 'Allow') &&
    !matching.some((statement) => statement.Effect === 'Deny')
  );
}

function toList(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/** IAM wildcards: `*` matches any run of characters (slashes included), `?` any one. */
function matchesWildcard(pattern: string, value: string): boolean {
  const source = pattern
    .split('')
    .map((character) => {
      if (character === '*') return '.*';
      if (character === '?') return '.';
      return character.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`).test(value);
}
