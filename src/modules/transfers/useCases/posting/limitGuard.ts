/**
 * Tier limits inside the ledger writer's batch: the paying customers' day and month sums are locked with
 * one statement after the accounts, each transfer is decided over them in order (so two transfers racing
 * for the last of a daily limit cannot both pass), and the new sums are written with one statement. A
 * conversion takes the same steps in its own transaction, after locking its accounts the same way, so
 * transfers and conversions count against one another. A stablecoin counts in its peg's (USD's) sums at its
 * USD equivalent (`limitBasisOf`); a currency with no limits of its own or by peg is refused
 * `limit_not_configured`, never let through unlimited.
 */
import {
  decideLimits,
  type LimitBasis,
  limitBasisOf,
  limitPeriods,
  limitSentence,
  tierOf,
} from '../../../../domain/decisions/limits.ts';
import { AppError } from '../../../../domain/errors.ts';
import { formatAmount } from '../../../../domain/money.ts';
import type { Transfer } from '../../../../domain/transferRecord.ts';
import {
  type LockedUsage,
  lockLimitUsage,
  saveLimitUsage,
  type UsageKey,
  usageKeyOf,
} from '../../../../store/repositories/limitUsage.ts';
import type { Queryable } from '../../../../store/store.ts';

/** What counts against a tier limit: money a customer sends out of a wallet (a transfer or a conversion). */
export interface LimitedTransfer {
  transfer: Pick<Transfer, 'currency' | 'amountMinor'>;
  sourceCustomerId: string;
}

function basisOf(command: LimitedTransfer): LimitBasis | undefined {
  return limitBasisOf(command.transfer.currency, command.transfer.amountMinor);
}

function keysOf(command: LimitedTransfer, now: Date): { day: UsageKey; month: UsageKey } | undefined {
  const basis = basisOf(command);
  if (!basis) return undefined;
  const { day, month } = limitPeriods(now);
  const base = { customerId: command.sourceCustomerId, currency: basis.currency };
  return {
    day: { ...base, period: 'day', periodStart: day },
    month: { ...base, period: 'month', periodStart: month },
  };
}

export class LimitGuard {
  private readonly changed = new Set<string>();

  private constructor(
    private readonly usage: Map<string, LockedUsage>,
    private readonly now: Date,
  ) {}

  static async lock(tx: Queryable, commands: readonly LimitedTransfer[], now: Date): Promise<LimitGuard> {
    const keys = commands.flatMap((c) => {
      const k = keysOf(c, now);
      return k ? [k.day, k.month] : [];
    });
    return new LimitGuard(await lockLimitUsage(tx, keys), now);
  }

  /** The 422 a transfer (or conversion) gets if it would break its customer's tier limit; undefined when it fits. */
  check(command: LimitedTransfer, movement = 'transfer', param = 'amount'): AppError | undefined {
    const t = command.transfer;
    const basis = basisOf(command);
    if (!basis) {
      return new AppError({
        status: 422,
        code: 'limit_not_configured',
        title: 'No tier limit for this currency',
        detail: `No tier limits are configured for ${t.currency}, so no ${movement} can be sent in it; nothing was written.`,
        param,
      });
    }
    const keys = keysOf(command, this.now);
    if (!keys) return undefined;
    const day = this.usage.get(usageKeyOf(keys.day));
    const month = this.usage.get(usageKeyOf(keys.month));
    if (!day || !month) return undefined;
    const tier = tierOf(day.kycStatus, day.customerType);
    const refusal = decideLimits(tier, basis.currency, basis.amountMinor, {
      dayMinor: day.sentMinor,
      monthMinor: month.sentMinor,
    });
    if (!refusal) return undefined;
    const pegged =
      basis.currency !== t.currency ? ` ${t.currency} counts at its ${basis.currency} equivalent.` : '';
    return new AppError({
      status: 422,
      code: 'limit_exceeded',
      title: 'Limit exceeded',
      detail: `This ${movement} would pass the customer's ${refusal.limit} limit. ${limitSentence(refusal, basis.currency)}${pegged}`,
      param,
      extensions: { limit: refusal.limit, remaining: formatAmount(refusal.remainingMinor, basis.currency) },
    });
  }

  /**
   * A movement counted in its customer's sums when it was decided and let go later (out of an approval or a
   * review): the 422 a new transfer would get if the customer's tier now (a verification may have lapsed
   * meanwhile) no longer allows it over the day and month it was counted in, less itself; else undefined.
   * Locks the usage rows after the caller's accounts, the order the writer takes them in.
   */
  static async recheck(
    tx: Queryable,
    command: LimitedTransfer,
    countedAt: Date,
  ): Promise<AppError | undefined> {
    const basis = basisOf(command);
    const keys = keysOf(command, countedAt);
    if (!basis || !keys) return undefined;
    const guard = await LimitGuard.lock(tx, [command], countedAt);
    for (const key of [keys.day, keys.month]) {
      const usage = guard.usage.get(usageKeyOf(key));
      if (!usage) return undefined;
      usage.sentMinor = usage.sentMinor > basis.amountMinor ? usage.sentMinor - basis.amountMinor : 0n;
    }
    return guard.check(command);
  }

  /** Counts an accepted transfer in its customer's day and month. */
  accepted(command: LimitedTransfer): void {
    const keys = keysOf(command, this.now);
    const basis = basisOf(command);
    if (!keys || !basis) return;
    for (const key of [keys.day, keys.month]) {
      const usage = this.usage.get(usageKeyOf(key));
      if (!usage) continue;
      usage.sentMinor += basis.amountMinor;
      this.changed.add(usageKeyOf(key));
    }
  }

  async save(tx: Queryable): Promise<void> {
    await saveLimitUsage(
      tx,
      [...this.changed].map((k) => this.usage.get(k) as LockedUsage),
    );
  }
}
