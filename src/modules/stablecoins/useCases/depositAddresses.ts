/**
 * Deposit addresses: a stablecoin wallet's address on a network, issued on first request and the same one
 * after: from the organization's custody provider (Fireblocks) where one is configured; else the sandbox
 * issues them on its simulated chain and other deployments refuse, as nobody would hold their keys.
 */

import type { Deps } from '../../../app/deps.ts';
import { closedWalletError } from '../../../domain/closedWallet.ts';
import {
  DIGITAL_ASSET_NETWORKS,
  type DigitalAssetNetwork,
  isDigitalAsset,
  isDigitalAssetNetwork,
} from '../../../domain/digitalAssets.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import { type DepositAddress, sandboxDepositAddress } from '../../../domain/stablecoins.ts';
import type { Queryable } from '../../../store/store.ts';
import { requireApprovedRoute } from '../../compliance/index.ts';
import { getWallet, requireWallet } from '../../wallets/index.ts';
import { insertDepositAddressIfAbsent, listDepositAddresses } from '../repository/depositAddresses.ts';

function custodyNotConfigured(): AppError {
  return new AppError({
    status: 422,
    code: 'custody_not_configured',
    title: 'No custody provider',
    detail:
      'Deposit addresses need a custody provider that holds the keys and watches the chain; none is configured in this deployment, so no address is issued. The sandbox issues addresses on its simulated chain.',
    param: 'network',
  });
}

/** The network a request names, or the 400 naming `param`. */
export function requireNetwork(network: string, param: string): DigitalAssetNetwork {
  if (!isDigitalAssetNetwork(network)) {
    throw validationError(
      param,
      `${param} must be one of: ${DIGITAL_ASSET_NETWORKS.join(', ')}`,
      'invalid_value',
    );
  }
  return network;
}

/** A stablecoin wallet of the organization, or the 404 / 400 naming `param`. */
async function stablecoinWallet(db: Queryable, organizationId: string, walletId: string, param: string) {
  const wallet = await requireWallet(db, organizationId, walletId, param);
  if (!isDigitalAsset(wallet.currency)) {
    throw validationError(
      param,
      `wallet ${walletId} holds ${wallet.currency}; deposit addresses are for USDC and USDT wallets`,
      'unsupported_currency',
    );
  }
  return { wallet, asset: wallet.currency };
}

/**
 * The checks of a new deposit address that read outside the transaction (the route, with the
 * organization's defaults written on first use): the wallet holds a stablecoin, and its route on the
 * network is enabled; then the address from the organization's custody provider (Fireblocks: the wallet's
 * vault account), called here, outside the transaction. Without a custody provider the sandbox issues one
 * on its simulated chain (undefined) and other deployments refuse: nobody would hold the address's keys.
 */
export async function prepareDepositAddress(
  deps: Deps,
  organizationId: string,
  walletId: string,
  network: string,
): Promise<string | undefined> {
  const checkedNetwork = requireNetwork(network, 'network');
  const { asset } = await stablecoinWallet(deps.store, organizationId, walletId, 'id');
  await requireApprovedRoute(deps, organizationId, asset, checkedNetwork, 'network');
  const custodied = await deps.custodyDepositAddress(deps, {
    organizationId,
    walletId,
    asset,
    network: checkedNetwork,
  });
  if (custodied === undefined && deps.environment !== 'sandbox') throw custodyNotConfigured();
  return custodied;
}

/**
 * The wallet's address on the network, issued on first request (the same one after): the custody
 * provider's (`custodied`, from prepareDepositAddress), else the simulated chain's.
 */
export async function issueDepositAddress(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
  network: DigitalAssetNetwork,
  custodied?: string,
): Promise<{ address: DepositAddress; created: boolean }> {
  const { wallet, asset } = await stablecoinWallet(tx, organizationId, walletId, 'id');
  if (wallet.status === 'closed') throw closedWalletError(wallet.id);
  const candidate: DepositAddress = {
    id: deps.newId('depositAddress'),
    organizationId,
    walletId,
    asset,
    network,
    address: custodied ?? sandboxDepositAddress(walletId, network),
    createdAt: deps.now(),
  };
  const address = await insertDepositAddressIfAbsent(tx, candidate);
  return { address, created: address.id === candidate.id };
}

export async function walletDepositAddresses(
  deps: Deps,
  organizationId: string,
  walletId: string,
): Promise<DepositAddress[]> {
  await getWallet(deps, organizationId, walletId); // 404 unless the wallet is the organization's
  return listDepositAddresses(deps.store, organizationId, walletId);
}
