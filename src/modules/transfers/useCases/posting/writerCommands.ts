/**
 * What the ledger writer takes and gives back: a transfer command (validated, with what needs no lock read
 * before the writer), a refusal recorded under its key, and a payment batch chunk's results with the steps
 * its transaction runs around the writer's.
 */

import type { IdempotencyContext, IdempotentOutcome } from '../../../../app/idempotency.ts';
import type { Policy } from '../../../../domain/decisions/policies.ts';
import type { ScreeningSummary } from '../../../../domain/decisions/transferCompliance.ts';
import type { AppError } from '../../../../domain/errors.ts';
import type { EvidenceDraft } from '../../../../domain/evidence.ts';
import type { Transfer } from '../../../../domain/transferRecord.ts';
import type { Queryable } from '../../../../store/store.ts';
import type { CustomerPolicyFacts } from '../../../customers/index.ts';
import type { PostingSession, WaitingMovement } from '../../../ledger/index.ts';

export interface TransferCommand {
  kind: 'transfer';
  /** Fully validated; status and ledger state are set by the decision. */
  transfer: Transfer;
  /** The customer who owns the paying wallet. */
  sourceCustomerId: string;
  debitAccountId: string;
  creditAccountId: string;
  /** The organization's fee income account in the currency, when the transfer has a fee (docs/FEES.md). */
  feeAccountId?: string | undefined;
  /** The counterparty's screening, done before the writer (it needs no lock); absent when no name was given. */
  screening?: ScreeningSummary | undefined;
  /** The organization's current authorization policy, read before the writer. */
  policy: Policy;
  /** The paying customer's KYC status and risk level, when a rule of the policy names them. */
  customer?: CustomerPolicyFacts | undefined;
  /** Internal transfers post at once; rail transfers hold until the rail reports. */
  settleAtOnce: boolean;
  /**
   * A movement that waited before reaching the writer (a payment batch's item): it passes the release gate
   * over its wallets as locked in this batch before it is posted.
   */
  released?: WaitingMovement | undefined;
  /** A payment batch item whose batch was approved: that approval covers a rule asking for one. */
  coveredByApproval?: string | undefined;
  /** Travel Rule data given with the transfer: appended as evidence only if the transfer is accepted. */
  travelRule?: EvidenceDraft | undefined;
  idempotency: IdempotencyContext;
  /** The wire form returned to the client and stored for replays. */
  present: (transfer: Transfer) => unknown;
}

/**
 * A request refused before it reached the ledger for a reason that is recorded under its key (a wallet that
 * does not exist): it passes through the writer only so the refusal is claimed and recorded like any other.
 */
export interface RefusalCommand {
  kind: 'refusal';
  error: AppError;
  idempotency: IdempotencyContext;
}

export type WriterCommand = TransferCommand | RefusalCommand;

/** What one command of a chunk came to: its outcome, and the transfer when one was created. */
export interface ChunkResult {
  outcome: IdempotentOutcome | AppError;
  transfer?: Transfer | undefined;
}

/**
 * A payment batch's chunk runs in a transaction of its own with these steps around the writer's: the batch
 * row is locked first; its reservation is released (with the accounts locked) before the items are decided,
 * and what the items did is recorded, and what is still to pay reserved again, before the commit.
 */
export interface ChunkSteps {
  /** Accounts the steps post to, locked with the items' accounts. */
  accounts: readonly string[];
  lockFirst(tx: Queryable): Promise<void>;
  beforeDecide(session: PostingSession, now: Date): void;
  /** Posts what follows from the results (the new reservation) in the session, before it is written. */
  afterDecide(session: PostingSession, results: ChunkResult[], now: Date): void;
  /** Records the items and the batch, once the transfers and entries they refer to are written. */
  record(tx: Queryable, results: ChunkResult[], now: Date): Promise<void>;
}
