/**
 * `@aws-sdk/middleware-endpoint-discovery` for the bundles: no DynamoDB command the SDK has today
 * adds its middleware, so its cache (and the LRU cache it brings, ~1.8 KiB with it) stays out, and
 * a client that asked for discovery would fail loudly.
 */
export function resolveEndpointDiscoveryConfig<Config>(input: Config): Config {
  if ((input as { endpointDiscoveryEnabled?: boolean }).endpointDiscoveryEnabled) {
    throw new Error('Endpoint discovery is not bundled in the functions (infra/bundling.ts).');
  }
  return input;
}

/** What the client's runtime configuration reads the setting with: never set here. */
export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: () => undefined,
  configFileSelector: () => undefined,
  default: undefined,
};
