/**
 * Pilot volume caps inside the ledger writer's batch, as the tier limits are (limitGuard.ts): the paying
 * organizations' day counts and sums are locked with one statement after the accounts, each transfer is
 * decided over them in order (so two transfers racing for the last of a cap, in one batch or in two lanes
 * or processes, cannot both pass), and the new counts and sums are written with one statement.
 */

import type { Deps } from '../../../../app/deps.ts';
import { limitPeriods } from '../../../../domain/decisions/limits.ts';
import {
  decidePilotCap,
  type PilotCaps,
  pilotCapRemaining,
  pilotCapSentence,
} from '../../../../domain/decisions/pilotCaps.ts';
import { AppError } from '../../../../domain/errors.ts';
import type { Transfer } from '../../../../domain/transferRecord.ts';
import {
  type LockedPilotUsage,
  lockPilotUsage,
  type PilotUsageKey,
  pilotUsageKeyOf,
  releasePilotUsage,
  savePilotUsage,
} from '../../../../store/repositories/pilotCapUsage.ts';
import type { Queryable } from '../../../../store/store.ts';

function keyOf(transfer: Transfer, at: Date): PilotUsageKey {
  return { organizationId: transfer.organizationId, currency: transfer.currency, day: limitPeriods(at).day };
}

export class PilotCapGuard {
  private readonly changed = new Set<string>();

  private constructor(
    private readonly caps: PilotCaps,
    private readonly usage: Map<string, LockedPilotUsage>,
    private readonly now: Date,
  ) {}

  /** Undefined outside a pilot: nothing to lock, nothing to decide. */
  static async lock(
    tx: Queryable,
    caps: PilotCaps | undefined,
    commands: readonly { transfer: Transfer }[],
    now: Date,
  ): Promise<PilotCapGuard | undefined> {
    if (!caps) return undefined;
    return new PilotCapGuard(
      caps,
      await lockPilotUsage(
        tx,
        commands.map((c) => keyOf(c.transfer, now)),
      ),
      now,
    );
  }

  /** The 422 a transfer gets if it would pass its organization's cap for the day; undefined when it fits. */
  check(command: { transfer: Transfer }): AppError | undefined {
    const t = command.transfer;
    const usage = this.usage.get(pilotUsageKeyOf(keyOf(t, this.now)));
    if (!usage) return undefined;
    const refusal = decidePilotCap(this.caps, t.currency, t.amountMinor, usage);
    if (!refusal) return undefined;
    return new AppError({
      status: 422,
      code: 'pilot_cap_exceeded',
      title: 'Pilot cap exceeded',
      detail: `This transfer would pass the organization's pilot cap ${refusal.cap}. ${pilotCapSentence(refusal, t.currency)}`,
      param: 'amount',
      extensions: { cap: refusal.cap, remaining: pilotCapRemaining(refusal, t.currency) },
    });
  }

  /**
   * A payout counted in its organization's pilot day when it was decided and let go later (out of an
   * approval or a review): the 422 a new transfer would get if the caps in force now no longer allow it
   * over the day it was counted in, less itself; else undefined. Outside a pilot, undefined.
   */
  static async recheck(
    tx: Queryable,
    caps: PilotCaps | undefined,
    transfer: Transfer,
  ): Promise<AppError | undefined> {
    const guard = await PilotCapGuard.lock(tx, caps, [{ transfer }], transfer.createdAt);
    const usage = guard?.usage.get(pilotUsageKeyOf(keyOf(transfer, transfer.createdAt)));
    if (!guard || !usage) return undefined;
    usage.transferCount = Math.max(0, usage.transferCount - 1);
    usage.sentMinor = usage.sentMinor > transfer.amountMinor ? usage.sentMinor - transfer.amountMinor : 0n;
    return guard.check({ transfer });
  }

  /** Counts an accepted transfer in its organization's day. */
  accepted(command: { transfer: Transfer }): void {
    const key = pilotUsageKeyOf(keyOf(command.transfer, this.now));
    const usage = this.usage.get(key);
    if (!usage) return;
    usage.transferCount += 1;
    usage.sentMinor += command.transfer.amountMinor;
    this.changed.add(key);
  }

  async save(tx: Queryable): Promise<void> {
    await savePilotUsage(
      tx,
      [...this.changed].map((k) => this.usage.get(k) as LockedPilotUsage),
    );
  }
}

/** Gives a payout that moved no money (failed, canceled, rejected, expired) back to its pilot day. */
export async function releasePilotCap(tx: Queryable, deps: Deps, transfer: Transfer): Promise<void> {
  if (!deps.pilotCaps || transfer.direction !== 'outbound') return;
  await releasePilotUsage(tx, keyOf(transfer, transfer.createdAt), transfer.amountMinor);
}
