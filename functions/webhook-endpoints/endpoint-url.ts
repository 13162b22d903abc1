/**
 * Where a webhook endpoint may point (the SSRF risk): http(s), no user info, a host that is and
 * resolves to public addresses only, judged as numbers after the URL parser read every spelling
 * and again after DNS; the delivery connects to the address it checked (no DNS rebinding).
 */
import { lookup } from 'node:dns/promises';
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { type ErrorCode, endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { type EndpointUrlPolicy, maxUrlLength } from './endpoint-url-policy.ts';

export * from './endpoint-url-policy.ts';

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

/** A host or address that is not public, `message` saying why. */
const notPublic = (message: string) => new EndpointUrlError('not-public', message);

/** The checks that need no network: scheme, no user info, a host that can be public. @throws */
export function parseEndpointUrl(text: unknown, policy: EndpointUrlPolicy): URL {
  const tooLong = () =>
    new EndpointUrlError(
      'malformed',
      `url must be an absolute URL of at most ${maxUrlLength} characters as written by a URL parser.`,
    );
  if (typeof text !== 'string' || text.length === 0) throw tooLong();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new EndpointUrlError('malformed', 'url must be an absolute URL.');
  }
  // What is stored and sent to is the URL as the parser writes it (`href`): é is %C3%A9.
  if (url.href.length > maxUrlLength) throw tooLong();
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
  if (isIPv4(host) || isIPv6(host)) refuseAddress(host, url, policy);
  else refuseName(host, policy);
  return url;
}

/** {@link parseEndpointUrl}, then every address the host resolves to. @throws EndpointUrlError */
export async function checkEndpointUrl(
  text: unknown,
  policy: EndpointUrlPolicy,
): Promise<{ readonly url: URL; readonly addresses: readonly string[] }> {
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

const urlRefusalCodes: Readonly<Record<UrlRefusal, ErrorCode>> = {
  malformed: endpointErrorCodes.endpointUrlMalformed,
  scheme: endpointErrorCodes.endpointUrlScheme,
  userinfo: endpointErrorCodes.endpointUrlUserInfo,
  'not-public': endpointErrorCodes.endpointUrlNotPublic,
  unresolvable: endpointErrorCodes.endpointUrlUnresolvable,
};

/** The URL to store, as the parser writes it, once every check passed. @throws ApiError 4002x */
export async function checkedUrlOf(value: unknown, policy: EndpointUrlPolicy): Promise<string> {
  try {
    return (await checkEndpointUrl(value, policy)).url.href;
  } catch (error) {
    if (!(error instanceof EndpointUrlError)) throw error;
    throw new ApiError(urlRefusalCodes[error.reason], `Invalid webhook endpoint: ${error.message}`);
  }
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
    throw notPublic('url must not point at localhost.');
  }
  const privateSuffix = ['.local', '.internal', '.home.arpa', '.lan'].find((suffix) =>
    name.endsWith(suffix),
  );
  if (privateSuffix !== undefined) {
    throw notPublic(`url's host must be a public name, not one under ${privateSuffix}.`);
  }
  if (!name.includes('.')) {
    throw notPublic("url's host must be a fully qualified public name or address.");
  }
}

/** Refuses a forbidden address; loopback only where the policy does, never port 9001 (Lambda's). */
function refuseAddress(address: string, url: URL, policy: EndpointUrlPolicy, name?: string): void {
  const range = forbiddenRangeOf(address);
  if (range === undefined) return;
  const subject =
    name === undefined ? "url's host" : `url's host ${name} resolves to an address that`;
  if (range.startsWith('loopback')) {
    if (url.port === '9001') {
      throw notPublic(
        `${subject} is the Lambda runtime API's (loopback, port 9001); a webhook endpoint must be public.`,
      );
    }
    if (policy.allowLoopback) return;
  }
  throw notPublic(`${subject} is a ${range} address; a webhook endpoint must be public.`);
}

/**
 * The forbidden range an address is in (`link-local (169.254.0.0/16)`), or `undefined`: IANA's
 * special-purpose ranges as ipaddr.js keeps them, IPv4 carried in IPv6 judged as IPv4.
 */
export function forbiddenRangeOf(address: string): string | undefined {
  if (!ipaddr.isValid(address) || !(isIPv4(address) || isIPv6(address))) return 'malformed';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const embedded = embeddedIpv4Of(parsed as ipaddr.IPv6);
    if (embedded !== undefined) {
      const range = forbiddenRangeOf(embedded.address.toString());
      return range === undefined ? undefined : `${embedded.form} ${range}`;
    }
  }
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  return `${rangeDescriptions[range] ?? range} (${cidrOf(parsed, range)})`;
}

/** ipaddr.js's names of the special ranges, in words (those that are words already left out). */
const rangeDescriptions: Readonly<Record<string, string>> = {
  linkLocal: 'link-local',
  carrierGradeNat: 'shared',
  as112: 'AS112 anycast',
  amt: 'AMT anycast',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'site-local',
  discard: 'discard-only',
  rfc6145: 'IPv4-translated',
  teredo: 'Teredo',
  benchmarking: 'benchmarking',
  as112v6: 'AS112 anycast',
  deprecatedOrchid: 'ORCHID',
  orchid2: 'ORCHIDv2',
  droneRemoteIdProtocolEntityTags: 'drone remote ID',
  segmentRouting: 'segment routing',
};

type SpecialRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** The CIDR of the special range `name` that `address` is in. */
function cidrOf(address: ipaddr.IPv4 | ipaddr.IPv6, name: string): string {
  const special = (address as unknown as { SpecialRanges: Record<string, unknown> }).SpecialRanges;
  const ranges = special[name] as SpecialRange | SpecialRange[];
  const list = (Array.isArray(ranges[0]) ? ranges : [ranges]) as SpecialRange[];
  const found = list.find(([first, bits]) => address.match(first as never, bits)) ?? list[0];
  return found === undefined ? name : `${found[0].toString()}/${found[1]}`;
}

/** The IPv4 address an IPv6 address stands for: IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4. */
function embeddedIpv4Of(
  address: ipaddr.IPv6,
): { readonly form: string; readonly address: ipaddr.IPv4 } | undefined {
  const bytes = address.toByteArray();
  const ipv4 = (offset: number) => new ipaddr.IPv4(bytes.slice(offset, offset + 4));
  if (address.isIPv4MappedAddress()) return { form: 'IPv4-mapped', address: ipv4(12) };
  if (address.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) {
    return { form: 'NAT64', address: ipv4(12) };
  }
  if (address.match(ipaddr.IPv6.parse('2002::'), 16)) return { form: '6to4', address: ipv4(2) };
  return undefined;
}
