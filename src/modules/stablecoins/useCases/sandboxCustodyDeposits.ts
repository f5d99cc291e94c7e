/**
 * The sandbox's deposit to an address a custody partner (Fireblocks) issued: sent through that partner's
 * simulator, whose webhook (or the deposit poll) then records it as production's reports do, so the
 * simulated chain is never a second way into a custodied address. Addresses of the simulated chain stay
 * with recordChainDeposit.
 */
import type { Deps } from '../../../app/deps.ts';
import { sandboxSimulatorsOff, validationError } from '../../../domain/errors.ts';
import { checkSingleAmount, formatAmount, parseAmount } from '../../../domain/money.ts';
import { sandboxDepositAddress } from '../../../domain/stablecoins.ts';
import { type ChainDepositInput, ownedDepositAddress } from './chainDeposits.ts';
import { requireNetwork } from './depositAddresses.ts';

export interface SandboxCustodyDeposit {
  partner: 'fireblocks';
  partnerReference: string;
  walletId: string;
  asset: string;
  network: string;
  address: string;
  amount: string;
  txHash: string;
}

/** What the custody partner decides itself, so a deposit to its address may not name it. */
const PARTNER_DECIDED = ['tx_hash', 'log_index', 'confirmations', 'travel_rule'] as const;

/**
 * The deposit sent through the custody partner's simulator when the address is the partner's; undefined
 * when it is the simulated chain's (recorded there instead).
 */
export async function sendSandboxCustodyDeposit(
  deps: Deps,
  organizationId: string,
  input: ChainDepositInput,
  amountText?: string,
): Promise<SandboxCustodyDeposit | undefined> {
  const network = requireNetwork(input.network, 'network');
  const owned = await ownedDepositAddress(deps.store, organizationId, network, input.address);
  if (owned.address === sandboxDepositAddress(owned.walletId, network)) return undefined;
  const feeds = deps.sandboxPartnerFeeds;
  if (!feeds) throw sandboxSimulatorsOff();
  for (const field of PARTNER_DECIDED) {
    if (input[field] !== undefined) {
      throw validationError(
        field,
        `${field} is Fireblocks’ to decide for a deposit to an address it issued; leave it out`,
        'not_supported',
      );
    }
  }
  const minor = checkSingleAmount(parseAmount(input.amount, owned.asset, 'amount', amountText), owned.asset);
  const amount = formatAmount(minor, owned.asset);
  const deposit = { walletId: owned.walletId, asset: owned.asset, network, address: owned.address, amount };
  const sent = await feeds.custodyDeposit(deposit);
  return { partner: 'fireblocks', partnerReference: sent.reference, ...deposit, txHash: sent.txHash };
}
