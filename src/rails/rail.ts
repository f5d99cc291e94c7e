/**
 * The interface every rail adapter implements: the sandbox simulators now, real partners later.
 * Calls happen outside database transactions; `submit` must be idempotent on the transfer id, because a
 * worker that dies after submitting and before recording it will submit again.
 */
import type { Transfer } from '../domain/transferRecord.ts';
import type { Rail } from '../domain/transfers.ts';

export type SubmitResult =
  | { accepted: true; reference: string; checkAt: Date }
  | { accepted: false; failureCode: string };

export type RailOutcome =
  | { kind: 'settled' }
  | { kind: 'failed'; failureCode: string }
  /** Still with the rail: ask again at checkAt. A reason such as `rail_timeout` is shown on the transfer. */
  | { kind: 'processing'; checkAt: Date; reason?: string };

export interface RailAdapter {
  submit(transfer: Transfer, now: Date): Promise<SubmitResult>;
  check(transfer: Transfer, now: Date): Promise<RailOutcome>;
}

export type RailRegistry = Record<Rail, RailAdapter>;
