/**
 * The bundles' credential provider: Lambda gives a function its role's credentials in the
 * environment, and the chain's other links were a third of a bundle (docs/decisions/bundling.md).
 * The sources keep the SDK's full chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';
import {
  doesIdentityRequireRefresh,
  isIdentityExpired,
  memoizeIdentityProvider,
} from '@smithy/core';

/**
 * The SDK's `defaultProvider`'s signature, memoized as the chain it replaces (~10 µs a request
 * otherwise); failures are not kept, and expiring credentials are read again in time.
 */
export function defaultProvider(init?: Parameters<typeof fromEnv>[0]): ReturnType<typeof fromEnv> {
  // `undefined` only for an undefined provider, which fromEnv never is.
  return memoizeIdentityProvider(
    fromEnv(init),
    isIdentityExpired,
    doesIdentityRequireRefresh,
  ) as ReturnType<typeof fromEnv>;
}
