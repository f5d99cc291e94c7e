/**
 * Bank-account and mobile-money payouts through Flutterwave's Transfers API: a bank account's name resolved
 * first (an account that does not resolve, or whose name is not the beneficiary's, fails at once and nothing
 * is sent), a mobile-money wallet by its operator code (mobileMoney.ts), then
 * POST /v3/transfers with our transfer id as its `reference`, Flutterwave's idempotency key: a repeat is
 * refused, and the first transfer is then found by that reference, so a retried submit never pays twice.
 * The outcome comes by `transfer.completed` (callbacks.ts) or GET /v3/transfers/{id} (`check`).
 */

import { isRecord } from '../../../../domain/json.ts';
import { formatAmount } from '../../../../domain/money.ts';
import type { Transfer } from '../../../../domain/transferRecord.ts';
import type { CallbackTarget } from '../../../../rails/partner.ts';
import type { RailOutcome, SubmitRequest, SubmitResult } from '../../../../rails/rail.ts';
import { type FlutterwaveConfig, FlutterwaveError, flutterwaveCall } from './connection.ts';
import { type MobileMoneyTransferFields, mobileMoneyFields } from './mobileMoney.ts';

/** How long until a transfer not yet final is looked at again with GET. */
export const FLUTTERWAVE_STATUS_POLL_INTERVAL_MS = 30_000;
/** Flutterwave's limit on a transfer's narration. */
const NARRATION_MAX_CHARS = 100;

/** Why a payout failed before anything was sent, or what Flutterwave's FAILED means for us. */
export const FLUTTERWAVE_FAILURE_CODES = {
  /** The account does not resolve at the bank: no such account. */
  unresolvable: 'recipient_account_not_found',
  /** The account resolves to a name that is not the beneficiary's. */
  nameMismatch: 'recipient_name_mismatch',
  /** Neither a bank account nor a mobile-money wallet Flutterwave lists (network, currency), or no name. */
  destination: 'destination_not_supported',
  /** Flutterwave refused the transfer (a 400), or reported it FAILED. */
  rejected: 'partner_rejected',
} as const;

/** Names compared as a bank prints them: case, punctuation, spacing and word order do not count. */
export function sameAccountName(a: string, b: string): boolean {
  const words = (name: string) =>
    name
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s]/gu, ' ')
      .split(/\s+/)
      .filter((word) => word !== '')
      .sort()
      .join(' ');
  return words(a) === words(b);
}

/** The bank account a payout goes to, or the failure code of one that cannot go. */
async function resolvedAccount(
  config: FlutterwaveConfig,
  destination: Extract<Transfer['destination'], { type: 'bank_account' }>,
): Promise<MobileMoneyTransferFields | { failureCode: string }> {
  const resolved = await flutterwaveCall(
    config,
    'POST',
    '/v3/accounts/resolve',
    JSON.stringify({ account_number: destination.account_number, account_bank: destination.bank_code }),
  );
  if (resolved.status >= 500) {
    throw new FlutterwaveError(
      `Flutterwave could not resolve the account: ${resolved.status}`,
      resolved.status,
    );
  }
  const name = isRecord(resolved.data) ? resolved.data.account_name : undefined;
  if (!resolved.ok || typeof name !== 'string' || name.trim() === '') {
    return { failureCode: FLUTTERWAVE_FAILURE_CODES.unresolvable };
  }
  if (destination.account_name !== undefined && !sameAccountName(destination.account_name, name)) {
    return { failureCode: FLUTTERWAVE_FAILURE_CODES.nameMismatch };
  }
  return {
    account_bank: destination.bank_code,
    account_number: destination.account_number,
    beneficiary_name: name,
  };
}

/**
 * Whom the transfer pays: a bank account once it resolves to the beneficiary's name, or a mobile-money
 * wallet on a network and currency Flutterwave lists (mobileMoney.ts); else the failure code.
 */
async function payeeOf(
  config: FlutterwaveConfig,
  transfer: Transfer,
): Promise<MobileMoneyTransferFields | { failureCode: string }> {
  const destination = transfer.destination;
  if (destination.type === 'bank_account') return resolvedAccount(config, destination);
  if (destination.type !== 'mobile_money') return { failureCode: FLUTTERWAVE_FAILURE_CODES.destination };
  const fields = mobileMoneyFields(config, destination, transfer.currency);
  return 'unsupported' in fields ? { failureCode: FLUTTERWAVE_FAILURE_CODES.destination } : fields;
}

/** Submits a payout: finds the payee, then POSTs the transfer under our transfer id as its reference. */
export async function submitPayout(
  config: FlutterwaveConfig,
  callbacks: CallbackTarget,
  request: SubmitRequest,
  now: Date,
): Promise<SubmitResult> {
  const { transfer, idempotencyReference } = request;
  const payee = await payeeOf(config, transfer);
  if ('failureCode' in payee) return { accepted: false, failureCode: payee.failureCode };
  const fields = JSON.stringify({
    account_bank: payee.account_bank,
    account_number: payee.account_number,
    currency: transfer.currency,
    debit_currency: transfer.currency,
    narration: `Mkoba ${idempotencyReference}`.slice(0, NARRATION_MAX_CHARS),
    reference: idempotencyReference,
    callback_url: `${callbacks.baseUrl}/transfers`,
    beneficiary_name: payee.beneficiary_name,
    ...(payee.meta === undefined ? {} : { meta: payee.meta }),
  });
  // The amount goes as a JSON number written from the integer minor units' text, never through a float.
  const body = `{"amount":${formatAmount(transfer.amountMinor, transfer.currency)},${fields.slice(1)}`;
  const created = await flutterwaveCall(config, 'POST', '/v3/transfers', body);
  const accepted = (reference: string): SubmitResult => ({
    accepted: true,
    reference,
    checkAt: new Date(now.getTime() + FLUTTERWAVE_STATUS_POLL_INTERVAL_MS),
  });
  const id = isRecord(created.data) ? created.data.id : undefined;
  if (created.ok && (typeof id === 'number' || typeof id === 'string')) return accepted(String(id));
  if (created.status >= 500 || created.ok) {
    throw new FlutterwaveError(
      `Flutterwave gave no transfer for ${idempotencyReference}: ${created.status}`,
      created.status,
    );
  }
  // A 400 may be the refusal of a reference used before: the first POST reached Flutterwave. Find it.
  const earlier = await transferByReference(config, idempotencyReference);
  if (earlier !== undefined) return accepted(earlier);
  return { accepted: false, failureCode: FLUTTERWAVE_FAILURE_CODES.rejected };
}

/** The id of the transfer made under our reference, if Flutterwave has one. */
async function transferByReference(
  config: FlutterwaveConfig,
  reference: string,
): Promise<string | undefined> {
  const listed = await flutterwaveCall(
    config,
    'GET',
    `/v3/transfers?reference=${encodeURIComponent(reference)}`,
  );
  if (!listed.ok) {
    throw new FlutterwaveError(
      `Flutterwave could not list transfers by reference: ${listed.status}`,
      listed.status,
    );
  }
  const found = Array.isArray(listed.data)
    ? listed.data.find((entry) => isRecord(entry) && entry.reference === reference)
    : undefined;
  const id = isRecord(found) ? found.id : undefined;
  return typeof id === 'number' || typeof id === 'string' ? String(id) : undefined;
}

/** A transfer's status as Flutterwave gives it, as the rail's outcome. */
export function outcomeOfStatus(status: unknown, now: Date): RailOutcome | undefined {
  switch (status) {
    case 'SUCCESSFUL':
      return { kind: 'settled' };
    case 'FAILED':
      return { kind: 'failed', failureCode: FLUTTERWAVE_FAILURE_CODES.rejected };
    case 'NEW':
    case 'PENDING':
      return { kind: 'processing', checkAt: new Date(now.getTime() + FLUTTERWAVE_STATUS_POLL_INTERVAL_MS) };
    default:
      return undefined;
  }
}

/** GET /v3/transfers/{id}: the payout's outcome, after checking it is ours. */
export async function checkPayout(
  config: FlutterwaveConfig,
  transfer: Transfer,
  now: Date,
): Promise<RailOutcome> {
  const reference = transfer.railReference ?? '';
  const answer = await flutterwaveCall(config, 'GET', `/v3/transfers/${encodeURIComponent(reference)}`);
  if (!answer.ok || !isRecord(answer.data)) {
    throw new FlutterwaveError(`Flutterwave gave no transfer ${reference}: ${answer.status}`, answer.status);
  }
  if (answer.data.reference !== transfer.id) {
    throw new FlutterwaveError(
      `Flutterwave transfer ${reference} carries reference ${String(answer.data.reference)}, not ${transfer.id}`,
    );
  }
  const outcome = outcomeOfStatus(answer.data.status, now);
  if (outcome === undefined) {
    throw new FlutterwaveError(
      `Flutterwave transfer ${reference} has an unknown status ${String(answer.data.status)}`,
    );
  }
  return { ...outcome, reference };
}
