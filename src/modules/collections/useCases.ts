/**
 * Collections: asking a payer for money into a wallet. Creating one writes no ledger entry; the collection
 * worker asks the payer through the organization's partner (or the sandbox's simulation), and when the rail
 * confirms, the wallet is credited by an inbound transfer posted through the posting module, in the same
 * transaction as the collection's success and its events. Each change is one transaction.
 */

import type { Deps } from '../../app/deps.ts';
import { newEvent, recordEvents } from '../../app/events.ts';
import { getById, listPage } from '../../app/reads.ts';
import { closedWalletError } from '../../domain/closedWallet.ts';
import { PHONE_PATTERN } from '../../domain/contactDetails.ts';
import { invalidStateTransition, validationError } from '../../domain/errors.ts';
import { requireOneOf } from '../../domain/json.ts';
import { numberSourceOf } from '../../domain/jsonNumbers.ts';
import type { Metadata } from '../../domain/metadata.ts';
import { checkSingleAmount, formatAmount, isCurrency, parseAmount } from '../../domain/money.ts';
import type { Transfer } from '../../domain/transferRecord.ts';
import {
  checkRailAmountStep,
  MOBILE_NETWORKS,
  type MobileNetwork,
  phoneMatchesNetwork,
} from '../../domain/transfers.ts';
import type { Wallet } from '../../domain/wallets.ts';
import type { Queryable } from '../../store/store.ts';
import { creditFromRail, fundWallet } from '../transfers/index.ts';
import { requireWallet } from '../wallets/index.ts';
import {
  COLLECTION_DESCRIPTION_LENGTH_MAX,
  COLLECTION_EXPIRY_MS,
  COLLECTION_REFERENCE_LENGTH_MAX,
  type Collection,
  type CollectionStatus,
  canMoveCollection,
  succeededCollection,
} from './domain.ts';
import { findCollection, insertCollection, listCollections, saveCollection } from './repository.ts';

export interface CreateCollectionInput {
  wallet: string;
  amount: string | number;
  currency?: string;
  payer: { type: 'mobile_money'; phone: string; network: string };
  reference?: string;
  description?: string;
  metadata?: Metadata;
}

export function collectionEventData(c: Collection): Record<string, unknown> {
  return {
    collection_id: c.id,
    status: c.status,
    wallet: c.walletId,
    amount: formatAmount(c.amountMinor, c.currency),
    currency: c.currency,
    method: c.method,
    rail: c.rail,
    network: c.network,
    reference: c.reference,
    failure_code: c.failureCode,
    transfer: c.transferId,
  };
}

const collectionEvent = (deps: Deps, c: Collection, now: Date) =>
  newEvent(
    deps,
    {
      organizationId: c.organizationId,
      type: `collection.${c.status === 'pending' ? 'created' : c.status}`,
      resourceId: c.id,
      data: collectionEventData(c),
    },
    now,
  );

/** The wallet a collection credits: one of the organization's, not closed, in the currency asked for. */
async function receivingWallet(
  tx: Queryable,
  organizationId: string,
  input: CreateCollectionInput,
): Promise<Wallet> {
  const wallet = await requireWallet(tx, organizationId, input.wallet, 'wallet');
  if (wallet.status === 'closed') throw closedWalletError(wallet.id, 'wallet');
  if (input.currency !== undefined && (!isCurrency(input.currency) || input.currency !== wallet.currency)) {
    throw validationError(
      'currency',
      `currency must be the wallet's, ${wallet.currency}`,
      'currency_mismatch',
    );
  }
  return wallet;
}

/** The payer's number and network, refused unless the number is an international one on that network. */
function checkPayer(payer: CreateCollectionInput['payer']): { phone: string; network: MobileNetwork } {
  const { phone } = payer;
  const network = requireOneOf(payer.network, MOBILE_NETWORKS, 'payer.network');
  if (!new RegExp(PHONE_PATTERN).test(phone)) {
    throw validationError(
      'payer.phone',
      'payer.phone must be in international format, e.g. +254712345678',
      'invalid_format',
    );
  }
  if (!phoneMatchesNetwork(phone, network)) {
    throw validationError(
      'payer.phone',
      `${phone} is not a number on the ${network} network`,
      'network_mismatch',
    );
  }
  return { phone, network };
}

export async function createCollection(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: CreateCollectionInput,
  createdBy: string | null,
): Promise<Collection> {
  const wallet = await receivingWallet(tx, organizationId, input);
  const amountMinor = checkSingleAmount(
    parseAmount(input.amount, wallet.currency, 'amount', numberSourceOf(input, 'amount')),
    wallet.currency,
  );
  const { phone, network } = checkPayer(input.payer);
  checkRailAmountStep('mobile_money', network, wallet.currency, amountMinor);
  const now = deps.now();
  const id = deps.newId('collection');
  const collection: Collection = {
    id,
    organizationId,
    walletId: wallet.id,
    amountMinor,
    currency: wallet.currency,
    method: 'mobile_money',
    rail: 'mobile_money',
    network,
    payerPhone: phone,
    bankReference: null,
    payerName: null,
    reference: (input.reference ?? id).slice(0, COLLECTION_REFERENCE_LENGTH_MAX),
    description: (input.description ?? 'Payment').slice(0, COLLECTION_DESCRIPTION_LENGTH_MAX),
    status: 'pending',
    failureCode: null,
    partnerReference: null,
    nextCheckAt: now,
    transferId: null,
    metadata: input.metadata ?? {},
    createdBy,
    createdAt: now,
    updatedAt: now,
    expiresAt: new Date(now.getTime() + COLLECTION_EXPIRY_MS),
    succeededAt: null,
    failedAt: null,
  };
  await insertCollection(tx, collection);
  await recordEvents(tx, deps, [collectionEvent(deps, collection, now)]);
  return collection;
}

export interface CollectionChange {
  to: CollectionStatus;
  failureCode?: string | undefined;
  partnerReference?: string | undefined;
  /** The partner's receipt for the money paid (M-Pesa's receipt number), kept on the credit. */
  partnerReceipt?: string | undefined;
  nextCheckAt?: Date | null | undefined;
}

/**
 * Moves a locked collection along its status machine, with its effect: success credits the wallet (an
 * inbound transfer from the rail's settlement account), and each move emits its event.
 */
export async function moveCollection(
  tx: Queryable,
  deps: Deps,
  collection: Collection,
  change: CollectionChange,
): Promise<Collection> {
  if (!canMoveCollection(collection.status, change.to)) {
    throw invalidStateTransition(
      'Collection cannot move',
      `Collection ${collection.id} is ${collection.status}; it cannot become ${change.to}.`,
    );
  }
  const now = deps.now();
  let transferId = collection.transferId;
  if (change.to === 'succeeded') {
    const wallet = await requireWallet(tx, collection.organizationId, collection.walletId);
    const credit = await creditFromRail(tx, deps, wallet, {
      amountMinor: collection.amountMinor,
      rail: collection.rail,
      network: collection.network,
      railReference: change.partnerReference ?? collection.partnerReference,
      partnerReceipt: change.partnerReceipt ?? null,
      statusReason: 'collection',
      metadata: { ...collection.metadata, collection: collection.id },
    });
    transferId = credit.id;
  }
  const final = change.to === 'succeeded' || change.to === 'failed';
  const moved: Collection = {
    ...collection,
    status: change.to,
    failureCode: change.to === 'failed' ? (change.failureCode ?? 'partner_rejected') : null,
    partnerReference: change.partnerReference ?? collection.partnerReference,
    nextCheckAt: final ? null : (change.nextCheckAt ?? collection.nextCheckAt),
    transferId,
    updatedAt: now,
    succeededAt: change.to === 'succeeded' ? now : collection.succeededAt,
    failedAt: change.to === 'failed' ? now : collection.failedAt,
  };
  await saveCollection(tx, moved);
  await recordEvents(tx, deps, [collectionEvent(deps, moved, now)]);
  return moved;
}

/**
 * The sandbox's fund route: the wallet credited at once, as if a payer had paid, recorded as a collection
 * (`sandbox`, succeeded) like any money in. Answers the inbound transfer, as the route always has.
 */
export async function sandboxFunding(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
  amount: string | number,
  metadata: Metadata,
  amountText?: string,
): Promise<Transfer> {
  const transfer = await fundWallet(tx, deps, organizationId, walletId, amount, metadata, amountText);
  const now = deps.now();
  const collection = succeededCollection(
    {
      id: deps.newId('collection'),
      organizationId,
      walletId,
      amountMinor: transfer.amountMinor,
      currency: transfer.currency,
      method: 'sandbox',
      rail: 'mobile_money',
      bankReference: null,
      payerName: null,
      reference: transfer.id,
      description: 'Sandbox funding',
      transferId: transfer.id,
      metadata,
      createdBy: null,
    },
    now,
  );
  await insertCollection(tx, collection);
  await recordEvents(tx, deps, [collectionEvent(deps, collection, now)]);
  return transfer;
}

export const getCollection = getById<Collection>(findCollection, 'collection');

export const listOrganizationCollections = listPage(listCollections);
