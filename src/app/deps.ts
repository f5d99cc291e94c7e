/** What use cases need from the outside world, passed in so the core stays free of I/O and hidden clocks. */

import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Environment } from '../domain/access.ts';
import type { Approval, ApprovalResourceType } from '../domain/approvals.ts';
import type { PilotCaps } from '../domain/decisions/pilotCaps.ts';
import type { ApprovalRequirement } from '../domain/decisions/policies.ts';
import type { TravelRuleInput } from '../domain/decisions/travelRule.ts';
import type { DigitalAsset, DigitalAssetNetwork } from '../domain/digitalAssets.ts';
import type { EvidenceActor } from '../domain/evidence.ts';
import type { GovernedChangeKind } from '../domain/governedChanges.ts';
import { formatId, ID_PREFIXES, ID_RANDOM_BYTES, type IdKind } from '../domain/ids.ts';
import type { ScreeningIndex } from '../domain/screening/screeningIndex.ts';
import { type Keyring, keyringOf } from '../domain/sealing.ts';
import type { Transfer } from '../domain/transferRecord.ts';
import type { Wallet } from '../domain/wallets.ts';
import { createServiceMetrics, type ServiceMetrics } from '../metrics.ts';
import type { PartnerRailFactories } from '../rails/partner.ts';
import type { NetworkFee } from '../rails/rail.ts';
import type { ReadReplica } from '../store/readReplica.ts';
import type { Queryable, Store } from '../store/store.ts';
import { useCaseHooks } from './composition.ts';

// The driver interface's types, for the layers that hand a transaction on without importing the store.
export type { ReadReplica } from '../store/readReplica.ts';
export type { Queryable, Store } from '../store/store.ts';

/**
 * Refuses a movement of money out of a wallet that may not send one (a savings account): throws the 422
 * problem naming `param`. Called once the wallet is known to exist.
 */
export type MovementSourceGuard = (
  deps: Deps,
  db: Queryable,
  walletId: string,
  param: string,
) => Promise<void>;

/** Runs in a new wallet's transaction and returns the wallet with what it added (its account details). */
export type WalletCreatedHook = (tx: Queryable, deps: Deps, wallet: Wallet) => Promise<Wallet>;

/**
 * What a review case holds, moved on by the capability that owns it when an operator decides the case, in the
 * deciding transaction: a held transfer goes on its way (or to approval) or is rejected; a held on-chain
 * deposit is credited or left owed back.
 */
export interface ReviewSubjects {
  /** Clears or rejects the held transfer as `actor`, who may not clear a transfer they created. */
  transfer(
    tx: Queryable,
    deps: Deps,
    organizationId: string,
    transferId: string,
    decision: 'clear' | 'reject',
    actor: EvidenceActor,
  ): Promise<Transfer>;
  /** Clears (with the originator's Travel Rule data) or rejects a held deposit; what became of it. */
  deposit(
    tx: Queryable,
    deps: Deps,
    organizationId: string,
    depositId: string,
    decision: 'clear' | 'reject',
    travelRule: TravelRuleInput | undefined,
    reviewId: string,
  ): Promise<{ id: string; status: string; transferId: string | null }>;
}

/** A product's once-a-day work (src/modules/testClock/useCases/dayWork.ts runs it). */
export interface DayWork {
  /** Names the work in logs and errors, e.g. `savings_accrual`. */
  name: string;
  /**
   * Organizations that may have days of this work to do (those with accounts of the product), at most
   * `limit`, after `after` in id order: the day worker pages through them.
   */
  organizations(deps: Deps, after: string | undefined, limit: number): Promise<string[]>;
  /**
   * Does every day of the organization's work that is due up to and including `throughDay` (the
   * organization's today, UTC `YYYY-MM-DD`) and not done yet, in day order.
   */
  catchUp(deps: Deps, organizationId: string, throughDay: string): Promise<void>;
}

/** A resource locked for an approval's decision, and how to move it on once the approval is decided. */
export interface LockedResource {
  /** The transfer the approval's evidence names, when the resource is one. */
  transferId?: string;
  /** Moves the resource on after the approval was decided; its status then, or null when it has none. */
  settle(tx: Queryable, deps: Deps, approval: Approval, actor: EvidenceActor): Promise<string | null>;
}

/** What an approval needs of one resource type: supplied by the use case that owns the resource. */
export interface ApprovableResource {
  type: ApprovalResourceType;
  /** Locks the resource (before the approval is locked: the one order every decision takes). */
  lock(tx: Queryable, organizationId: string, resourceId: string): Promise<LockedResource>;
}

/** One handler per resource type an approval can be opened on. */
export type ApprovableResources = { readonly [T in ApprovalResourceType]: ApprovableResource & { type: T } };

/** A change as a route proposes it: the kind, what it does, to what, and the request's body. */
export interface ChangeRequest {
  kind: RegisteredChangeKind;
  action: string;
  /** The resource changed (a member, a rule, a route…), or null for a creation. */
  targetId: string | null;
  /** The request's body (an object; its JSON is what is stored). */
  payload: object;
}

export interface ApplyInput {
  organizationId: string;
  action: string;
  targetId: string | null;
  payload: Record<string, unknown>;
  /** The proposer (member or key id), for use cases that record who created a version. */
  proposedBy: string;
  actor: EvidenceActor;
}

export interface ChangeKind {
  /** Whether this request is governed at all (an API key with only `read`/`write` is not); default yes. */
  governs?(request: ChangeRequest): boolean;
  /** Checks without the database that name the faulty field (the dry run of `apply` checks the rest). */
  check?(deps: Deps, request: ChangeRequest): void;
  /** Seals the secrets of a payload before it is stored, and opens them to apply it. */
  seal?(deps: Deps, changeId: string, payload: Record<string, unknown>): Record<string, unknown>;
  open?(deps: Deps, changeId: string, payload: Record<string, unknown>): Record<string, unknown>;
  /**
   * Why this change needs a second member whatever the policy says (a conversion rate moved past its band),
   * or undefined when the policy alone decides.
   */
  intrinsicApproval?(
    tx: Queryable,
    deps: Deps,
    organizationId: string,
    request: ChangeRequest,
  ): Promise<{ rule: string; approval: ApprovalRequirement } | undefined>;
  /** Makes the change; the new resource's id for a creation. */
  apply(tx: Queryable, deps: Deps, input: ApplyInput): Promise<{ targetId: string | null }>;
}

/** A kind of change this registry makes (the `policy` kind keeps its own record). */
export type RegisteredChangeKind = Exclude<GovernedChangeKind, 'policy'>;

/**
 * A custody provider's deposit address for a wallet's asset on a network (railPartners: the organization's
 * Fireblocks), or undefined when the organization has no custody provider for the network.
 */
export type CustodyDepositAddress = (
  deps: Deps,
  request: { organizationId: string; walletId: string; asset: DigitalAsset; network: DigitalAssetNetwork },
) => Promise<string | undefined>;

/**
 * Prepares the booking of a settling payout's network fee as its partner reported it (`partnerTransactionId`
 * the partner's transaction), in the settling transaction before it locks any account: what it will post to
 * is decided (and a missing account created) now, so the settle locks those accounts with its own in one
 * statement (src/store/lockOrder.ts); it books after the settle's entry, once per partner transaction.
 */
export type PayoutNetworkFee = (
  tx: Queryable,
  deps: Deps,
  transfer: Transfer,
  fee: NetworkFee,
  partnerTransactionId: string,
) => Promise<PayoutNetworkFeeBooking>;

/** A prepared network fee booking (PayoutNetworkFee). */
export interface PayoutNetworkFeeBooking {
  /**
   * The ledger accounts `book` posts to, for the settle to lock with its own: none when it posts nothing (a
   * zero fee, one booked before, one in an asset the ledger holds no account for: an exception instead).
   */
  accounts: readonly string[];
  /** Books the fee, with `accounts` locked: after the settle's own entry. */
  book(): Promise<void>;
}

/**
 * The sandbox's partner simulators as an outsider drives them (src/railWork.ts fills it while they run):
 * money sent into a partner-issued account or address, which then reaches the service the way the partner
 * reports it in production (its webhook, its API). Amounts are decimal strings in major units.
 */
export interface SandboxPartnerFeeds {
  /** A bank transfer into a virtual account number the bank partner (Flutterwave) issued: its charge id. */
  bankTransfer(transfer: {
    accountNumber: string;
    amount: string;
    senderName?: string | undefined;
  }): Promise<{ reference: string }>;
  /** A transfer on chain to a custody partner's (Fireblocks') deposit address: its transaction id and hash. */
  custodyDeposit(deposit: {
    walletId: string;
    asset: DigitalAsset;
    network: DigitalAssetNetwork;
    address: string;
    amount: string;
  }): Promise<{ reference: string; txHash: string }>;
}

export interface Deps {
  store: Store;
  environment: Environment;
  now: () => Date;
  newId: (kind: IdKind) => string;
  randomBytes: (size: number) => Uint8Array;
  /**
   * Every address a host name resolves to (as connecting would find them). Production checks a webhook
   * URL's host with it at subscription time; without it only the URL's form is checked then.
   */
  resolveHost?: (hostname: string) => Promise<string[]>;
  /** Master keys for secrets at rest: webhook secrets and idempotent responses that carry one. */
  keyring: Keyring;
  /**
   * Webhook URLs may point at loopback, private and reserved addresses (MKOBA_WEBHOOK_ALLOW_PRIVATE=1,
   * sandbox only, for local development). Off: the production address rules apply.
   */
  allowPrivateWebhookUrls: boolean;
  /** The process's Prometheus registry and what use cases and workers report to it (src/metrics.ts). */
  metrics?: ServiceMetrics;
  /** Where export files are written and served from (MKOBA_EXPORT_DIR). */
  exportDirectory: string;
  /**
   * The service's public base URL (MKOBA_PUBLIC_URL), on which partners' callback URLs are built; without
   * it a partner cannot be told where to call back.
   */
  publicUrl?: string | undefined;
  /** How each rail partner's adapter is built (src/rails/partners), given by the composition root. */
  railPartnerFactories?: PartnerRailFactories;
  /** The sandbox's running partner simulators; absent when none run (MKOBA_SANDBOX_SIMULATORS=0). */
  sandboxPartnerFeeds?: SandboxPartnerFeeds | undefined;
  /** A pilot's volume caps per organization (MKOBA_ENV=pilot); absent elsewhere, where nothing is capped. */
  pilotCaps?: PilotCaps | undefined;
  /**
   * Pilot and production: the sandbox deployment's database (MKOBA_SANDBOX_DATABASE_URL), only read, where
   * each organization's launch gates are recorded. Absent in the sandbox (its own store is the source) and
   * where it is not linked (every gate is then open until an operator overrides it).
   */
  launchGateSource?: Store | undefined;
  /**
   * DATABASE_READ_URL: the replica the list endpoints read from, through `store` (the HTTP edge runs each
   * list's handler in `listRead` and gives writes' answers a consistency token). Absent: one database.
   */
  readReplica?: ReadReplica | undefined;
  /** MKOBA_CONVERSION_RATE_BAND_BPS; CONVERSION_RATE_BAND_BPS_DEFAULT when absent. */
  conversionRateBandBps?: number | undefined;
  /** The event stream published to (MKOBA_EVENT_STREAM_NAME), if any: retention keeps what it has not published. */
  eventStream?: string | undefined;
  /**
   * How this process builds a sanctions list version's screening index; buildScreeningIndex
   * (src/modules/compliance/useCases/sanctions/screeningIndex.ts) when absent. Tests hold a build open with their own.
   */
  buildScreeningIndex?: (store: Store, versionId: string) => Promise<ScreeningIndex>;
  /*
   * What lower use cases call on higher ones without importing them, filled by the composition root
   * (`useCaseHooks` in src/app/composition.ts, through `systemDeps`).
   */
  /** How approvals lock and move on each resource type (approvals, src/modules/authorization/useCases/approvals.ts). */
  approvableResources: ApprovableResources;
  /** How a decided review case moves the transfer or deposit it holds (src/modules/compliance/useCases/reviews.ts). */
  reviewSubjects: ReviewSubjects;
  /** Checks on the source wallet of every transfer, payment batch item and conversion. */
  movementSourceGuards: readonly MovementSourceGuard[];
  /** What a new wallet is given in its creating transaction, in order. */
  walletCreatedHooks: readonly WalletCreatedHook[];
  /** Every product's day work, in the order a day runs: what the day worker and a test clock's advance run. */
  dayWork: readonly DayWork[];
  /** Where stablecoin deposit addresses come from outside the simulated chain (railPartners' custody). */
  custodyDepositAddress: CustodyDepositAddress;
  /** Prepares the booking of the network fee a settling payout's partner transaction paid (railPartners' network fees). */
  payoutNetworkFee: PayoutNetworkFee;
  /** How each kind of governed change is checked and made (src/modules/authorization/useCases/governedChanges.ts). */
  changeKinds: Readonly<Record<RegisteredChangeKind, ChangeKind>>;
}

export interface SystemDepsOptions {
  /** Without one, sealing a secret fails: only processes that never handle secrets may omit it. */
  keyring?: Keyring;
  allowPrivateWebhookUrls?: boolean;
  /** Where export files go; a directory of its own under the system's temporary directory by default. */
  exportDirectory?: string;
  railPartnerFactories?: PartnerRailFactories;
  publicUrl?: string | undefined;
  pilotCaps?: PilotCaps | undefined;
  launchGateSource?: Store | undefined;
  readReplica?: ReadReplica | undefined;
  conversionRateBandBps?: number | undefined;
  /** Metrics keep subscription and rail partner ids as labels (MKOBA_METRICS_RESOURCE_LABELS=1). */
  metricsResourceLabels?: boolean;
  /** The event stream published to (MKOBA_EVENT_STREAM_NAME), if any: metrics report its lag. */
  eventStream?: string | undefined;
}

/**
 * Ids from the wall clock and the CSPRNG, monotonic within a process: when two ids share a millisecond,
 * the second's random part is the first's plus one, so creation order and id order agree.
 */
export function monotonicIdGenerator(clock: () => number = Date.now): (kind: IdKind) => string {
  let lastTimeMs = -1;
  let lastRandom = new Uint8Array(ID_RANDOM_BYTES);
  return (kind) => {
    let timeMs = clock();
    if (timeMs <= lastTimeMs) {
      timeMs = lastTimeMs;
      const next = Uint8Array.from(lastRandom);
      for (let i = next.length - 1; i >= 0; i--) {
        next[i] = ((next[i] ?? 0) + 1) & 0xff;
        if (next[i] !== 0) break;
      }
      lastRandom = next;
    } else {
      lastTimeMs = timeMs;
      lastRandom = new Uint8Array(randomBytes(ID_RANDOM_BYTES));
    }
    return formatId(ID_PREFIXES[kind], timeMs, lastRandom);
  };
}

export function systemDeps(store: Store, environment: Environment, options: SystemDepsOptions = {}): Deps {
  return {
    store,
    environment,
    keyring: options.keyring ?? keyringOf(undefined),
    allowPrivateWebhookUrls: options.allowPrivateWebhookUrls ?? false,
    exportDirectory: options.exportDirectory ?? path.join(tmpdir(), `mkoba-exports-${process.pid}`),
    ...(options.railPartnerFactories ? { railPartnerFactories: options.railPartnerFactories } : {}),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(options.pilotCaps ? { pilotCaps: options.pilotCaps } : {}),
    ...(options.launchGateSource ? { launchGateSource: options.launchGateSource } : {}),
    ...(options.readReplica ? { readReplica: options.readReplica } : {}),
    ...(options.conversionRateBandBps ? { conversionRateBandBps: options.conversionRateBandBps } : {}),
    ...(options.eventStream ? { eventStream: options.eventStream } : {}),
    metrics: createServiceMetrics(store, undefined, {
      resourceLabels: options.metricsResourceLabels ?? false,
      eventStream: options.eventStream,
    }),
    now: () => new Date(),
    newId: monotonicIdGenerator(),
    randomBytes: (size) => new Uint8Array(randomBytes(size)),
    resolveHost: async (hostname) =>
      (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address),
    ...useCaseHooks(),
  };
}
