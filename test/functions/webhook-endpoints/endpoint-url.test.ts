/**
 * The SSRF rules of webhook endpoint URLs: every spelling of every forbidden address, names that
 * resolve to one, and what the local policy allows that the deployed one does not.
 */
import { describe, expect, it } from '@jest/globals';
import {
  checkEndpointUrl,
  deployedUrlPolicy,
  type EndpointUrlError,
  type EndpointUrlPolicy,
  forbiddenRangeOf,
  localUrlPolicy,
} from '../../../functions/webhook-endpoints/endpoint-url.ts';

/** A resolver answering from a table, as DNS would: the names tests use resolve nowhere else. */
const dns: Record<string, readonly string[]> = {
  'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'rebind.example.com': ['93.184.215.14', '169.254.169.254'],
  'metadata.example.com': ['169.254.169.254'],
  'mapped.example.com': ['::ffff:10.0.0.1'],
  'loopback.example.com': ['127.0.0.1'],
  localhost: ['127.0.0.1', '::1'],
};
const resolve = async (name: string) => dns[name] ?? [];
const deployed: EndpointUrlPolicy = { ...deployedUrlPolicy, resolve };
const local: EndpointUrlPolicy = { ...localUrlPolicy, resolve };

async function refusal(url: unknown, policy: EndpointUrlPolicy) {
  try {
    await checkEndpointUrl(url, policy);
    return 'accepted';
  } catch (error) {
    return (error as EndpointUrlError).reason;
  }
}

describe('webhook endpoint URLs, deployed', () => {
  it.each([
    // Link-local: the instance metadata service, in every spelling the URL parser reads.
    ['https://169.254.169.254/latest/meta-data/', 'not-public'],
    ['https://0xa9fea9fe/', 'not-public'],
    ['https://2852039166/', 'not-public'],
    ['https://0251.0376.0251.0376/', 'not-public'],
    ['https://0xA9.0xFE.0xA9.0xFE/', 'not-public'],
    ['https://169.254.43518/', 'not-public'],
    ['https://[::ffff:169.254.169.254]/', 'not-public'],
    ['https://[::ffff:a9fe:a9fe]/', 'not-public'],
    ['https://[0:0:0:0:0:ffff:a9fe:a9fe]/', 'not-public'],
    ['https://[64:ff9b::a9fe:a9fe]/', 'not-public'],
    ['https://[2002:a9fe:a9fe::1]/', 'not-public'],
    ['https://[fe80::1]/', 'not-public'],
    // Loopback, unspecified and their short forms.
    ['https://127.0.0.1/', 'not-public'],
    ['https://127.1/', 'not-public'],
    ['https://0177.0.0.1/', 'not-public'],
    ['https://2130706433/', 'not-public'],
    ['https://[::1]/', 'not-public'],
    ['https://[::ffff:127.0.0.1]/', 'not-public'],
    ['https://0.0.0.0/', 'not-public'],
    ['https://0/', 'not-public'],
    ['https://[::]/', 'not-public'],
    ['https://localhost/', 'not-public'],
    ['https://LOCALHOST./', 'not-public'],
    ['https://api.localhost/', 'not-public'],
    // Private, shared, unique-local, multicast, reserved, documentation.
    ['https://10.0.0.1/', 'not-public'],
    ['https://172.16.0.1/', 'not-public'],
    ['https://172.31.255.255/', 'not-public'],
    ['https://192.168.1.1/', 'not-public'],
    ['https://100.64.0.1/', 'not-public'],
    ['https://100.127.255.255/', 'not-public'],
    ['https://[fc00::1]/', 'not-public'],
    ['https://[fd12:3456::1]/', 'not-public'],
    ['https://224.0.0.1/', 'not-public'],
    ['https://[ff02::1]/', 'not-public'],
    ['https://255.255.255.255/', 'not-public'],
    ['https://192.0.2.1/', 'not-public'],
    ['https://[2001:db8::1]/', 'not-public'],
    ['https://[::ffff:10.0.0.1]/', 'not-public'],
    // Ranges of IANA's registries a hand-kept list missed: the 6to4 relay anycast, ORCHIDv2,
    // and the documentation range of RFC 9637.
    ['https://192.88.99.1/', 'not-public'],
    ['https://[2001:20::1]/', 'not-public'],
    ['https://[3fff::1]/', 'not-public'],
    // Names: private-use suffixes, a single label, resolving to a forbidden address (any one).
    ['https://printer.local/', 'not-public'],
    ['https://db.internal/', 'not-public'],
    ['https://metadata/', 'not-public'],
    ['https://metadata.example.com/', 'not-public'],
    ['https://rebind.example.com/', 'not-public'],
    ['https://mapped.example.com/', 'not-public'],
    ['https://loopback.example.com/', 'not-public'],
    ['https://nowhere.example.com/', 'unresolvable'],
    // Scheme, user info, and what is not a URL.
    ['http://hooks.example.com/', 'scheme'],
    ['ftp://hooks.example.com/', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['gopher://hooks.example.com/', 'scheme'],
    ['https://user:secret@hooks.example.com/', 'userinfo'],
    ['https://user@hooks.example.com/', 'userinfo'],
    ['https://hooks.example.com@169.254.169.254/', 'userinfo'],
    ['/relative/path', 'malformed'],
    ['hooks.example.com/plants', 'malformed'],
    ['', 'malformed'],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, 'malformed'],
    // Short as sent, 6,023 characters as the URL parser writes it (each é is %C3%A9).
    [`https://hooks.example.com/${'é'.repeat(1000)}`, 'malformed'],
    [42, 'malformed'],
  ])('refuses %s (%s)', async (url, reason) => {
    expect(await refusal(url, deployed)).toBe(reason);
  });

  it.each([
    'https://hooks.example.com/plants',
    'https://hooks.example.com:8443/plants?token=x',
    'https://93.184.215.14/hooks',
    'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hooks',
  ])('accepts %s', async (url) => {
    expect(await refusal(url, deployed)).toBe('accepted');
  });

  it('gives the addresses the host resolved to, for the delivery to connect to', async () => {
    const { addresses } = await checkEndpointUrl('https://hooks.example.com/x', deployed);
    expect(addresses).toEqual(dns['hooks.example.com']);
  });

  it('names the range in the message', async () => {
    await expect(checkEndpointUrl('https://0xa9fea9fe/', deployed)).rejects.toThrow(
      "url's host is a link-local (169.254.0.0/16) address; a webhook endpoint must be public.",
    );
  });
});

describe('webhook endpoint URLs, locally', () => {
  it.each([
    'http://127.0.0.1:4000/hooks',
    'http://localhost:4000/hooks',
    'http://[::1]:4000/hooks',
    'https://hooks.example.com/plants',
  ])('accepts %s', async (url) => {
    expect(await refusal(url, local)).toBe('accepted');
  });

  it.each([
    ['http://127.0.0.1:9001/2018-06-01/runtime/invocation/next', 'not-public'],
    ['http://localhost:9001/', 'not-public'],
    ['http://169.254.169.254/', 'not-public'],
    ['http://10.0.0.1/', 'not-public'],
    ['http://[::ffff:127.0.0.1]/', 'not-public'],
    ['http://user@127.0.0.1/', 'userinfo'],
  ])('still refuses %s', async (url, reason) => {
    expect(await refusal(url, local)).toBe(reason);
  });
});

describe('forbiddenRangeOf', () => {
  it('judges IPv6 forms of IPv4 addresses by the IPv4 address', () => {
    expect(forbiddenRangeOf('::ffff:8.8.8.8')).toBeUndefined();
    expect(forbiddenRangeOf('64:ff9b::808:808')).toBeUndefined();
    expect(forbiddenRangeOf('::ffff:192.168.0.1')).toBe('IPv4-mapped private (192.168.0.0/16)');
    expect(forbiddenRangeOf('2002:c0a8:0001::')).toBe('6to4 private (192.168.0.0/16)');
  });

  it('keeps the edges of each range', () => {
    expect(forbiddenRangeOf('172.15.255.255')).toBeUndefined();
    expect(forbiddenRangeOf('172.32.0.0')).toBeUndefined();
    expect(forbiddenRangeOf('100.63.255.255')).toBeUndefined();
    expect(forbiddenRangeOf('100.128.0.0')).toBeUndefined();
    expect(forbiddenRangeOf('223.255.255.255')).toBeUndefined();
    expect(forbiddenRangeOf('fbff::1')).toBeUndefined();
    expect(forbiddenRangeOf('febf::1')).toBe('link-local (fe80::/10)');
  });
});
