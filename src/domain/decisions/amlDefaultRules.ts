/**
 * The AML rules an organization starts with, per currency, scaled from one large-transfer amount each.
 */
import type { Currency } from '../money.ts';
import type { AmlRule } from './aml.ts';

type DefaultRule = Pick<AmlRule, 'name' | 'parameters' | 'action' | 'enabled'>;

/** Per currency, the amounts the defaults use (minor units): a large single transfer, and the rest from it. */
const DEFAULT_LARGE_TRANSFER_MINOR: Partial<Record<Currency, bigint>> = {
  KES: 100_000_000n, // 1,000,000.00 KES
  UGX: 30_000_000n, // 30,000,000 UGX
  TZS: 20_000_000_00n, // 20,000,000.00 TZS
  USD: 1_000_000n, // 10,000.00 USD
};
/** Transfers from one wallet in an hour before velocity alerts. */
const DEFAULT_VELOCITY_COUNT_MAX = 200;
const HOUR_SECONDS = 3_600;
const DAY_SECONDS = 24 * HOUR_SECONDS;

/**
 * The rules an organization starts with: every one alerts (none holds or blocks a transfer until an
 * operator says so), per currency with amounts scaled from a large single transfer L: a transfer of L or
 * more; more than 200 transfers or 2 L out of a wallet in an hour; three or more transfers within 10 % under
 * L in a day; 90 % of what arrived in a day leaving again, for transfers of L / 10 or more; L / 2 or more to
 * a counterparty the wallet never paid.
 */
export function defaultAmlRules(): DefaultRule[] {
  return Object.entries(DEFAULT_LARGE_TRANSFER_MINOR).flatMap(([currency, large]) => {
    const c = currency as Currency;
    const l = large as bigint;
    const rules: DefaultRule[] = [
      {
        name: `Large single transfer (${c})`,
        parameters: { type: 'single_transfer_threshold', currency: c, amountMinor: l },
        action: 'alert',
        enabled: true,
      },
      {
        name: `Velocity per wallet, hourly (${c})`,
        parameters: {
          type: 'velocity',
          currency: c,
          windowSeconds: HOUR_SECONDS,
          countMax: DEFAULT_VELOCITY_COUNT_MAX,
          amountMaxMinor: 2n * l,
        },
        action: 'alert',
        enabled: true,
      },
      {
        name: `Structuring under the large-transfer threshold (${c})`,
        parameters: {
          type: 'structuring',
          currency: c,
          thresholdMinor: l,
          marginBasisPoints: 1_000,
          countMin: 3,
          windowSeconds: DAY_SECONDS,
        },
        action: 'alert',
        enabled: true,
      },
      {
        name: `Rapid movement of arriving funds (${c})`,
        parameters: {
          type: 'rapid_movement',
          currency: c,
          windowSeconds: DAY_SECONDS,
          shareBasisPoints: 9_000,
          amountMinMinor: l / 10n,
        },
        action: 'alert',
        enabled: true,
      },
      {
        name: `High value to a new counterparty (${c})`,
        parameters: { type: 'new_counterparty_high_value', currency: c, amountMinor: l / 2n },
        action: 'alert',
        enabled: true,
      },
    ];
    return rules;
  });
}
