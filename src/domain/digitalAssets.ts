/**
 * Digital-asset destinations: the stablecoins the `digital_asset` rail carries, the networks it names, how
 * an address is checked on each network family, and the routes (asset on a network) an organization starts
 * with. Routes themselves are data per organization (src/modules/compliance/useCases/digitalAssetRoutes.ts).
 *
 * Addresses are checked with maintained, audited primitives rather than patterns alone: Keccak-256 from
 * @noble/hashes for EIP-55 checksums, SHA-256 from the same package for Tron's base58check, and base58 from
 * @scure/base. A pattern says an address has the right alphabet and length; only the checksum says it was
 * not mistyped, and a mistyped address loses the money for good.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { base58 } from '@scure/base';
import { validationError } from './errors.ts';

export const DIGITAL_ASSETS = ['USDC', 'USDT'] as const;
export type DigitalAsset = (typeof DIGITAL_ASSETS)[number];

/** How a network's addresses are written. */
export type AddressFamily = 'evm' | 'solana' | 'tron';

/** Named networks and the family of their addresses. */
export const DIGITAL_ASSET_NETWORK_FAMILIES = {
  ethereum: 'evm',
  polygon: 'evm',
  base: 'evm',
  arbitrum: 'evm',
  solana: 'solana',
  tron: 'tron',
} as const satisfies Record<string, AddressFamily>;
export type DigitalAssetNetwork = keyof typeof DIGITAL_ASSET_NETWORK_FAMILIES;
export const DIGITAL_ASSET_NETWORKS = Object.keys(DIGITAL_ASSET_NETWORK_FAMILIES) as DigitalAssetNetwork[];

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';
/** Each family's address, as a regular expression and in words. */
export const ADDRESS_FORMATS: Record<AddressFamily, { pattern: RegExp; wording: string }> = {
  evm: { pattern: /^0x[0-9a-fA-F]{40}$/, wording: "'0x' and 40 hexadecimal digits" },
  solana: { pattern: new RegExp(`^${BASE58}{32,44}$`), wording: '32 to 44 base58 characters' },
  tron: { pattern: new RegExp(`^T${BASE58}{33}$`), wording: "'T' and 33 base58 characters" },
};

export function isDigitalAsset(value: string): value is DigitalAsset {
  return (DIGITAL_ASSETS as readonly string[]).includes(value);
}

export function isDigitalAssetNetwork(value: string): value is DigitalAssetNetwork {
  return Object.hasOwn(DIGITAL_ASSET_NETWORK_FAMILIES, value);
}

/** Tron's version byte: every mainnet address's payload starts with 0x41 (hence the leading `T`). */
export const TRON_ADDRESS_PREFIX = 0x41;
/** A Tron address decodes to the version byte, 20 address bytes and a 4-byte checksum. */
const TRON_PAYLOAD_BYTES = 21;
const BASE58CHECK_CHECKSUM_BYTES = 4;
/** A Solana address is a 32-byte Ed25519 public key (or a program-derived address of the same size). */
export const SOLANA_PUBLIC_KEY_BYTES = 32;
/** An EVM address is the last 20 bytes of a Keccak-256 hash. */
export const EVM_ADDRESS_BYTES = 20;

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/**
 * The EIP-55 form of an EVM address: each hexadecimal letter upper-cased where the matching nibble of the
 * Keccak-256 of the lower-case address (without `0x`) is 8 or more.
 */
export function toChecksumAddress(address: string): string {
  const lower = address.slice(2).toLowerCase();
  const hash = hex(keccak_256(new TextEncoder().encode(lower)));
  let out = '0x';
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charAt(i);
    out += Number.parseInt(hash.charAt(i), 16) >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

/** Base58check as Bitcoin and Tron write it: the payload and the first 4 bytes of its double SHA-256. */
export function base58check(payload: Uint8Array): string {
  const checksum = sha256(sha256(payload)).subarray(0, BASE58CHECK_CHECKSUM_BYTES);
  const bytes = new Uint8Array(payload.length + checksum.length);
  bytes.set(payload);
  bytes.set(checksum, payload.length);
  return base58.encode(bytes);
}

function base58Bytes(text: string): Uint8Array | undefined {
  try {
    return base58.decode(text);
  } catch {
    return undefined;
  }
}

/** What checking an address found: fine, or why not (a field error code and our wording). */
export type AddressCheck =
  | { ok: true }
  | { ok: false; code: 'invalid_format' | 'invalid_checksum' | 'network_mismatch'; message: string };

/** An address's own family's verdict, without looking at other families. */
function checkFamily(address: string, family: AddressFamily): AddressCheck {
  const shape = ADDRESS_FORMATS[family];
  const badShape: AddressCheck = {
    ok: false,
    code: 'invalid_format',
    message: `it must be ${shape.wording}`,
  };
  if (!shape.pattern.test(address)) return badShape;
  switch (family) {
    case 'evm': {
      // EIP-55: an address all in one case carries no checksum and is taken as written; a mixed-case one
      // is a checksum, and must be the right one.
      const digits = address.slice(2);
      if (digits === digits.toLowerCase() || digits === digits.toUpperCase()) return { ok: true };
      return toChecksumAddress(address) === address
        ? { ok: true }
        : {
            ok: false,
            code: 'invalid_checksum',
            message: 'its mixed-case letters are not its EIP-55 checksum (a typing error?)',
          };
    }
    case 'tron': {
      const bytes = base58Bytes(address);
      if (!bytes || bytes.length !== TRON_PAYLOAD_BYTES + BASE58CHECK_CHECKSUM_BYTES) return badShape;
      const payload = bytes.subarray(0, TRON_PAYLOAD_BYTES);
      if (payload[0] !== TRON_ADDRESS_PREFIX) {
        return {
          ok: false,
          code: 'invalid_format',
          message: 'it is not a Tron mainnet address (prefix 0x41)',
        };
      }
      return base58check(payload) === address
        ? { ok: true }
        : {
            ok: false,
            code: 'invalid_checksum',
            message: 'its base58check checksum does not match (a typing error?)',
          };
    }
    case 'solana': {
      const bytes = base58Bytes(address);
      return bytes?.length === SOLANA_PUBLIC_KEY_BYTES
        ? { ok: true }
        : {
            ok: false,
            code: 'invalid_format',
            message: `it must decode to a ${SOLANA_PUBLIC_KEY_BYTES}-byte public key`,
          };
    }
  }
}

const FAMILY_NAMES: Record<AddressFamily, string> = { evm: 'an EVM', solana: 'a Solana', tron: 'a Tron' };

/**
 * Checks an address on a network: its family's shape, then its checksum (EVM mixed case, Tron). An address
 * of another family (a Tron address given for ethereum) is told apart as `network_mismatch`.
 */
export function checkAddress(address: string, network: DigitalAssetNetwork): AddressCheck {
  const family = DIGITAL_ASSET_NETWORK_FAMILIES[network];
  const own = checkFamily(address, family);
  if (own.ok || own.code !== 'invalid_format') return own;
  for (const other of Object.keys(ADDRESS_FORMATS) as AddressFamily[]) {
    if (other !== family && checkFamily(address, other).ok) {
      return {
        ok: false,
        code: 'network_mismatch',
        message: `it is ${FAMILY_NAMES[other]} address, not one of ${network}`,
      };
    }
  }
  return own;
}

export function addressMatchesNetwork(address: string, network: DigitalAssetNetwork): boolean {
  return checkAddress(address, network).ok;
}

export interface CryptoAddressDestination {
  type: 'crypto_address';
  asset: DigitalAsset;
  network: DigitalAssetNetwork;
  address: string;
}

/** Checks a crypto_address destination's fields; a 400 naming the field at fault. */
export function cryptoAddressDestination(
  asset: string,
  network: string,
  address: string,
): CryptoAddressDestination {
  if (!isDigitalAsset(asset)) {
    throw validationError(
      'destination.asset',
      `destination.asset must be one of: ${DIGITAL_ASSETS.join(', ')}`,
      'invalid_value',
    );
  }
  if (!isDigitalAssetNetwork(network)) {
    throw validationError(
      'destination.network',
      `destination.network must be one of: ${DIGITAL_ASSET_NETWORKS.join(', ')}`,
      'invalid_value',
    );
  }
  const checked = checkAddress(address, network);
  if (!checked.ok) {
    throw validationError(
      'destination.address',
      `destination.address is not a valid ${network} address: ${checked.message}`,
      checked.code,
    );
  }
  return { type: 'crypto_address', asset, network, address };
}

export const ROUTE_STATUSES = ['enabled', 'disabled'] as const;
export type RouteStatus = (typeof ROUTE_STATUSES)[number];

/** An asset on a network, as an organization allows it. */
export interface DigitalAssetRoute {
  organizationId: string;
  asset: DigitalAsset;
  network: DigitalAssetNetwork;
  status: RouteStatus;
  /** Withdrawal limits on the route, in the asset's minor units; null for none beyond the rail's bounds. */
  singleMaxMinor: bigint | null;
  /** What the organization may withdraw on the route per UTC day; null for no limit. */
  dailyMaxMinor: bigint | null;
  updatedAt: Date;
}

/** The routes an organization starts with, all enabled. */
export const DEFAULT_DIGITAL_ASSET_ROUTES: readonly { asset: DigitalAsset; network: DigitalAssetNetwork }[] =
  [
    { asset: 'USDC', network: 'ethereum' },
    { asset: 'USDC', network: 'polygon' },
    { asset: 'USDC', network: 'solana' },
    { asset: 'USDC', network: 'base' },
    { asset: 'USDT', network: 'ethereum' },
    { asset: 'USDT', network: 'tron' },
  ];
