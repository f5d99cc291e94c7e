/**
 * Collections, pure: money asked of a payer into a wallet (a mobile-money request-to-pay: the payer
 * approves on their phone). Statuses, the transitions allowed, and the limits. No money moves until the
 * rail confirms: then the wallet is credited by an inbound transfer, posted through the posting module.
 */
import type { Currency } from '../../domain/money.ts';

/** `sandbox`: the sandbox's fund route, money arriving as if collected (no payer is asked). */
export const COLLECTION_METHODS = ['mobile_money', 'bank_deposit', 'sandbox'] as const;
export type CollectionMethod = (typeof COLLECTION_METHODS)[number];

/** Deposits one bank report holds at most. */
export const BANK_DEPOSITS_PER_REPORT_MAX = 1_000;

export const COLLECTION_STATUSES = ['pending', 'processing', 'succeeded', 'failed'] as const;
export type CollectionStatus = (typeof COLLECTION_STATUSES)[number];

/** How long a payer has to approve before the collection fails `collection_expired`. */
export const COLLECTION_EXPIRY_MS = 15 * 60_000;
/** Characters of a collection's reference (shown to the payer where the partner allows) at most. */
export const COLLECTION_REFERENCE_LENGTH_MAX = 64;
export const COLLECTION_DESCRIPTION_LENGTH_MAX = 140;
/** The failure code of a collection the payer never answered within COLLECTION_EXPIRY_MS. */
export const COLLECTION_EXPIRED_FAILURE = 'collection_expired';
/** The failure code of a collection whose rail has no partner (and no sandbox simulation). */
export const COLLECTION_RAIL_NOT_CONFIGURED = 'rail_not_configured';

const NEXT: Record<CollectionStatus, readonly CollectionStatus[]> = {
  pending: ['processing', 'failed'],
  processing: ['succeeded', 'failed'],
  succeeded: [],
  failed: [],
};

export function canMoveCollection(from: CollectionStatus, to: CollectionStatus): boolean {
  return NEXT[from].includes(to);
}

export const isFinalCollection = (status: CollectionStatus) => NEXT[status].length === 0;

export interface Collection {
  id: string;
  organizationId: string;
  walletId: string;
  amountMinor: bigint;
  currency: Currency;
  /** A request-to-pay asked of a payer, or a bank deposit the bank reported. */
  method: CollectionMethod;
  rail: 'mobile_money' | 'bank';
  /** The mobile-money network (a request-to-pay only). */
  network: string | null;
  /** E.164 with `+` (a request-to-pay only). */
  payerPhone: string | null;
  /** The bank's reference for a deposit: one deposit, one credit. */
  bankReference: string | null;
  /** The payer's name as the bank reported it. */
  payerName: string | null;
  reference: string;
  description: string;
  status: CollectionStatus;
  failureCode: string | null;
  /** The partner's id for the request, once it accepted it. */
  partnerReference: string | null;
  /** When the worker looks at it next; null once final. */
  nextCheckAt: Date | null;
  /** The inbound transfer that credited the wallet, once succeeded. */
  transferId: string | null;
  metadata: Record<string, string>;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
  succeededAt: Date | null;
  failedAt: Date | null;
}

/** What a collection that succeeded as it was recorded says of itself (the rest is the same for all). */
export type SucceededCollectionFields = Pick<
  Collection,
  | 'id'
  | 'organizationId'
  | 'walletId'
  | 'amountMinor'
  | 'currency'
  | 'method'
  | 'rail'
  | 'bankReference'
  | 'payerName'
  | 'reference'
  | 'description'
  | 'transferId'
  | 'metadata'
  | 'createdBy'
>;

/**
 * A collection recorded already succeeded, its money credited in the same transaction (sandbox funding, a
 * bank deposit): no payer phone or network, nothing left for the worker, every time `now`.
 */
export function succeededCollection(fields: SucceededCollectionFields, now: Date): Collection {
  return {
    ...fields,
    network: null,
    payerPhone: null,
    status: 'succeeded',
    failureCode: null,
    partnerReference: null,
    nextCheckAt: null,
    createdAt: now,
    updatedAt: now,
    expiresAt: now,
    succeededAt: now,
    failedAt: null,
  };
}
