/** The refusal every way of receiving money gives a closed wallet (collections, deposit addresses). */
import { type AppError, invalidStateTransition } from './errors.ts';

/** 409: the wallet is closed and receives nothing; `param` names the request field that chose it, if any. */
export function closedWalletError(walletId: string, param?: string): AppError {
  return invalidStateTransition('Wallet closed', `Wallet ${walletId} is closed: it receives nothing.`, param);
}
