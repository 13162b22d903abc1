/**
 * The TOKEN authorizer: no valid token, `Unauthorized` (401); else a policy allowing exactly the
 * routes its scopes grant, or Deny (403), and the client's API key (docs/decisions/).
 */
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { grantsRoute, routeResource, routes } from '../shared/http/routes.ts';
import { withinInvocationBudget } from '../shared/platform/invocation-budget.ts';
import {
  createLogger,
  type InvocationContext,
  invocationLoggers,
  type Logger,
} from '../shared/platform/logger.ts';
import { flushSpans, inSpan, type SpanOptions } from '../shared/platform/spans.ts';
import { requestTrace } from '../shared/platform/trace-context.ts';
import {
  bucketKeyValue,
  clientKeyValue,
  type RegisterClientKey,
  sharedClient,
} from './client-keys.ts';
import type { AuthorizerConfig } from './config.ts';
import {
  type BearerTokenVerifierOptions,
  createBearerTokenVerifier,
  type RejectionReason,
  rejectionReasonOf,
  type VerifiedToken,
} from './verify-bearer-token.ts';

export type TokenAuthorizerHandler = (
  event: APIGatewayTokenAuthorizerEvent,
  context?: InvocationContext,
) => Promise<APIGatewayAuthorizerResult>;

export interface AuthorizerOptions extends BearerTokenVerifierOptions {
  readonly logger?: Logger;
  /** Adds a client's key to the usage plan (`handler.ts` makes one where a plan is named). */
  readonly registerClientKey?: RegisterClientKey;
}

/** What the function behind the gateway finds in `requestContext.authorizer`. */
export interface AuthorizerContext {
  readonly sub: string;
  /** Space-separated, as in the token. */
  readonly scope: string;
  // API Gateway context values must be strings, numbers or booleans.
  readonly [key: string]: string;
}

/**
 * `true` on the line of every `Unauthorized`: a canary subtracts these from the errors; and the
 * warning of a client key the control plane did not take, counted apart from the JWKS's failures.
 */
export const authorizerLog = {
  unauthorizedField: 'unauthorized',
  clientKeyNotAdded: 'Could not add the client to the usage plan; counting it as the shared client',
} as const;

/** The authorizer for one configuration; the JWKS cache lives as long as the handler. */
export function createHandler(
  config: AuthorizerConfig,
  options: AuthorizerOptions = {},
): TokenAuthorizerHandler {
  const verifyBearerToken = createBearerTokenVerifier(config, options);
  const loggerOf = invocationLoggers(options.logger ?? createLogger({ service: 'authorizer' }));
  const planName = config.usagePlanName ?? 'local';
  const { registerClientKey } = options;

  /** The client's key, registered; the shared client's while its own cannot be (logged). */
  const usageKeyOf = async (token: VerifiedToken, logger: Logger) => {
    const value = clientKeyValue(planName, token.client);
    if (registerClientKey === undefined) return value;
    try {
      return await registerClientKey(value, bucketKeyValue(planName, token.client));
    } catch (error) {
      // API Gateway's control plane, not the token: the request goes on, as the shared client.
      logger.warn(authorizerLog.clientKeyNotAdded, { error, sub: token.subject });
      return clientKeyValue(planName, sharedClient);
    }
  };

  // Its own span in API Gateway's X-Ray trace: a TOKEN event carries no `traceparent`.
  const span = () => ({ kind: 'server', service: 'authorizer', context: requestTrace(undefined) });
  return (event, context) =>
    // The key's registration stops in time for the answer: past it, the shared client's key.
    inSpan('authorizer', span() as SpanOptions, () =>
      withinInvocationBudget(context, authorizerMarginMilliseconds, () =>
        authorize(event, context),
      ),
    ).finally(() => flushSpans((context?.getRemainingTimeInMillis?.() ?? 5_000) - 100));

  async function authorize(event: APIGatewayTokenAuthorizerEvent, context?: InvocationContext) {
    const logger = loggerOf(context);
    const stage = stageArnOf(event.methodArn);
    if (stage === undefined) {
      logger.error('Rejected a request with an unexpected methodArn', {
        methodArn: event.methodArn,
        [authorizerLog.unauthorizedField]: true,
      });
      throw Object.assign(new Error('Unauthorized'), { code: { statusCode: 401 } });
    }
    let token: VerifiedToken;
    try {
      token = await verifyBearerToken(event.authorizationToken);
    } catch (error) {
      logRejection(logger, error);
      // API Gateway's UNAUTHORIZED (401) takes this exact message; the span records a 401.
      throw Object.assign(new Error('Unauthorized'), { code: { statusCode: 401 } });
    }
    const granted = routes.filter((route) => grantsRoute(token.scopes, route));
    if (granted.length === 0) {
      logger.warn('Denied a token that grants no operation', { sub: token.subject });
      return policy(token, 'Deny', [`${stage}/*/*`]);
    }
    const resources = granted.map((route) => `${stage}/${routeResource(route)}`);
    return {
      ...policy(token, 'Allow', resources),
      usageIdentifierKey: await usageKeyOf(token, logger),
    };
  }
}

/** What the authorizer keeps of its 5 s for its answer once the key's registration stops. */
export const authorizerMarginMilliseconds = 500;

/** `arn:…:execute-api:{region}:{account}:{api}/{stage}` of a method ARN, or `undefined`. */
export function stageArnOf(methodArn: string): string | undefined {
  const [arn, partition, service, region, account, path] = methodArn.split(':');
  const [apiId, stage] = path?.split('/') ?? [];
  const parts = [partition, region, account, apiId, stage];
  if (arn !== 'arn' || service !== 'execute-api' || parts.some((part) => !part)) return undefined;
  return `arn:${partition}:execute-api:${region}:${account}:${apiId}/${stage}`;
}

function policy(
  token: VerifiedToken,
  effect: 'Allow' | 'Deny',
  resources: readonly string[],
): APIGatewayAuthorizerResult {
  const context: AuthorizerContext = { sub: token.subject, scope: token.scope };
  return {
    principalId: token.subject,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: [...resources] }],
    },
    context,
  };
}

// Failures an operator must hear about: the issuer's keys are unavailable, or a fault of ours.
const operatorReasons: readonly RejectionReason[] = [
  'jwks-unavailable',
  'jwks-invalid',
  'unexpected',
];

/**
 * Logs a rejection: a fixed reason code, never the error's message, which may quote the token;
 * an operator's failure keeps the error, but a fault of ours only its name and stack frames.
 */
function logRejection(logger: Logger, error: unknown): void {
  const reason = rejectionReasonOf(error);
  if (operatorReasons.includes(reason)) {
    logger.error('Could not verify the bearer token; failing closed', {
      reason,
      error: reason === 'unexpected' ? withoutMessage(error) : error,
      [authorizerLog.unauthorizedField]: true,
    });
  } else {
    logger.warn('Rejected the bearer token', { reason, [authorizerLog.unauthorizedField]: true });
  }
}

/** An error's name and stack frames, without its message. */
function withoutMessage(error: unknown): { name: string; stack?: string } {
  if (!(error instanceof Error)) return { name: typeof error };
  const frames = error.stack?.split('\n').filter((line) => line.trimStart().startsWith('at '));
  return { name: error.name, ...(frames === undefined ? {} : { stack: frames.join('\n') }) };
}
