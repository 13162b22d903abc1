/**
 * The credential provider of the Lambda bundles, in place of the SDK's default chain
 * (`@aws-sdk/credential-provider-node`, see `bundleSettings.alias`).
 *
 * The Lambda runtime always hands a function its role's credentials in environment variables,
 * the first link of the default chain. The other links (SSO, ini files, process, web identity,
 * ECS, EC2 metadata) and the STS/SSO clients they bring are never used in Lambda, yet they made
 * up a third of an API function's bundle, all parsed at every cold start. A bundle run without
 * environment credentials fails its store calls with the SDK's own "Unable to find environment
 * variable credentials" (`sam local` passes them too). Running the sources (tests, `npm start`)
 * keeps the SDK's full chain.
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
