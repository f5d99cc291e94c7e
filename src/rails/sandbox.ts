/**
 * Simulated rails for the sandbox, behind the same interface a real rail implements. Outcomes are
 * deterministic functions of the destination (the magic values in the README) and of elapsed time.
 */
import { createHash } from 'node:crypto';
import type { Transfer } from '../domain/transferRecord.ts';
import {
  RAIL_TIMEOUT_REASON,
  type RailAdapter,
  type RailOutcome,
  type RailRegistry,
  type SubmitRequest,
  type SubmitResult,
} from './rail.ts';

/** How long the "settles after a delay" magic number takes. */
export const SANDBOX_DELAYED_SETTLEMENT_MS = 10_000;
/** How often a transfer that the rail keeps processing (the time-out number) is looked at again. */
export const SANDBOX_TIMEOUT_RECHECK_MS = 60_000;

export type SandboxBehaviour =
  | { kind: 'settle' }
  | { kind: 'fail'; failureCode: string }
  | { kind: 'timeout' }
  | { kind: 'settle_after'; delayMs: number };

/** Magic mobile-money numbers; any other valid number settles. */
export const SANDBOX_PHONE_BEHAVIOURS: Record<string, SandboxBehaviour> = {
  '+254700000000': { kind: 'settle' },
  '+254700000001': { kind: 'fail', failureCode: 'recipient_not_registered' },
  '+254700000002': { kind: 'fail', failureCode: 'insufficient_funds' },
  '+254700000003': { kind: 'timeout' },
  '+254700000004': { kind: 'settle_after', delayMs: SANDBOX_DELAYED_SETTLEMENT_MS },
  '+254700000005': { kind: 'fail', failureCode: 'limit_exceeded' },
};

/** Magic values on the other rails. */
export const SANDBOX_BANK_ACCOUNT_BEHAVIOURS: Record<string, SandboxBehaviour> = {
  '0000000001': { kind: 'fail', failureCode: 'account_closed' },
  '0000000002': { kind: 'fail', failureCode: 'invalid_account' },
  '0000000003': { kind: 'timeout' },
  '0000000004': { kind: 'settle_after', delayMs: SANDBOX_DELAYED_SETTLEMENT_MS },
};
export const SANDBOX_CARD_TOKEN_BEHAVIOURS: Record<string, SandboxBehaviour> = {
  tok_sandbox_declined: { kind: 'fail', failureCode: 'card_declined' },
  tok_sandbox_timeout: { kind: 'timeout' },
};
export const SANDBOX_PAYBILL_BEHAVIOURS: Record<string, SandboxBehaviour> = {
  '000001': { kind: 'fail', failureCode: 'invalid_account' },
};

/** How long the simulated chain takes to confirm a digital-asset transfer. */
export const SANDBOX_CHAIN_CONFIRMATION_MS = 2_000;

/** Magic digital-asset addresses (compared in lower case); any other valid address settles once confirmed. */
export const SANDBOX_ADDRESS_BEHAVIOURS: Record<string, SandboxBehaviour> = {
  '0x00000000000000000000000000000000000000b1': { kind: 'fail', failureCode: 'address_blocked' },
  '0x00000000000000000000000000000000000000e0': { kind: 'timeout' },
  '0x00000000000000000000000000000000000000d1': {
    kind: 'settle_after',
    delayMs: SANDBOX_DELAYED_SETTLEMENT_MS,
  },
};

export function sandboxBehaviour(transfer: Transfer): SandboxBehaviour {
  const d = transfer.destination;
  const pick = (table: Record<string, SandboxBehaviour>, key: string | undefined) =>
    (key !== undefined ? table[key] : undefined) ?? { kind: 'settle' as const };
  switch (d.type) {
    case 'mobile_money':
      return pick(SANDBOX_PHONE_BEHAVIOURS, d.phone);
    case 'bank_account':
      return pick(SANDBOX_BANK_ACCOUNT_BEHAVIOURS, d.account_number);
    case 'card':
      return pick(SANDBOX_CARD_TOKEN_BEHAVIOURS, d.token);
    case 'paybill':
      return pick(SANDBOX_PAYBILL_BEHAVIOURS, d.business_number);
    case 'till':
      return pick(SANDBOX_PAYBILL_BEHAVIOURS, d.till_number);
    case 'crypto_address':
      return (
        SANDBOX_ADDRESS_BEHAVIOURS[d.address.toLowerCase()] ?? {
          kind: 'settle_after',
          delayMs: SANDBOX_CHAIN_CONFIRMATION_MS,
        }
      );
    default:
      return { kind: 'settle' };
  }
}

/**
 * What a sandbox behaviour answers at `now`, for payouts and collections alike: a delayed settlement counts
 * its delay from `since`; the time-out number answers `timedOut` (each caller keeps its own recheck).
 */
export function sandboxRailOutcome(
  behaviour: SandboxBehaviour,
  since: Date,
  now: Date,
  timedOut: RailOutcome,
): RailOutcome {
  switch (behaviour.kind) {
    case 'settle':
      return { kind: 'settled' };
    case 'fail':
      return { kind: 'failed', failureCode: behaviour.failureCode };
    case 'timeout':
      return timedOut;
    case 'settle_after': {
      const due = since.getTime() + behaviour.delayMs;
      return due <= now.getTime() ? { kind: 'settled' } : { kind: 'processing', checkAt: new Date(due) };
    }
  }
}

/**
 * The simulated partner's payout reference for an idempotency reference. A function of the reference
 * alone, so a repeated submit (from this process, another worker process, or after a restart) finds the
 * same payout, as a real partner's idempotency key does.
 */
export function simulatedPayoutReference(idempotencyReference: string): string {
  return `sim_${idempotencyReference}`;
}

/**
 * The simulated chain's transaction hash for an idempotency reference: `0x` and 64 hexadecimal digits, the
 * SHA-256 of the reference, so a repeated submit names the same transaction.
 */
export function simulatedTransactionHash(idempotencyReference: string): string {
  return `0x${createHash('sha256').update(idempotencyReference, 'utf8').digest('hex')}`;
}

export function simulatedRail(reference = simulatedPayoutReference): RailAdapter {
  return {
    async submit({ idempotencyReference }: SubmitRequest, now: Date): Promise<SubmitResult> {
      return { accepted: true, reference: reference(idempotencyReference), checkAt: now };
    },
    async check(transfer: Transfer, now: Date): Promise<RailOutcome> {
      return sandboxRailOutcome(sandboxBehaviour(transfer), transfer.processingAt ?? now, now, {
        kind: 'processing',
        reason: RAIL_TIMEOUT_REASON,
        checkAt: new Date(now.getTime() + SANDBOX_TIMEOUT_RECHECK_MS),
      });
    },
  };
}

export function sandboxRails(): RailRegistry {
  const rail = simulatedRail();
  return {
    mobile_money: rail,
    bank: rail,
    paybill: rail,
    till: rail,
    card: rail,
    internal: rail,
    // The simulated chain: its reference is a transaction hash, its outcome comes after a confirmation.
    digital_asset: simulatedRail(simulatedTransactionHash),
  };
}
