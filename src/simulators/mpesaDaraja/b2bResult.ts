/**
 * The result a B2B payment request's ResultURL receives, in the shape of Safaricom's published sample: on
 * success the paying account's balance and the amount as the sample writes them (computed in integer
 * cents), otherwise only the result code; `ReferenceData` echoes the bill reference and the queue URL.
 */
import { accountText, decimalShillings } from './accountBalance.ts';
import { compactDateTime } from './formats.ts';
import { paymentResultBody } from './resultApis.ts';
import type { DarajaSimulatedPayment, DarajaState } from './state.ts';

/** Shillings to cents, for the result's amounts (written with two decimals). */
export const CENTS_PER_SHILLING = 100n;

/** What a valid B2B request asks for. */
export interface B2BRequest {
  commandId: string;
  amount: number;
  partyA: string;
  partyB: string;
  accountReference?: string;
}

/** The published result: on success the balances and amounts as the sample writes them, else only the code. */
export function b2bResultBody(
  state: DarajaState,
  payment: DarajaSimulatedPayment,
  request: B2BRequest,
  body: Record<string, unknown>,
  utilityBefore: bigint,
): unknown {
  const referenceItems = [
    ...(request.accountReference === undefined
      ? []
      : [{ Key: 'BillReferenceNumber', Value: request.accountReference }]),
    { Key: 'QueueTimeoutURL', Value: String(body.QueueTimeOutURL) },
  ];
  return paymentResultBody(payment, { ReferenceItem: referenceItems }, () => {
    const after = utilityBefore - BigInt(payment.amount) * CENTS_PER_SHILLING;
    const balance = amountObject(after);
    return [
      { Key: 'DebitAccountBalance', Value: balance },
      { Key: 'Amount', Value: decimalShillings(BigInt(payment.amount) * CENTS_PER_SHILLING) },
      { Key: 'DebitPartyAffectedAccountBalance', Value: accountText('Utility Account', after) },
      { Key: 'TransCompletedTime', Value: String(compactDateTime(payment.completedAt ?? state.now())) },
      { Key: 'DebitPartyCharges', Value: '' },
      { Key: 'ReceiverPartyPublicName', Value: `${request.partyB} - Simulated Business` },
      { Key: 'Currency', Value: 'KES' },
      { Key: 'InitiatorAccountCurrentBalance', Value: balance },
    ];
  });
}

/** `{Amount={CurrencyCode=KES, MinimumAmount=<cents>, BasicAmount=<shillings.cents>}}`, as the sample writes it. */
function amountObject(cents: bigint): string {
  return `{Amount={CurrencyCode=KES, MinimumAmount=${cents}, BasicAmount=${decimalShillings(cents)}}}`;
}
