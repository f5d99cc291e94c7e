/**
 * Dated payload versions of events, pure. An event is stored once, in the newest shape; a subscription is
 * pinned to the version it was created with (or chose) and every payload it receives is rendered in that
 * version, by undoing each breaking change made after it, newest first, until the subscriber moves forward.
 * Each breaking payload change gets a new date here and a CHANGELOG.md entry saying which.
 */
import {
  LAUNCH_PRODUCTS,
  type LaunchProduct,
  productOfMovement,
  STABLECOIN_CURRENCIES,
} from './organizationProfile.ts';
import type { Rail } from './transfers.ts';

export const PAYLOAD_VERSIONS = ['2026-11-22', '2026-11-26', '2026-11-28', '2026-12-06'] as const;
export type PayloadVersion = (typeof PAYLOAD_VERSIONS)[number];
export const PAYLOAD_VERSION_LATEST: PayloadVersion = '2026-12-06';
/**
 * The version of subscriptions made before versions were recorded: the shape they were receiving then, so
 * recording versions changed nothing they receive.
 */
export const PAYLOAD_VERSION_OF_UNPINNED_SUBSCRIPTIONS: PayloadVersion = '2026-11-28';

export function isPayloadVersion(text: string): text is PayloadVersion {
  return (PAYLOAD_VERSIONS as readonly string[]).includes(text);
}

/** Versions are ISO dates, so they order as text. */
export function isBefore(version: PayloadVersion, other: PayloadVersion): boolean {
  return version < other;
}

/** The envelope fields a version may change, as the newest version renders them. */
export interface VersionedPayload {
  type: string;
  product: string;
  data: Record<string, unknown>;
}

/** One breaking payload change: the version that made it, what it was, and the shape before it. */
export interface PayloadChange {
  version: PayloadVersion;
  summary: string;
  /** The payload as the version before `version` rendered it. */
  undo(payload: VersionedPayload): VersionedPayload;
}

/** What the envelope's `product` was before it named the product family. */
export const PRODUCT_NAME_BEFORE_FAMILIES = 'mkoba';

/** The failure codes the release gate (2026-11-28) gives a transfer that waited and no longer passes. */
const RELEASE_GATE_FAILURE_CODES: readonly string[] = [
  'wallet_not_active',
  'pilot_cap_exceeded',
  'policy_denied',
];
/** The code versions before 2026-11-28 gave a transfer Mkoba refused after accepting it. */
const REFUSED_AFTER_ACCEPTANCE_CODE = 'compliance_rejected';

/** Newest first: rendering for an older version undoes each change made after it, in this order. */
export const PAYLOAD_CHANGES: readonly PayloadChange[] = [
  {
    version: '2026-12-06',
    summary:
      '`product` names the product family the resource belongs to (`mobile_money`, `digital_banking`, `stablecoins`); it was always `mkoba`.',
    undo: (payload) => ({ ...payload, product: PRODUCT_NAME_BEFORE_FAMILIES }),
  },
  {
    version: '2026-11-28',
    summary:
      '`transfer.failed` may follow `pending_approval` and `in_review`, with the release gate’s `failure_code` (`wallet_not_active`, `pilot_cap_exceeded`, `policy_denied`); before, such a refusal carried `compliance_rejected`.',
    undo: (payload) => {
      const code = payload.data.failure_code;
      if (!payload.type.startsWith('transfer.') || typeof code !== 'string') return payload;
      if (!RELEASE_GATE_FAILURE_CODES.includes(code)) return payload;
      return { ...payload, data: { ...payload.data, failure_code: REFUSED_AFTER_ACCEPTANCE_CODE } };
    },
  },
  {
    version: '2026-11-26',
    summary:
      '`aml.alert.*` carry `conversion_quote_id`, and `transfer_id` is null for an alert a conversion opened.',
    undo: (payload) => {
      if (!payload.type.startsWith('aml.alert.') || !('conversion_quote_id' in payload.data)) return payload;
      const { conversion_quote_id: _removed, ...data } = payload.data;
      return { ...payload, data };
    },
  },
];

/** A payload of the newest version as `version` renders it. */
export function renderPayloadVersion(payload: VersionedPayload, version: PayloadVersion): VersionedPayload {
  let rendered = payload;
  for (const change of PAYLOAD_CHANGES) {
    if (!isBefore(version, change.version)) break;
    rendered = change.undo(rendered);
  }
  return rendered;
}

const isRail = (value: unknown): value is Rail => typeof value === 'string';

/** The product of money moving on `rail` in `currency`; a book transfer in a fiat currency is a wallet's. */
function productOfMoney(rail: unknown, currency: unknown): LaunchProduct {
  if (!isRail(rail) || typeof currency !== 'string') return 'mobile_money';
  return productOfMovement({ rail, currency }) ?? 'mobile_money';
}

/** Wallets are the mobile-money platform's, unless they hold a stablecoin. */
const productOfCurrency = (currency: unknown): LaunchProduct =>
  typeof currency === 'string' && STABLECOIN_CURRENCIES.includes(currency) ? 'stablecoins' : 'mobile_money';

/**
 * The product family an event's resource belongs to, from its type and data. Money follows its rail and
 * currency (productOfMovement); deposits and conversions are stablecoins; savings, loans and bank deposits
 * are digital banking; a launch gate names its product. Resources every product shares (customers,
 * policies, approvals, fees, exports, subscriptions, the test clock) belong to the mobile-money platform,
 * the product every organization starts with.
 */
export function productOfEvent(type: string, data: Record<string, unknown>): LaunchProduct {
  const family = type.slice(0, type.indexOf('.'));
  switch (family) {
    case 'transfer':
    case 'ledger':
      return productOfMoney(data.rail, data.currency);
    case 'collection':
      return data.method === 'bank_deposit' || data.rail === 'bank' ? 'digital_banking' : 'mobile_money';
    case 'deposit':
    case 'conversion':
      return 'stablecoins';
    case 'savings':
    case 'loan':
      return 'digital_banking';
    case 'wallet':
    case 'payment_batch':
      return productOfCurrency(data.currency);
    case 'safeguarding':
    case 'rail_partner':
    case 'reconciliation':
      return typeof data.rail === 'string'
        ? productOfMoney(data.rail, data.currency)
        : productOfCurrency(data.currency);
    case 'aml':
      return data.transfer_id === null && typeof data.conversion_quote_id === 'string'
        ? 'stablecoins'
        : 'mobile_money';
    case 'launch_gate':
      return LAUNCH_PRODUCTS.find((product) => product === data.product) ?? 'mobile_money';
    default:
      return 'mobile_money';
  }
}
