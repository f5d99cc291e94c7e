/**
 * Flutterwave (v3 API) as a partner rail on the `bank` rail: payouts to bank accounts through Transfers
 * (payouts.ts: name resolution first, our transfer id as the idempotent `reference`), their outcome by the
 * `transfer.completed` webhook or by polling, and money in through static virtual account numbers, one per
 * wallet, made with the wallet's reference as `tx_ref` so that `charge.completed` names the wallet to credit
 * (callbacks.ts), each credited only once GET /v3/transactions/{id}/verify vouches for it (deposits.ts).
 * Flutterwave has no request-to-pay for bank accounts: `collect` refuses.
 *
 * Webhooks: set the dashboard's webhook URL to `{callback base}/webhooks`; transfers carry their own
 * `callback_url` (`{callback base}/transfers`). Both are verified with the dashboard's secret hash.
 */

import { isRecord } from '../../../../domain/json.ts';
import type {
  CallbackTarget,
  PartnerRail,
  WalletAccountNumber,
  WalletAccountNumberRequest,
} from '../../../../rails/partner.ts';
import { parseFlutterwaveCallback } from './callbacks.ts';
import {
  FLUTTERWAVE_PARTNER,
  type FlutterwaveConfig,
  FlutterwaveError,
  flutterwaveCall,
} from './connection.ts';
import { verifyFlutterwaveDeposit } from './deposits.ts';
import { checkPayout, submitPayout } from './payouts.ts';

export { type FlutterwaveConfig, FlutterwaveError } from './connection.ts';

/** What `collect` answers: Flutterwave cannot ask a bank account holder to pay. */
export const FLUTTERWAVE_COLLECT_FAILURE_CODE = 'collection_not_supported';

export function flutterwaveRail(config: FlutterwaveConfig, callbacks: CallbackTarget): PartnerRail {
  return {
    partner: FLUTTERWAVE_PARTNER,
    submit: (request, now) => submitPayout(config, callbacks, request, now),
    check: (transfer, now) => checkPayout(config, transfer, now),
    collect: async () => ({ accepted: false, failureCode: FLUTTERWAVE_COLLECT_FAILURE_CODE }),
    checkCollection: async () => ({ kind: 'failed', failureCode: FLUTTERWAVE_COLLECT_FAILURE_CODE }),
    parseCallback: (callback) => parseFlutterwaveCallback(config.secretHash, callback),
    verifyCredit: (report) => verifyFlutterwaveDeposit(config, report),
    issueWalletAccountNumber: (request) => flutterwaveWalletVirtualAccount(config, request),
  };
}

/**
 * A static virtual account number for a wallet: bank transfers into it arrive as `charge.completed`. The
 * `tx_ref` is the wallet's reference, so asking again with it answers the account made the first time.
 */
export async function flutterwaveWalletVirtualAccount(
  config: FlutterwaveConfig,
  request: WalletAccountNumberRequest,
): Promise<WalletAccountNumber> {
  const answer = await flutterwaveCall(
    config,
    'POST',
    '/v3/virtual-account-numbers',
    JSON.stringify({
      email: request.email,
      is_permanent: true,
      bvn: request.bvn,
      tx_ref: request.walletReference,
      currency: request.currency,
      narration: request.walletReference,
    }),
  );
  const data = isRecord(answer.data) ? answer.data : {};
  const { account_number: accountNumber, bank_name: bankName, order_ref: orderRef, flw_ref: flwRef } = data;
  if (!answer.ok || typeof accountNumber !== 'string' || typeof orderRef !== 'string') {
    throw new FlutterwaveError(
      `Flutterwave made no virtual account: ${answer.status} ${answer.message}`,
      answer.status,
    );
  }
  return {
    accountNumber,
    bankName: typeof bankName === 'string' ? bankName : '',
    orderRef,
    ...(typeof flwRef === 'string' ? { flwRef } : {}),
  };
}
