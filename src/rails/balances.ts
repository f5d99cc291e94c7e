/**
 * A partner's own accounts as the partner reports them (M-Pesa's shortcode accounts, MTN MoMo's collection
 * and disbursement accounts): asked for through the rail interface (PartnerRail.queryBalances), answered at
 * once or, where the partner answers by callback (M-Pesa's Account Balance), reported later as a `balances`
 * callback report. Amounts are exact minor units.
 */
import type { Currency } from '../domain/money.ts';

/** One account of the partner's, as reported. */
export interface PartnerAccountBalance {
  /** The partner's name for the account (`Utility Account`, `disbursement`). */
  account: string;
  currency: Currency;
  /** What the account can pay out now. */
  availableMinor: bigint;
  /** The account's whole balance where the partner reports one apart from the available amount, else null. */
  currentMinor: bigint | null;
  /**
   * A custody partner's account that holds one wallet's deposits (Fireblocks: the wallet's vault account):
   * that wallet. The partner's workspace may also hold other organizations' vaults, so such an account counts
   * only for the organization owning the wallet (accountsOfOrganization).
   */
  walletId?: string;
}

/** The partner's answer to a balance query: the balances now, or a reference its callback will name. */
export type BalanceQueryAnswer =
  | { kind: 'reported'; accounts: PartnerAccountBalance[] }
  | { kind: 'requested'; reference: string };

/** A balance query's result arriving by callback. */
export interface BalancesReport {
  kind: 'balances';
  /** The query's reference, as `queryBalances` returned it. */
  reference: string;
  outcome: { kind: 'reported'; accounts: PartnerAccountBalance[] } | { kind: 'failed'; failureCode: string };
}
