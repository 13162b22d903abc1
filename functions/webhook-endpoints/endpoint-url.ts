/**
 * Where a webhook endpoint may point. A subscriber's URL makes the Plant Store send requests to a
 * place a client chose, so it is the feature's main risk (server-side request forgery): a URL is
 * refused unless it is http(s), without user info, to a host that is and resolves to a public
 * address only. Addresses are judged as numbers, after the URL parser has read every spelling of
 * them (`0xa9fea9fe`, `2852039166`, `0251.0376.0251.0376`, `[::ffff:169.254.169.254]` are all
 * 169.254.169.254), and again after DNS; the delivery connects to the address it checked, so a
 * name that resolves elsewhere later (DNS rebinding) reaches nothing new.
 *
 * Deployed, only https and only public addresses. Locally, http and loopback receivers are
 * allowed (by default) so that developers and tests can receive on their own machine.
 */
import { lookup } from 'node:dns/promises';
import { isIPv4, isIPv6 } from 'node:net';

export interface EndpointUrlPolicy {
  /** Refuse `http:` (deployed stages). */
  readonly httpsOnly: boolean;
  /** Accept receivers on this machine's loopback: 127.0.0.0/8, ::1 and `localhost` (locally). */
  readonly allowLoopback: boolean;
  /** Name resolution: every address of a host name (the system resolver by default). */
  readonly resolve?: (hostname: string) => Promise<readonly string[]>;
}

/** The deployed stages' policy. */
export const deployedUrlPolicy: EndpointUrlPolicy = { httpsOnly: true, allowLoopback: false };

/** `npm start`'s default policy: http and this machine's loopback allowed too. */
export const localUrlPolicy: EndpointUrlPolicy = { httpsOnly: false, allowLoopback: true };

/** Why a URL is refused; each reason has its own error code (`error-codes.ts`). */
export type UrlRefusal = 'malformed' | 'scheme' | 'userinfo' | 'not-public' | 'unresolvable';

/** A URL the policy refuses, with the reason and a message for the client. */
export class EndpointUrlError extends Error {
  override readonly name = 'EndpointUrlError';
  readonly reason: UrlRefusal;
  constructor(reason: UrlRefusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The longest URL an endpoint may have. */
export const maxUrlLength = 2048;

/** A URL that passed the checks, and the public addresses its host resolved to. */
export interface CheckedUrl {
  readonly url: URL;
  readonly addresses: readonly string[];
}

/**
 * The checks that need no network: a URL of an allowed scheme, no user info, and a host that is
 * not a forbidden address or a name that cannot be public.
 * @throws EndpointUrlError
 */
export function parseEndpointUrl(text: unknown, policy: EndpointUrlPolicy): URL {
  if (typeof text !== 'string' || text.length === 0 || text.length > maxUrlLength) {
    throw new EndpointUrlError(
      'malformed',
      `url must be an absolute URL of at most ${maxUrlLength} characters.`,
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new EndpointUrlError('malformed', 'url must be an absolute URL.');
  }
  const schemes = policy.httpsOnly ? ['https:'] : ['https:', 'http:'];
  if (!schemes.includes(url.protocol)) {
    throw new EndpointUrlError(
      'scheme',
      `url must start with ${schemes.map((scheme) => `${scheme}//`).join(' or ')}.`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new EndpointUrlError('userinfo', 'url must not carry a user name or password.');
  }
  const host = hostOf(url);
  if (isIPv4(host) || isIPv6(host)) {
    refuseAddress(host, url, policy);
  } else {
    refuseName(host, policy);
  }
  return url;
}

/**
 * The whole check: {@link parseEndpointUrl}, then every address the host resolves to must be
 * allowed too (one forbidden address refuses the URL).
 * @throws EndpointUrlError
 */
export async function checkEndpointUrl(
  text: unknown,
  policy: EndpointUrlPolicy,
): Promise<CheckedUrl> {
  const url = parseEndpointUrl(text, policy);
  const host = hostOf(url);
  if (isIPv4(host) || isIPv6(host)) return { url, addresses: [host] };
  let addresses: readonly string[];
  try {
    addresses = await (policy.resolve ?? resolveWithSystem)(host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) {
    throw new EndpointUrlError('unresolvable', `url's host ${host} does not resolve.`);
  }
  for (const address of addresses) refuseAddress(address, url, policy, host);
  return { url, addresses };
}

/** The URL's host as a bare name or address: no brackets, lower case, no trailing dot. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

async function resolveWithSystem(hostname: string): Promise<readonly string[]> {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

/** Names that are never public: `localhost` and its subdomains, private-use suffixes, one label. */
function refuseName(name: string, policy: EndpointUrlPolicy): void {
  if (name === 'localhost' || name.endsWith('.localhost')) {
    if (policy.allowLoopback) return;
    throw new EndpointUrlError('not-public', 'url must not point at localhost.');
  }
  const privateSuffix = ['.local', '.internal', '.home.arpa', '.lan'].find((suffix) =>
    name.endsWith(suffix),
  );
  if (privateSuffix !== undefined) {
    throw new EndpointUrlError(
      'not-public',
      `url's host must be a public name, not one under ${privateSuffix}.`,
    );
  }
  if (!name.includes('.')) {
    throw new EndpointUrlError(
      'not-public',
      "url's host must be a fully qualified public name or address.",
    );
  }
}

/**
 * Refuses an address in a forbidden range; a loopback one only where the policy does, and the
 * Lambda runtime API's port on it (9001, inside every function) always.
 */
function refuseAddress(address: string, url: URL, policy: EndpointUrlPolicy, name?: string): void {
  const range = forbiddenRangeOf(address);
  if (range === undefined) return;
  const subject =
    name === undefined ? "url's host" : `url's host ${name} resolves to an address that`;
  if (range.startsWith('loopback')) {
    if (url.port === '9001') {
      throw new EndpointUrlError(
        'not-public',
        `${subject} is the Lambda runtime API's (loopback, port 9001); a webhook endpoint must be public.`,
      );
    }
    if (policy.allowLoopback) return;
  }
  throw new EndpointUrlError(
    'not-public',
    `${subject} is a ${range} address; a webhook endpoint must be public.`,
  );
}

/**
 * The forbidden range an address is in, described (`link-local (169.254.0.0/16)`), or
 * `undefined` for a public address. IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64,
 * 6to4) are judged by that address.
 */
export function forbiddenRangeOf(address: string): string | undefined {
  if (isIPv4(address)) return forbiddenIpv4RangeOf(ipv4Value(address));
  if (!isIPv6(address)) return 'malformed';
  const bytes = ipv6Bytes(address);
  const embedded = embeddedIpv4Of(bytes);
  if (embedded !== undefined) {
    const range = forbiddenIpv4RangeOf(embedded.value);
    return range === undefined ? undefined : `${embedded.form} ${range}`;
  }
  return forbiddenIpv6RangeOf(bytes);
}

/** [first address, prefix length, description] of every forbidden IPv4 range. */
const ipv4Ranges: readonly (readonly [string, number, string])[] = [
  ['0.0.0.0', 8, 'unspecified ("this network", 0.0.0.0/8)'],
  ['10.0.0.0', 8, 'private (10.0.0.0/8)'],
  ['100.64.0.0', 10, 'shared (100.64.0.0/10)'],
  ['127.0.0.0', 8, 'loopback (127.0.0.0/8)'],
  ['169.254.0.0', 16, 'link-local (169.254.0.0/16)'],
  ['172.16.0.0', 12, 'private (172.16.0.0/12)'],
  ['192.0.0.0', 24, 'IETF protocol (192.0.0.0/24)'],
  ['192.0.2.0', 24, 'documentation (192.0.2.0/24)'],
  ['192.168.0.0', 16, 'private (192.168.0.0/16)'],
  ['198.18.0.0', 15, 'benchmarking (198.18.0.0/15)'],
  ['198.51.100.0', 24, 'documentation (198.51.100.0/24)'],
  ['203.0.113.0', 24, 'documentation (203.0.113.0/24)'],
  ['224.0.0.0', 4, 'multicast (224.0.0.0/4)'],
  ['240.0.0.0', 4, 'reserved (240.0.0.0/4, broadcast included)'],
];

function forbiddenIpv4RangeOf(value: number): string | undefined {
  for (const [first, prefix, description] of ipv4Ranges) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    if ((value & mask) >>> 0 === ipv4Value(first)) return description;
  }
  return undefined;
}

function ipv4Value(address: string): number {
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

/** [prefix bytes as hex, prefix length in bits, description] of the forbidden IPv6 ranges. */
const ipv6Ranges: readonly (readonly [string, number, string])[] = [
  ['00000000000000000000000000000000', 128, 'unspecified (::)'],
  ['00000000000000000000000000000001', 128, 'loopback (::1)'],
  // IPv4-compatible addresses (deprecated) and everything else in ::/8.
  ['00', 8, 'reserved (::/8)'],
  ['0100000000000000', 64, 'discard-only (100::/64)'],
  ['0064ff9b0001', 48, 'local-use NAT64 (64:ff9b:1::/48)'],
  ['20010000', 32, 'Teredo (2001::/32)'],
  ['20010db8', 32, 'documentation (2001:db8::/32)'],
  ['fc', 7, 'unique-local (fc00::/7)'],
  ['fe80', 10, 'link-local (fe80::/10)'],
  ['fec0', 10, 'site-local (fec0::/10)'],
  ['ff', 8, 'multicast (ff00::/8)'],
];

function forbiddenIpv6RangeOf(bytes: Uint8Array): string | undefined {
  for (const [prefixHex, bits, description] of ipv6Ranges) {
    if (startsWithBits(bytes, Buffer.from(prefixHex.padEnd(32, '0'), 'hex'), bits)) {
      return description;
    }
  }
  return undefined;
}

/** The IPv4 address an IPv6 address stands for: IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4. */
function embeddedIpv4Of(bytes: Uint8Array): { form: string; value: number } | undefined {
  const value = (offset: number) =>
    (((bytes[offset] ?? 0) << 24) |
      ((bytes[offset + 1] ?? 0) << 16) |
      ((bytes[offset + 2] ?? 0) << 8) |
      (bytes[offset + 3] ?? 0)) >>>
    0;
  const mapped = Buffer.from('00000000000000000000ffff', 'hex');
  if (startsWithBits(bytes, mapped, 96)) return { form: 'IPv4-mapped', value: value(12) };
  const nat64 = Buffer.from('0064ff9b0000000000000000', 'hex');
  if (startsWithBits(bytes, nat64, 96)) return { form: 'NAT64', value: value(12) };
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return { form: '6to4', value: value(2) };
  return undefined;
}

function startsWithBits(bytes: Uint8Array, prefix: Uint8Array, bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 1) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((bytes[byte] ?? 0) & mask) !== ((prefix[byte] ?? 0) & mask)) return false;
  }
  return true;
}

/** The 16 bytes of an IPv6 address in any of its text forms (`::`, a dotted IPv4 tail). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const value = ipv4Value(dotted[1] as string);
    text = `${text.slice(0, dotted.index)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? headGroups
      : [
          ...headGroups,
          ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'),
          ...tailGroups,
        ];
  const bytes = new Uint8Array(16);
  groups.forEach((group, index) => {
    const value = Number.parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  });
  return bytes;
}
