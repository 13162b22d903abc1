/**
 * `@aws-sdk/middleware-endpoint-discovery` for the bundles: no DynamoDB command the SDK has today
 * adds its middleware, so its endpoint cache (and the LRU cache that brings, ~1.8 KiB) stays out.
 */

/** The client's configuration step, which only makes that cache: the client is left as it is. */
export const resolveEndpointDiscoveryConfig = <Config>(input: Config): Config => input;

/** What the client reads the setting with (the bundles read only the environment): never set. */
export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: () => undefined,
  default: undefined,
};
