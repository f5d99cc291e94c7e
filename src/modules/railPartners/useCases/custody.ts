/**
 * Custody through a partner: a stablecoin wallet's deposit address from the organization's custody
 * partner on the network (Fireblocks: a vault account per wallet), called behind the partner's circuit
 * breaker and rate limit like every partner call. Stablecoins reach it through `Deps.custodyDepositAddress`.
 */
import type { CustodyDepositAddress } from '../../../app/deps.ts';
import { AppError } from '../../../domain/errors.ts';
import type { CustodyPartnerRail } from '../partners/fireblocks/rail.ts';
import { railPartnerDirectory } from './directory.ts';

function custodyUnavailable(error: unknown): AppError {
  return new AppError({
    status: 503,
    code: 'service_unavailable',
    title: 'Custody provider unavailable',
    detail: `The custody provider did not give a deposit address (${error instanceof Error ? error.message : String(error)}); try again.`,
    param: 'network',
  });
}

export function isCustodyRail(adapter: object): adapter is CustodyPartnerRail {
  return 'depositAddress' in adapter && typeof adapter.depositAddress === 'function';
}

export const custodyDepositAddress: CustodyDepositAddress = async (deps, request) => {
  if (!deps.railPartnerFactories) return undefined;
  const { organizationId, walletId, asset, network } = request;
  const resolved = await railPartnerDirectory(deps).forRail(organizationId, 'digital_asset', network);
  if (!resolved || !isCustodyRail(resolved.adapter)) return undefined;
  const adapter = resolved.adapter;
  try {
    return await resolved.call(() => adapter.depositAddress(walletId, asset, network));
  } catch (error) {
    throw custodyUnavailable(error);
  }
};
