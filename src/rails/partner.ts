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
  /** A callback the partner sends that changes nothing (an acknowledgement, a queue time-out notice). */
  | { kind: 'ignored'; reason: string };

/** A callback as it arrived: the bytes are kept so a signature can be checked over exactly them. */
export interface ArrivedCallback {
  /** The path after the organization's token, for instance `b2c/result` or `stk`. */
  path: string;
  headers: Record<string, string | undefined>;
  rawBody: string;
}

/** Thrown by parseCallback for a body that is not the partner's shape: answered 400, stored, never applied. */
export class MalformedCallbackError extends Error {
  override name = 'MalformedCallbackError';
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
   * Asks the partner to reverse a settled payout (optional: a partner without one cannot reverse). Accepted
   * is not done: the result arrives as a `reversal` callback, or `checkReversal` asks for it.
   */
  reverse?(request: ReversalRequest, now: Date): Promise<SubmitResult>;
  /** Asks again about an accepted reversal whose result has not come; the answer may arrive as a callback. */
  checkReversal?(reference: string, idempotencyReference: string, now: Date): Promise<RailOutcome>;
}

export type PartnerRailFactory = (
  fields: {
    settings: Record<string, string>;
    credentials: Record<string, string>;
    /** Where the adapter may connect: the outbound address guard's policy for this deployment. */
    addressPolicy: OutboundAddressPolicy;
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
