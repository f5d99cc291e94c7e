/**
 * The interface every rail adapter implements: the sandbox simulators now, real partners later.
 * Calls happen outside database transactions, and the same payout may be asked for more than once: a
 * worker that dies after submitting and before recording it, or whose claim ran out while the partner was
 * slow, leaves the transfer to be submitted again. So every submit carries an idempotency reference (the
 * transfer id), which an adapter must pass to the partner as its idempotency key: a repeated submit with
 * the same reference must find the first payout and answer with its reference, never make a second one.
 */
import type { Currency } from '../domain/money.ts';
import type { Transfer } from '../domain/transferRecord.ts';
import type { Rail } from '../domain/transfers.ts';

export interface SubmitRequest {
  /** The partner's idempotency key for this payout: always the transfer id. */
  idempotencyReference: string;
  transfer: Transfer;
}

export type SubmitResult =
  /** `reference` is the partner's id for the payout; the same for every submit with one idempotency reference. */
  { accepted: true; reference: string; checkAt: Date } | { accepted: false; failureCode: string };

/**
 * The `status_reason` of a payout the rail has not decided in time: still processing, its hold kept (the
 * money may have moved), asked about again; the launch gates count it as the scenario's time-out.
 */
export const RAIL_TIMEOUT_REASON = 'rail_timeout';

/**
 * A blockchain network fee the partner reports paid for a transaction, as it reports it: `asset` its own id
 * of the asset that paid it (Fireblocks' `feeCurrency`: for a token transfer the network's native coin),
 * `amount` the decimal it wrote in that asset's units; `currency` and `amountMinor` only when that asset is
 * one the ledger keeps (USDC, USDT).
 */
export interface NetworkFee {
  /** The partner that reports it (its partner name: `fireblocks`). */
  partner: string;
  asset: string;
  amount: string;
  currency?: Currency | undefined;
  amountMinor?: bigint | undefined;
}

export type RailOutcome =
  /** `networkFee`: what the transaction paid the network, once the partner reports it final. */
  (
    | { kind: 'settled'; networkFee?: NetworkFee | undefined }
    | { kind: 'failed'; failureCode: string }
    /** Still with the rail: ask again at checkAt. A reason such as `rail_timeout` is shown on the transfer. */
    | { kind: 'processing'; checkAt: Date; reason?: string }
  ) & {
    /** The partner's id for the payout, when its answer names one; compared with the one recorded. */
    reference?: string;
  };

export interface RailAdapter {
  submit(request: SubmitRequest, now: Date): Promise<SubmitResult>;
  /** Asked only for a transfer that has a recorded rail reference. */
  check(transfer: Transfer, now: Date): Promise<RailOutcome>;
}

export type RailRegistry = Record<Rail, RailAdapter>;
