/**
 * Sweeps of deposits out of wallets' custody vault accounts into the payout vault the partner pays payouts
 * from (Fireblocks' `source_vault_account_id`). A sweep is recorded `pending` before the partner is asked,
 * its id the partner transaction's externalTxId, so a process that dies after the partner accepted sends
 * nothing again: the next pass submits the same externalTxId, which the partner refuses, and finds the
 * transaction by it. Once the partner reports it completed, the trust ledger records it as a `from_trust`
 * sweep on `digital_asset` (trust to the payout float, reference the partner's transaction id) in the same
 * transaction that completes it, with the network fee the transaction paid (./networkFees.ts); customer
 * wallets do not change.
 */
import type { Deps } from '../../../app/deps.ts';
import { dayOf } from '../../../domain/days.ts';
import { formatAmount } from '../../../domain/money.ts';
import type { ResolvedPartnerRail } from '../../../rails/partner.ts';
import { recordSweep } from '../../treasury/index.ts';
import { findWalletIdentities } from '../../wallets/index.ts';
import type { RailPartnerConfig } from '../domain.ts';
import type { CustodyVaultAsset } from '../partners/fireblocks/custody.ts';
import type { CustodyPartnerRail } from '../partners/fireblocks/rail.ts';
import {
  type CustodySweep,
  failuresInARow,
  insertSweepIfNoneOpen,
  lockSweep,
  openSweepsOf,
  saveSweep,
  waitingAssetWallets,
} from '../repository/custodySweeps.ts';
import { prepareNetworkFee } from './networkFees.ts';

/** The least an asset wallet must hold before it is swept: 10 USDC or USDT (minor units, 6 decimals). */
export const CUSTODY_SWEEP_MINIMUM_MINOR = 10_000000n;
/** Open sweeps one pass follows per configuration at most; the rest wait for the next pass. */
const OPEN_SWEEPS_PER_PASS = 200;
/**
 * After a sweep of an asset wallet fails (refused, or failed at Fireblocks), the next one waits this long,
 * doubling with each failure in a row up to CUSTODY_SWEEP_RETRY_MAX_MS. A refusal is mostly a setting only an
 * operator can mend (the payout vault has no asset wallet for the coin): an hour spares a failed row every
 * pass, and the doubling brings a refusal nobody mends down to one a day, while a passing fault is tried again soon.
 */
export const CUSTODY_SWEEP_RETRY_MS = 60 * 60 * 1_000;
/** The longest wait between tries of a sweep that keeps failing: one day. */
export const CUSTODY_SWEEP_RETRY_MAX_MS = 24 * 60 * 60 * 1_000;

/** When the asset wallet of a sweep that failed on its `attempt`-th try in a row may be swept again. */
export function sweepRetryAfter(attempt: number, failedAt: Date): Date {
  const doublings = Math.min(Math.max(attempt - 1, 0), 16);
  const wait = Math.min(CUSTODY_SWEEP_RETRY_MS * 2 ** doublings, CUSTODY_SWEEP_RETRY_MAX_MS);
  return new Date(failedAt.getTime() + wait);
}

/** Who the trust ledger's sweep names as having recorded it. */
const SWEEP_RECORDER = 'custody_sweeps';

type CustodyRail = ResolvedPartnerRail & { adapter: CustodyPartnerRail };

/** Asks the partner to move a pending sweep (or finds it by externalTxId); records what it answered. */
async function submitSweep(deps: Deps, rail: CustodyRail, sweep: CustodySweep): Promise<CustodySweep> {
  const request = {
    externalTxId: sweep.id,
    vaultAccountId: sweep.vaultAccountId,
    assetId: sweep.assetId,
    amountMinor: sweep.amountMinor,
  };
  const submitted = await rail.call(() => rail.adapter.sweep(request, deps.now()));
  const next: CustodySweep = submitted.accepted
    ? { ...sweep, status: 'submitted', partnerTransactionId: submitted.reference, updatedAt: deps.now() }
    : {
        ...sweep,
        status: 'failed',
        failureCode: submitted.failureCode,
        retryAfter: sweepRetryAfter(sweep.attempt, deps.now()),
        updatedAt: deps.now(),
      };
  await deps.store.transaction(async (tx) => {
    const current = await lockSweep(tx, sweep.id);
    if (current?.status === 'pending') await saveSweep(tx, next);
  });
  return next;
}

/** A submitted sweep's outcome: completed with its trust ledger sweep, failed, or still on its way. */
async function followSweep(deps: Deps, rail: CustodyRail, sweep: CustodySweep): Promise<boolean> {
  const outcome = await rail.call(() => rail.adapter.checkSweep(sweep.id, deps.now()));
  if (outcome.kind === 'processing') return false;
  return deps.store.transaction(async (tx) => {
    const current = await lockSweep(tx, sweep.id);
    if (current?.status !== 'submitted') return false;
    const now = deps.now();
    if (outcome.kind === 'failed') {
      await saveSweep(tx, {
        ...current,
        status: 'failed',
        failureCode: outcome.failureCode,
        retryAfter: sweepRetryAfter(current.attempt, now),
        updatedAt: now,
      });
      return false;
    }
    const reference = current.partnerTransactionId ?? outcome.reference ?? current.id;
    // The transaction's network fee, in the same transaction: a sweep completes once, so it is booked once.
    // Its accounts are locked with the sweep's, whose evidence then takes the chain head (the last lock).
    const fee =
      outcome.networkFee &&
      (await prepareNetworkFee(tx, deps, {
        organizationId: current.organizationId,
        partnerTransactionId: reference,
        subjectType: 'sweep',
        subjectId: current.id,
        fee: outcome.networkFee,
      }));
    const { sweep: recorded } = await recordSweep(
      tx,
      deps,
      current.organizationId,
      {
        currency: current.currency,
        rail: 'digital_asset',
        direction: 'from_trust',
        amount: formatAmount(current.amountMinor, current.currency),
        reference,
        value_date: dayOf(now),
      },
      { type: 'system' },
      SWEEP_RECORDER,
      fee ? fee.accounts : [],
    );
    if (fee) await fee.book();
    await saveSweep(tx, {
      ...current,
      status: 'completed',
      safeguardingSweepId: recorded.id,
      updatedAt: now,
    });
    return true;
  });
}

/** A new pending sweep of everything available in the asset wallet; undefined when one is open already. */
async function newSweep(
  deps: Deps,
  config: RailPartnerConfig,
  asset: CustodyVaultAsset,
): Promise<CustodySweep | undefined> {
  const now = deps.now();
  const failed = await failuresInARow(deps.store, config.id, asset.vaultAccountId, asset.assetId);
  const sweep: CustodySweep = {
    id: deps.newId('custodySweep'),
    organizationId: config.organizationId,
    configId: config.id,
    vaultAccountId: asset.vaultAccountId,
    assetId: asset.assetId,
    currency: asset.currency,
    amountMinor: asset.availableMinor,
    status: 'pending',
    partnerTransactionId: null,
    failureCode: null,
    safeguardingSweepId: null,
    attempt: failed + 1,
    retryAfter: null,
    createdAt: now,
    updatedAt: now,
  };
  return (await insertSweepIfNoneOpen(deps.store, sweep)) ? sweep : undefined;
}

/**
 * One configuration's sweeps: open ones followed (a pending one, left by a process that died, submitted
 * again under its externalTxId), then every wallet asset wallet holding at least
 * CUSTODY_SWEEP_MINIMUM_MINOR, with no open sweep and not waiting after a failed one, swept. Returns how
 * many sweeps completed.
 */
export async function sweepCustody(
  deps: Deps,
  rail: CustodyRail,
  config: RailPartnerConfig,
): Promise<number> {
  let completed = 0;
  const open = await openSweepsOf(deps.store, config.id, OPEN_SWEEPS_PER_PASS);
  for (const sweep of open) {
    const current = sweep.status === 'pending' ? await submitSweep(deps, rail, sweep) : sweep;
    if (current.status === 'submitted' && (await followSweep(deps, rail, current))) completed += 1;
  }
  // An asset wallet with an open sweep, or whose last sweep failed lately, is left for a later pass.
  const busy = await waitingAssetWallets(deps.store, config.id, deps.now());
  for (const s of open) busy.add(`${s.vaultAccountId}\u0000${s.assetId}`);
  const assets = await rail.call(() => rail.adapter.walletVaultAssets());
  // Only the organization's own wallets' vaults: a workspace shared with another organization holds theirs too.
  const own = await findWalletIdentities(deps, config.organizationId, [
    ...new Set(assets.map((a) => a.walletId)),
  ]);
  for (const asset of assets) {
    if (!own.has(asset.walletId)) continue;
    if (asset.vaultAccountId === config.settings.source_vault_account_id) continue;
    if (asset.availableMinor < CUSTODY_SWEEP_MINIMUM_MINOR) continue;
    if (busy.has(`${asset.vaultAccountId}\u0000${asset.assetId}`)) continue;
    const sweep = await newSweep(deps, config, asset);
    if (sweep) await submitSweep(deps, rail, sweep);
  }
  return completed;
}
