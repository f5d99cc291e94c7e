/**
 * A bank transfer into a wallet's virtual account number, verified with Flutterwave before it is credited
 * (rail.ts `verifyCredit`): GET /v3/transactions/{id}/verify answers at once, and only a `successful` charge
 * of the webhook's amount and currency, made into the account we issued under the wallet's reference (its
 * `tx_ref`), vouches for the deposit. A webhook is only as good as the secret hash; this asks Flutterwave.
 */

import { isRecord } from '../../../../domain/json.ts';
import type {
  CreditReport,
  CreditVerificationAsk,
  CreditVerificationReport,
} from '../../../../rails/partner.ts';
import {
  type FlutterwaveConfig,
  FlutterwaveError,
  flutterwaveCall,
  minorUnitsOfFlutterwaveAmount,
} from './connection.ts';

/** Flutterwave's statuses of a charge that is not final yet: asked again later. */
const CHARGE_PENDING_STATUSES: ReadonlySet<unknown> = new Set(['pending']);

/** What GET /v3/transactions/{id}/verify says about the charge a `charge.completed` reported. */
export async function verifyFlutterwaveDeposit(
  config: FlutterwaveConfig,
  report: CreditReport,
): Promise<CreditVerificationAsk> {
  const id = report.partnerTransactionId;
  const answer = await flutterwaveCall(config, 'GET', `/v3/transactions/${encodeURIComponent(id)}/verify`);
  const base = { kind: 'credit_verification', partnerTransactionId: id, toOurAccount: false } as const;
  if (answer.status >= 500 || answer.status === 401 || answer.status === 429) {
    throw new FlutterwaveError(
      `Flutterwave could not verify transaction ${id}: ${answer.status}`,
      answer.status,
    );
  }
  if (!answer.ok || !isRecord(answer.data) || String(answer.data.id) !== id) {
    return { answer: { ...base, outcome: 'not_found' } };
  }
  const data = answer.data;
  const receiver = typeof data.tx_ref === 'string' ? data.tx_ref : undefined;
  if (CHARGE_PENDING_STATUSES.has(data.status)) return { answer: { ...base, outcome: 'pending', receiver } };
  if (data.status !== 'successful') return { answer: { ...base, outcome: 'failed', receiver } };
  // Another currency is another amount: compared as none at all, so the deposit is refused.
  const amountMinor =
    data.currency === report.currency
      ? minorUnitsOfFlutterwaveAmount(data.amount, report.currency)
      : undefined;
  const verified: CreditVerificationReport = {
    ...base,
    outcome: 'completed',
    ...(amountMinor === undefined ? {} : { amountMinor }),
    ...(receiver === undefined ? {} : { receiver }),
    toOurAccount:
      data.payment_type === 'bank_transfer' && receiver !== undefined && receiver === report.accountReference,
  };
  return { answer: verified };
}
