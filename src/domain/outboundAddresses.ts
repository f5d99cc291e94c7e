/**
 * The outbound address guard, pure: where the service may send a request. One set of rules for every
 * address the server calls: webhook endpoints, rail partners' base URLs, a verification provider, anything
 * added later. `public_only` (pilot and production, and the sandbox's webhooks by default): HTTPS to a
 * public address or a fully qualified public name; `allow_loopback` (the sandbox's rail partners, for its
 * own simulators on this machine): the same, plus HTTP or HTTPS to a loopback address or `localhost` and
 * nothing else that is not public; `allow_private` (the sandbox's webhooks with MKOBA_WEBHOOK_ALLOW_PRIVATE=1,
 * for local development): any host, plain HTTP only to a host that is not public. A name's addresses are
 * checked when the URL is configured and again at every connect (src/outbound/guard.ts), so DNS cannot
 * steer a call to a forbidden address later (rebinding).
 */
import type { Environment } from './access.ts';

export type UrlVerdict = { ok: true } | { ok: false; reason: string };

/** The four octets of a dotted-quad IPv4 address in its canonical decimal form, or undefined. */
export function parseIpv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p))) return undefined;
  const octets = parts.map(Number);
  return octets.every((o) => o <= 255) ? octets : undefined;
}

/** The eight 16-bit groups of an IPv6 address (with `::`, a trailing dotted quad, or a zone), or undefined. */
export function parseIpv6(text: string): number[] | undefined {
  let s = text.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const lastColon = s.lastIndexOf(':');
  if (lastColon < 0) return undefined;
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIpv4(tail);
    if (!v4) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    s = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string | undefined) => (part ? part.split(':') : []);
  const head = groupsOf(halves[0]);
  const rest = groupsOf(halves[1]);
  const groups =
    halves.length === 2
      ? head.length + rest.length <= 7
        ? [...head, ...Array<string>(8 - head.length - rest.length).fill('0'), ...rest]
        : undefined
      : head;
  if (groups?.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return groups.map((g) => Number.parseInt(g, 16));
}

/** A literal IPv4 or IPv6 address (IPv6 with or without brackets). */
export function isIpAddress(text: string): boolean {
  return parseIpv4(text) !== undefined || parseIpv6(text) !== undefined;
}

/**
 * IPv4 blocks that are not public unicast (IANA special-purpose registry): this network, private, shared
 * (carrier-grade NAT), loopback, link-local (cloud metadata), IETF assignments, documentation, 6to4 relay,
 * benchmarking, multicast, reserved and broadcast.
 */
const RESERVED_IPV4_BLOCKS: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

function ipv4Number(octets: readonly number[]): number {
  return octets.reduce((n, o) => n * 256 + o, 0);
}

const RESERVED_IPV4_RANGES = RESERVED_IPV4_BLOCKS.map(([base, bits]) => {
  const start = ipv4Number(parseIpv4(base) ?? []);
  return { start, end: start + 2 ** (32 - bits) - 1 };
});

function isReservedIpv4(octets: readonly number[]): boolean {
  const n = ipv4Number(octets);
  return RESERVED_IPV4_RANGES.some((r) => n >= r.start && n <= r.end);
}

/**
 * IPv6: only global unicast (2000::/3) may be a target, less the IETF-assignment block 2001::/23 (Teredo,
 * benchmarking, ORCHID), documentation (2001:db8::/32, 3fff::/20); forms that carry an IPv4 address
 * (mapped ::ffff:0:0/96, translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by it.
 * Everything else (::, ::1, fc00::/7 unique-local, fe80::/10 link-local, fec0::/10, ff00::/8 multicast,
 * 64:ff9b:1::/48, 100::/64, IPv4-compatible ::/96) is refused.
 */
function isReservedIpv6(g: readonly number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(5) && g5 === 0xffff) return isReservedIpv4(embedded(g6, g7));
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return isReservedIpv4(embedded(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return isReservedIpv4(embedded(g6, g7));
  }
  if (g0 === 0x2002) return isReservedIpv4(embedded(g1, g2));
  if ((g0 & 0xe000) !== 0x2000) return true;
  if (g0 === 0x2001 && g1 < 0x200) return true;
  if (g0 === 0x2001 && g1 === 0xdb8) return true;
  return g0 === 0x3fff && g1 < 0x1000;
}

/**
 * A literal IP address that is not public unicast: loopback, private, link-local (cloud metadata), shared,
 * reserved. A host name is not an address: false. Something shaped like a dotted quad that is not a
 * canonical one (octal, short forms) is refused rather than guessed at.
 */
export function isReservedAddress(address: string): boolean {
  const v4 = parseIpv4(address);
  if (v4) return isReservedIpv4(v4);
  const v6 = parseIpv6(address);
  if (v6) return isReservedIpv6(v6);
  return /^[0-9.]+$/.test(address);
}

/** The host of a URL as a resolver takes it: lower case, IPv6 without brackets, no trailing dot. */
export function urlHost(url: URL): string {
  return url.hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/** Names that only mean something inside a network (RFC 6761, RFC 6762, RFC 8375, ICANN's .internal). */
const LOCAL_NAME_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa'];

function isLocalName(host: string): boolean {
  return host === 'localhost' || LOCAL_NAME_SUFFIXES.some((suffix) => host.endsWith(suffix));
}

/** 127.0.0.0/8 and ::1, also as an IPv4-mapped IPv6 address. */
export function isLoopbackAddress(address: string): boolean {
  const v4 = parseIpv4(address);
  if (v4) return v4[0] === 127;
  const v6 = parseIpv6(address);
  if (!v6) return false;
  if (v6.slice(0, 7).every((g) => g === 0) && v6[7] === 1) return true;
  const mapped = v6.slice(0, 5).every((g) => g === 0) && v6[5] === 0xffff;
  return mapped && (v6[6] ?? 0) >> 8 === 127;
}

function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** Where outbound requests may go; see the module's comment. */
export type OutboundAddressPolicy = 'public_only' | 'allow_loopback' | 'allow_private';

/**
 * The policy for what the server calls on its own (rail partners, a verification provider): the sandbox
 * may reach its own simulators on this machine; pilot and production reach public HTTPS hosts only.
 */
export function outboundPolicyFor(environment: Environment): OutboundAddressPolicy {
  return environment === 'sandbox' ? 'allow_loopback' : 'public_only';
}

/** Whether a resolved (or literal) address may be connected to under the policy. */
export function isAddressAllowed(address: string, policy: OutboundAddressPolicy): boolean {
  if (policy === 'allow_private') return true;
  if (!isReservedAddress(address)) return true;
  return policy === 'allow_loopback' && isLoopbackAddress(address);
}

const NOT_PUBLIC = 'must not be a loopback, private, link-local or reserved address';

/**
 * Checks a URL's form under the policy (see the module's comment). A name is accepted here when its form
 * is public; its addresses are checked where it is resolved (at configuration and at every connect).
 */
export function checkOutboundUrl(text: string, policy: OutboundAddressPolicy): UrlVerdict {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'must be HTTPS' };
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  if (url.hash) return { ok: false, reason: 'must not have a fragment' };
  const host = urlHost(url);
  const literal = isIpAddress(host);
  if (policy === 'allow_private') {
    if (url.protocol === 'https:') return { ok: true };
    const local = literal ? isReservedAddress(host) : isLocalName(host) || !host.includes('.');
    if (local) return { ok: true };
    return {
      ok: false,
      reason: 'must be HTTPS (plain HTTP is allowed only to local and private addresses)',
    };
  }
  if (policy === 'allow_loopback' && (literal ? isLoopbackAddress(host) : isLoopbackName(host))) {
    return { ok: true };
  }
  if (url.protocol !== 'https:') {
    return {
      ok: false,
      reason:
        policy === 'allow_loopback'
          ? 'must be HTTPS (plain HTTP is allowed only to this machine: a loopback address or localhost)'
          : 'must be HTTPS',
    };
  }
  if (literal) return isReservedAddress(host) ? { ok: false, reason: NOT_PUBLIC } : { ok: true };
  if (isLocalName(host)) return { ok: false, reason: 'must be publicly reachable, not a local name' };
  if (!host.includes('.') || /^[0-9.]+$/.test(host)) {
    return { ok: false, reason: 'must name a fully qualified public host' };
  }
  return { ok: true };
}

/** The verdict on what a URL's host name resolved to: every address must be allowed by the policy. */
export function checkResolvedAddresses(
  host: string,
  addresses: readonly string[],
  policy: OutboundAddressPolicy = 'public_only',
): UrlVerdict {
  if (addresses.length === 0) return { ok: false, reason: `host ${host} resolves to no address` };
  const refused = addresses.find((a) => !isAddressAllowed(a, policy));
  if (refused !== undefined) {
    return {
      ok: false,
      reason: `host ${host} resolves to ${refused}, a loopback, private, link-local or reserved address`,
    };
  }
  return { ok: true };
}
