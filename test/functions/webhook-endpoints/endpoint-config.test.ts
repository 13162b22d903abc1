/**
 * Which URLs a deployed endpoint function accepts: public https unless told otherwise, and
 * loopback receivers only for a stage on an AWS emulator (whose functions run on the host).
 */
import { describe, expect, it } from '@jest/globals';
import { readConfiguration } from '../../../functions/shared/platform/configuration.ts';
import { endpointUrlsVariable } from '../../../functions/webhook-endpoints/endpoint-config.ts';
import {
  deployedUrlPolicy,
  localUrlPolicy,
} from '../../../functions/webhook-endpoints/endpoint-url.ts';

function policyOf(environment: Record<string, string>) {
  return readConfiguration(
    'create-webhook-endpoint',
    { WEBHOOK_ENDPOINT_URLS: endpointUrlsVariable(environment) },
    environment,
  ).WEBHOOK_ENDPOINT_URLS;
}

describe('WEBHOOK_ENDPOINT_URLS of an endpoint function', () => {
  it('is the deployed policy when absent or deployed', () => {
    expect(policyOf({})).toBe(deployedUrlPolicy);
    expect(policyOf({ WEBHOOK_ENDPOINT_URLS: 'deployed' })).toBe(deployedUrlPolicy);
  });

  it('allows loopback receivers only where the function’s AWS is an emulator', () => {
    expect(
      policyOf({ WEBHOOK_ENDPOINT_URLS: 'local', AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' }),
    ).toBe(localUrlPolicy);
    expect(() => policyOf({ WEBHOOK_ENDPOINT_URLS: 'local' })).toThrow(
      'WEBHOOK_ENDPOINT_URLS may be local only for a stage on an emulator (AWS_ENDPOINT_URL set), got "local".',
    );
    expect(() => policyOf({ WEBHOOK_ENDPOINT_URLS: 'open' })).toThrow('must be local');
  });
});
