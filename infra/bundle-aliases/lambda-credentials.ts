/**
 * The Lambda bundles' credential provider, in place of the SDK's default chain
 * (`bundleSettings.alias`): Lambda always hands a function its role's credentials in environment
 * variables, and the chain's other links (SSO, ini files, web identity, ECS, EC2 metadata) were a
 * third of an API function's bundle, parsed at every cold start (docs/decisions/bundling.md).
 * Running the sources (tests, `npm start`) keeps the SDK's full chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';
import {
  doesIdentityRequireRefresh,
  isIdentityExpired,
  memoizeIdentityProvider,
} from '@smithy/core';

/**
 * Same signature as the SDK's `defaultProvider`. Memoized like the chain it replaces: the client
 * does not cache a default provider's answer itself, and reading six environment variables on
 * every request costs the warm path ~10 µs. Failures are not cached; credentials with an
 * expiration are read again before they expire.
 */
export function defaultProvider(init?: Parameters<typeof fromEnv>[0]): ReturnType<typeof fromEnv> {
  // `undefined` only for an undefined provider, which fromEnv never is.
  return memoizeIdentityProvider(
    fromEnv(init),
    isIdentityExpired,
    doesIdentityRequireRefresh,
  ) as ReturnType<typeof fromEnv>;
}
