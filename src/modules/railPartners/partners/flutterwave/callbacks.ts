/**
 * Flutterwave's webhooks, verified and read. Pure. A webhook is Flutterwave's when its `verif-hash` is the
 * dashboard's secret hash (the service keeps only that header's SHA-256, `verif-hash-sha256`, never the
 * secret itself), or its `flutterwave-signature` is the body's HMAC-SHA256 under that hash; any other is
 * refused as forged (stored, never applied). `transfer.completed` reports a payout; `charge.completed` for a
 * bank transfer into a virtual account number is a payer's own payment, credited to the wallet whose
 * reference the account was made with (its `tx_ref`).
 */
import { createHash, createHmac } from 'node:crypto';
import { sameText } from '../../../../domain/constantTime.ts';
import { isRecord } from '../../../../domain/json.ts';
import { isCurrency } from '../../../../domain/money.ts';
import {
  type ArrivedCallback,
  type CallbackReport,
  MalformedCallbackError,
} from '../../../../rails/partner.ts';
import { minorUnitsOfFlutterwaveAmount } from './connection.ts';
import { outcomeOfStatus } from './payouts.ts';

/** The stored form of `verif-hash`: its SHA-256, hex (useCases/callbacks.ts keeps only that). */
export const VERIF_HASH_DIGEST_HEADER = 'verif-hash-sha256';

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Whether the webhook carries the secret hash (as is or as its digest) or the body's signature under it. */
export function isFlutterwaveWebhook(secretHash: string, callback: ArrivedCallback): boolean {
  const { headers } = callback;
  const digest =
    headers[VERIF_HASH_DIGEST_HEADER] ??
    (headers['verif-hash'] === undefined ? undefined : sha256Hex(headers['verif-hash']));
  if (digest !== undefined && sameText(digest, sha256Hex(secretHash))) return true;
  const signature = headers['flutterwave-signature'];
  const expected = createHmac('sha256', secretHash).update(callback.rawBody, 'utf8').digest('base64');
  return signature !== undefined && sameText(signature, expected);
}

const idText = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== ''
    ? value
    : typeof value === 'number' && Number.isSafeInteger(value)
      ? String(value)
      : undefined;

/** The webhook's data with its currency and amount read; throws for a body that is not Flutterwave's shape. */
function moneyOf(data: Record<string, unknown>, event: string) {
  const currency = data.currency;
  if (typeof currency !== 'string' || !isCurrency(currency)) {
    throw new MalformedCallbackError(
      `The Flutterwave ${event}'s currency ${String(currency)} is not one we know`,
    );
  }
  const amountMinor = minorUnitsOfFlutterwaveAmount(data.amount, currency);
  if (amountMinor === undefined) {
    throw new MalformedCallbackError(
      `The Flutterwave ${event}'s amount ${String(data.amount)} is not a ${currency} amount`,
    );
  }
  return { currency, amountMinor };
}

function transferReport(data: Record<string, unknown>): CallbackReport {
  const reference = idText(data.id);
  const ours = typeof data.reference === 'string' ? data.reference : undefined;
  if (reference === undefined || ours === undefined) {
    throw new MalformedCallbackError('The Flutterwave transfer.completed has no id or reference');
  }
  const { amountMinor } = moneyOf(data, 'transfer.completed');
  const outcome = outcomeOfStatus(data.status, new Date());
  if (outcome === undefined) {
    throw new MalformedCallbackError(
      `The Flutterwave transfer status ${String(data.status)} is not Flutterwave's`,
    );
  }
  if (outcome.kind === 'processing') {
    return {
      kind: 'ignored',
      reason: `Flutterwave reported transfer ${reference} still ${String(data.status)}`,
    };
  }
  return {
    kind: 'payout',
    reference,
    idempotencyReference: ours,
    outcome,
    partnerTransactionId: reference,
    amountMinor,
  };
}

function chargeReport(data: Record<string, unknown>): CallbackReport {
  const id = idText(data.id);
  if (id === undefined) throw new MalformedCallbackError('The Flutterwave charge.completed has no id');
  if (data.payment_type !== 'bank_transfer') {
    return {
      kind: 'ignored',
      reason: `Flutterwave charge ${id} is a ${String(data.payment_type)} payment, not a bank transfer`,
    };
  }
  if (data.status !== 'successful') {
    return { kind: 'ignored', reason: `Flutterwave charge ${id} is ${String(data.status)}` };
  }
  const accountReference = typeof data.tx_ref === 'string' ? data.tx_ref : '';
  const customer = isRecord(data.customer) ? data.customer : {};
  const payer =
    typeof customer.name === 'string'
      ? customer.name
      : typeof data.narration === 'string'
        ? data.narration
        : '';
  return {
    kind: 'credit',
    stage: 'confirmation',
    partnerTransactionId: id,
    accountReference,
    ...moneyOf(data, 'charge.completed'),
    payer,
  };
}

/** Reads a webhook; throws MalformedCallbackError for a forged one or one that is not Flutterwave's shape. */
export function parseFlutterwaveCallback(secretHash: string, callback: ArrivedCallback): CallbackReport {
  if (!isFlutterwaveWebhook(secretHash, callback)) {
    throw new MalformedCallbackError('forged: the webhook has no valid verif-hash or flutterwave-signature');
  }
  let body: unknown;
  try {
    body = JSON.parse(callback.rawBody);
  } catch {
    throw new MalformedCallbackError('The Flutterwave webhook body is not JSON');
  }
  if (!isRecord(body) || !isRecord(body.data)) {
    throw new MalformedCallbackError('The Flutterwave webhook has no data object');
  }
  if (body.event === 'transfer.completed') return transferReport(body.data);
  if (body.event === 'charge.completed') return chargeReport(body.data);
  return { kind: 'ignored', reason: `Flutterwave event ${String(body.event)} changes nothing here` };
}
