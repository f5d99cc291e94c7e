/** The refusal every way of receiving money gives a closed wallet (collections, deposit addresses). */
import { AppError } from './errors.ts';

/** 409: the wallet is closed and receives nothing; `param` names the request field that chose it, if any. */
export function closedWalletError(walletId: string, param?: string): AppError {
  return new AppError({
    status: 409,
    code: 'invalid_state_transition',
    title: 'Wallet closed',
    detail: `Wallet ${walletId} is closed: it receives nothing.`,
    param,
  });
}
