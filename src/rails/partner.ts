/**
 * A partner rail: a RailAdapter for payouts that also takes collections (money in) and reads the partner's
 * asynchronous callbacks. One instance serves one organization's credentials on one rail; the composition
 * root builds it from the organization's stored (encrypted) configuration.
 *
 * Calls to the partner happen outside database transactions. A callback is stored before it is parsed,
 * and parsing is pure: it names the payout or collection the callback is about and its outcome; applying
 * it (once, idempotently) is the application's job, not the adapter's.
 */

import type { Currency } from '../domain/money.ts';
import type { OutboundAddressPolicy } from '../domain/outboundAddresses.ts';
import type { Transfer } from '../domain/transferRecord.ts';
import type { OutboundFetch } from '../outbound/guard.ts';
import type { BalanceQueryAnswer, BalancesReport } from './balances.ts';
import type { RailAdapter, RailOutcome, SubmitResult } from './rail.ts';

/** Where the partner must send its callbacks for one organization, ending without a slash. */
export interface CallbackTarget {
  /** An absolute https URL ending in the organization's unguessable path token. */
  baseUrl: string;
}

/** Money asked of a payer: a request-to-pay (the payer approves on their phone). */
export interface CollectionRequest {
  /** The partner's idempotency key for this collection: always the collection id. */
  idempotencyReference: string;
  amountMinor: bigint;
  currency: Currency;
  /** E.164, with the leading `+`. */
  payerPhone: string;
  /** Shown to the payer where the partner allows it (an account reference, a note). */
  reference: string;
  description: string;
}

export type CollectResult =
  /** `reference` is the partner's id for the request; the same for every call with one idempotency reference. */
  { accepted: true; reference: string; checkAt: Date } | { accepted: false; failureCode: string };

/** A settled payout sent back by the partner: the money returns to the paying wallet once it confirms. */
export interface ReversalRequest {
  /** Our reversal's id: sent where the partner echoes it, so a result can name it. */
  idempotencyReference: string;
  transfer: Transfer;
  /** The partner's receipt for the payout to reverse, as its settling callback reported it. */
  partnerTransactionId: string;
  /** Why, as the partner's free text allows. */
  remarks: string;
}

/** What a callback says, once parsed. */
export type CallbackReport =
  | {
      kind: 'payout' | 'collection' | 'reversal';
      /** The partner's id for the payout, collection or reversal, as `submit`, `collect` or `reverse` returned it. */
      reference: string;
      /** Our idempotency reference (the transfer or collection id), when the partner echoes it. */
      idempotencyReference?: string;
      outcome: Exclude<RailOutcome, { kind: 'processing' }> | { kind: 'processing'; checkAt: Date };
      /** The partner's receipt or transaction id for the money moved, where it gives one. */
      partnerTransactionId?: string;
      /** The amount the partner reports, in minor units, where it gives one (compared with ours). */
      amountMinor?: bigint;
      /** A reversal's: the partner's receipt of the payout it undid, where the partner names it. */
      originalTransactionId?: string;
    }
  /** Money a payer sent on their own to the organization (M-Pesa C2B: a paybill or till payment). */
  | CreditReport
  /** The result of a balance query the partner answers by callback (M-Pesa's Account Balance). */
  | BalancesReport
  /** The partner's own answer about such a payment, asked for before it is credited. */
  | CreditVerificationReport
  /** A custody partner's transaction between its own vault accounts (a sweep) reported ended without completing. */
  | CustodySweepReport
  /** A callback the partner sends that changes nothing (an acknowledgement, a queue time-out notice). */
  | { kind: 'ignored'; reason: string };

/**
 * A sweep's transaction reported failed (or cancelled, blocked, rejected). While the sweep is on its way the
 * sweep pass's poll decides it; one already completed was booked, so the report is raised for an operator.
 */
export interface CustodySweepReport {
  kind: 'sweep';
  /** The partner's id for the transaction. */
  reference: string;
  /** Our sweep's id, the transaction's externalTxId. */
  sweepId: string;
  notCompleted: { status: string; subStatus: string };
}

/**
 * A payer's own payment into the organization, naming the account it is for: asked about before it
 * completes (`validation`, answered at once with a CreditDecision) or reported completed (`confirmation`).
 */
export interface CreditReport {
  kind: 'credit';
  stage: 'validation' | 'confirmation';
  /** The partner's id for the payment (M-Pesa's TransID): one payment, one credit. */
  partnerTransactionId: string;
  /** What the payer quoted to name the account (a wallet's reference), as sent. */
  accountReference: string;
  amountMinor: bigint;
  currency: Currency;
  /** The payer as the partner shows them (a masked number, a first name), for people to read. */
  payer: string;
}

/**
 * What the partner itself says about a payer's payment a credit callback reported (asked with `verifyCredit`,
 * because credit callbacks are not signed): only a `completed` payment, of the reported amount, received by
 * our own account, is credited.
 */
export interface CreditVerificationReport {
  kind: 'credit_verification';
  /** The payment asked about: the credit report's `partnerTransactionId`. */
  partnerTransactionId: string;
  /**
   * The partner's id for the question this answers (M-Pesa: the query's ConversationID), as `verifyCredit`
   * returned it: an answer echoing no question we asked is not believed. Absent for a synchronous answer.
   */
  queryReference?: string;
  /** `pending`: the partner cannot tell yet (or could not answer): asked again later. */
  outcome: 'completed' | 'not_found' | 'failed' | 'pending';
  /** The amount the partner says moved, in minor units (a completed payment's). */
  amountMinor?: bigint;
  /** The receiving account as the partner names it, for people to read. */
  receiver?: string;
  /** Whether that account is the organization's own (the one payers pay). */
  toOurAccount: boolean;
}

/** How `verifyCredit` went: the partner answered at once, or will answer at a callback naming `queryReference`. */
export type CreditVerificationAsk = { answer: CreditVerificationReport } | { queryReference: string };

/** A bank account number a partner issues for one wallet (Flutterwave: a static virtual account). */
export interface WalletAccountNumberRequest {
  /** The wallet the account is for (named in the call log, never sent). */
  walletId?: string;
  /** The wallet's virtual account reference: the account's `tx_ref`, named by each deposit into it. */
  walletReference: string;
  email: string;
  /** The holder's BVN, where the partner requires one: sent, never stored. */
  bvn: string;
  currency: Currency;
}

export interface WalletAccountNumber {
  accountNumber: string;
  bankName: string;
  orderRef: string;
  flwRef?: string;
}

/** Whether a payer's payment may complete: the answer to a `validation` credit report. */
export type CreditDecision =
  | { accepted: true }
  | { accepted: false; reason: 'unknown_account' | 'account_unavailable' };

/**
 * Money a custody partner holds for us arrived at one of the organization's deposit addresses and is final
 * on the partner's side (Fireblocks: COMPLETED); recorded as a chain deposit with its confirmations.
 */
export interface CustodyDepositReport {
  network: string;
  address: string;
  /** A decimal string in the asset's units. */
  amount: string;
  txHash: string;
  logIndex: number;
  /**
   * Set when the partner reports the deposit no longer completed, after it was (a status after COMPLETED:
   * FAILED, REJECTED, …): never credited nor taken back by itself, but raised for an operator.
   */
  notCompleted?: { status: string; subStatus: string };
}

/** A callback as it arrived: the bytes are kept so a signature can be checked over exactly them. */
export interface ArrivedCallback {
  /** The path after the organization's token, for instance `b2c/result` or `stk`. */
  path: string;
  headers: Record<string, string | undefined>;
  rawBody: string;
  /** How the signature was verified before the callback was stored (`verifyCallback`'s answer), if it was. */
  verifiedBy?: string | null;
}

/** Thrown by parseCallback for a body that is not the partner's shape: answered 400, stored, never applied. */
export class MalformedCallbackError extends Error {
  override name = 'MalformedCallbackError';
}

/**
 * Thrown by verifyCallback when the signature cannot be checked now (the partner's published keys cannot
 * be fetched): the callback is refused with a retryable status and not stored; the partner sends it again,
 * and polling recovers what it reports meanwhile.
 */
export class CallbackVerificationUnavailableError extends Error {
  override name = 'CallbackVerificationUnavailableError';
}

export interface PartnerRail extends RailAdapter {
  /** The partner's name in configuration and metrics, such as `mpesa_daraja` or `mtn_momo`. */
  readonly partner: string;
  collect(request: CollectionRequest, now: Date): Promise<CollectResult>;
  /** Asked only for a collection that has a partner reference. */
  checkCollection(reference: string, idempotencyReference: string, now: Date): Promise<RailOutcome>;
  /** Pure: throws MalformedCallbackError for a body it cannot read; verifies a signature where the partner signs. */
  parseCallback(callback: ArrivedCallback): CallbackReport;
  /**
   * Checks a signature whose check needs a network call (keys fetched from the partner), before the callback
   * is stored and before any transaction opens. Returns how it was verified (stored with the callback and
   * handed to parseCallback as `verifiedBy`), or undefined when the callback carries nothing for it (then
   * parseCallback checks it). Throws MalformedCallbackError for a signature that does not verify, and
   * CallbackVerificationUnavailableError when it cannot be checked now.
   */
  verifyCallback?(callback: ArrivedCallback): Promise<string | undefined>;
  /**
   * A custody partner's: the deposit a callback reports, or undefined when it reports none (it is then
   * read by parseCallback). Throws MalformedCallbackError as parseCallback does.
   */
  parseDeposit?(callback: ArrivedCallback): CustodyDepositReport | undefined;
  /** The body to answer a credit callback with, in the partner's shape (partners that send credit callbacks). */
  answerCredit?(report: CreditReport, decision: CreditDecision): Record<string, unknown>;
  /** Tells the partner where to send credit callbacks, where it asks for them once rather than per request. */
  registerCreditUrls?(): Promise<CreditUrlRegistration>;
  /**
   * Asks the partner about a payment a credit callback reported, before it is credited. A partner with it
   * has every confirmation held `verifying` until the answer; one without it credits a confirmation at once
   * (its callbacks are trusted as they arrive: signed, or guarded by the callback address alone).
   */
  verifyCredit?(report: CreditReport, now: Date): Promise<CreditVerificationAsk>;
  /** Issues a wallet its own bank account number, where the partner can; asking again gives the same one. */
  issueWalletAccountNumber?(request: WalletAccountNumberRequest): Promise<WalletAccountNumber>;
  /**
   * Asks the partner to reverse a settled payout (optional: a partner without one cannot reverse). Accepted
   * is not done: the result arrives as a `reversal` callback, or `checkReversal` asks for it.
   */
  reverse?(request: ReversalRequest, now: Date): Promise<SubmitResult>;
  /** Asks again about an accepted reversal whose result has not come; the answer may arrive as a callback. */
  checkReversal?(reference: string, idempotencyReference: string, now: Date): Promise<RailOutcome>;
  /** Asks for the partner's own account balances (optional: a partner without a balance API has none). */
  queryBalances?(now: Date): Promise<BalanceQueryAnswer>;
}

/** What a partner was told about credit callbacks: for which account, where, and what happens unanswered. */
export interface CreditUrlRegistration {
  /** The partner's account payers pay (M-Pesa: the paybill or till). */
  account: string;
  validationUrl: string;
  confirmationUrl: string;
  /** Whether the partner completes (`Completed`) or cancels (`Cancelled`) a payment whose validation is unanswered. */
  whenUnanswered: 'Completed' | 'Cancelled';
}

/**
 * A durable record of payout requests, for an adapter whose partner API takes no idempotency key (M-Pesa
 * B2B): a request is recorded before it goes out, so a repeated submit can tell one may already have
 * reached the partner, and must not send another (it would be a second payment).
 */
export interface PayoutRequestJournal {
  /** Records that a request for the payout is about to go out; false when one was recorded before. */
  begin(transferId: string): Promise<boolean>;
  /** The partner acknowledged the payout's request under this id. */
  acknowledge(transferId: string, partnerRequestId: string): Promise<void>;
  /** The partner refused the request outright (it reached no payment system): a later submit may send one. */
  release(transferId: string): Promise<void>;
  /** The partner's id for the payout's request, once acknowledged. */
  partnerRequestId(transferId: string): Promise<string | undefined>;
}

export type PartnerRailFactory = (
  fields: {
    settings: Record<string, string>;
    credentials: Record<string, string>;
    /** Where the adapter may connect: the outbound address guard's policy for this deployment. */
    addressPolicy: OutboundAddressPolicy;
    /** The configuration's payout request journal (kept in the database by the directory). */
    payoutRequests?: PayoutRequestJournal;
    /** Wraps the adapter's fetch so every request is recorded (the directory's call log). */
    recordCalls?: (fetch: OutboundFetch) => OutboundFetch;
  },
  callbacks: CallbackTarget,
) => PartnerRail;

/** Each partner's factory, by the partner's name (`RAIL_PARTNERS` in the rail partners' domain). */
export type PartnerRailFactories = Readonly<Record<string, PartnerRailFactory>>;

/** Thrown instead of calling a paused partner or one whose bucket is empty: the call is deferred, not failed. */
export class RailPartnerUnavailableError extends Error {
  override name = 'RailPartnerUnavailableError';
  constructor(
    readonly reason: 'rail_paused' | 'rail_rate_limited',
    readonly retryAfterMs: number,
  ) {
    super(reason === 'rail_paused' ? 'the rail partner is paused' : 'the rail partner rate limit is reached');
  }
}

/** A rail for one transfer: the adapter, and the guard every call to it goes through. */
export interface ResolvedRail {
  adapter: RailAdapter;
  call<T>(work: () => Promise<T>): Promise<T>;
}

/** A partner's rail, guarded: payouts, collections and callbacks. */
export interface ResolvedPartnerRail extends ResolvedRail {
  adapter: PartnerRail;
}
