/**
 * The use cases' part of the composition root: where a lower use case acts on higher ones, it declares an
 * interface in `Deps` (src/app/deps.ts) and this fills it, so the lower one imports none of them and the
 * use cases' imports have no cycles. `systemDeps` adds these to every `Deps` it builds.
 */

import { GOVERNED_CHANGE_APPROVALS, POLICY_CHANGE_APPROVALS } from '../modules/authorization/index.ts';
import { digitalAccountsOnWalletCreated } from '../modules/digitalAccounts/index.ts';
import { LOAN_APPROVALS, LOAN_DAY_WORK } from '../modules/lending/index.ts';
import { PAYMENT_BATCH_APPROVALS } from '../modules/paymentBatches/index.ts';
import { custodyDepositAddress, preparePayoutNetworkFee } from '../modules/railPartners/index.ts';
import { refuseSavingsSource, SAVINGS_DAY_WORK } from '../modules/savings/index.ts';
import { decideHeldDeposit } from '../modules/stablecoins/index.ts';
import { decideReviewedTransfer, TRANSFER_APPROVALS } from '../modules/transfers/index.ts';
import type { Deps } from './deps.ts';
import { CHANGE_KINDS } from './governedChangeKinds.ts';

export type UseCaseHooks = Pick<
  Deps,
  | 'approvableResources'
  | 'reviewSubjects'
  | 'movementSourceGuards'
  | 'walletCreatedHooks'
  | 'dayWork'
  | 'changeKinds'
  | 'custodyDepositAddress'
  | 'payoutNetworkFee'
>;

export function useCaseHooks(): UseCaseHooks {
  return {
    // Approvals (src/modules/authorization/useCases/approvals.ts) lock and move on each resource type through its owner's handler.
    approvableResources: {
      transfer: TRANSFER_APPROVALS,
      policy_change: POLICY_CHANGE_APPROVALS,
      payment_batch: PAYMENT_BATCH_APPROVALS,
      loan: LOAN_APPROVALS,
      change: GOVERNED_CHANGE_APPROVALS,
    },
    // Reviews (src/modules/compliance/useCases/reviews.ts): a decided case moves the transfer or deposit it holds through its owner.
    reviewSubjects: { transfer: decideReviewedTransfer, deposit: decideHeldDeposit },
    // Transfers, payment batches and conversions: money leaves a savings account only as a withdrawal.
    movementSourceGuards: [refuseSavingsSource],
    // Wallets: a new wallet has its account details from the start once the organization issues them.
    walletCreatedHooks: [digitalAccountsOnWalletCreated],
    // The day worker and a test clock's advance: each product's once-a-day work, in the order a day runs.
    dayWork: [SAVINGS_DAY_WORK, LOAN_DAY_WORK],
    // Governed changes: each kind's checks and the use case that makes it, from the module that owns it.
    changeKinds: CHANGE_KINDS,
    // Stablecoins' deposit addresses outside the simulated chain: the organization's custody partner.
    custodyDepositAddress,
    // A settling payout's network fee, as its custody partner reported it: its accounts locked with the
    // settle's, then booked once, by railPartners.
    payoutNetworkFee: preparePayoutNetworkFee,
  };
}
