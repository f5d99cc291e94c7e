/**
 * What arrives at the MTN MoMo adapter's callback URLs (rail.ts), read. Pure. MTN does not sign callbacks,
 * and nothing one says is final on its own word: the rail worker's poller confirms every outcome with GET.
 */

import { isRecord, parseJson } from '../../../../domain/json.ts';
import { isCurrency } from '../../../../domain/money.ts';
import {
  type ArrivedCallback,
  type CallbackReport,
  MalformedCallbackError,
} from '../../../../rails/partner.ts';
import {
  failureCodeOfMomoReason,
  type MomoProduct,
  minorUnitsOfMomoAmount,
  momoReferenceId,
  reasonCodeOf,
} from './protocol.ts';

/** Where each product's callbacks arrive, after the organization's callback base URL. */
const CALLBACK_PATH_PRODUCTS: Readonly<Record<string, MomoProduct>> = {
  disbursement: 'disbursement',
  collection: 'collection',
};

/** A JSON value MTN may send as a string or a number (its examples show both). */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  return undefined;
}

/** A callback by the product whose path it arrived at; throws MalformedCallbackError for one it cannot read. */
export function parseMomoCallback(callback: ArrivedCallback): CallbackReport {
  const path = callback.path.replace(/^\/+|\/+$/g, '');
  const product = Object.hasOwn(CALLBACK_PATH_PRODUCTS, path) ? CALLBACK_PATH_PRODUCTS[path] : undefined;
  if (product === undefined) {
    throw new MalformedCallbackError(
      `MTN MoMo callbacks arrive at disbursement or collection, not '${path}'`,
    );
  }
  const body = parseJson(callback.rawBody);
  if (!isRecord(body)) throw new MalformedCallbackError('The MTN MoMo callback body is not a JSON object');
  const externalId = body.externalId;
  if (typeof externalId !== 'string' || externalId === '') {
    throw new MalformedCallbackError('The MTN MoMo callback has no externalId');
  }
  const currency = body.currency;
  if (typeof currency !== 'string' || !isCurrency(currency)) {
    throw new MalformedCallbackError(
      `The MTN MoMo callback's currency ${String(currency)} is not one we know`,
    );
  }
  const amountText = textOf(body.amount);
  const amountMinor = amountText === undefined ? undefined : minorUnitsOfMomoAmount(amountText, currency);
  if (amountMinor === undefined) {
    throw new MalformedCallbackError(
      `The MTN MoMo callback's amount ${String(body.amount)} is not a ${currency} amount`,
    );
  }
  const partnerTransactionId = textOf(body.financialTransactionId);
  const report = {
    kind: product === 'disbursement' ? ('payout' as const) : ('collection' as const),
    reference: momoReferenceId(externalId, product),
    idempotencyReference: externalId,
    ...(partnerTransactionId === undefined ? {} : { partnerTransactionId }),
    amountMinor,
  };
  switch (body.status) {
    case 'SUCCESSFUL':
      return { ...report, outcome: { kind: 'settled' } };
    case 'FAILED':
      return {
        ...report,
        outcome: { kind: 'failed', failureCode: failureCodeOfMomoReason(reasonCodeOf(body.reason)) },
      };
    case 'PENDING':
      // MTN sends callbacks once final; a PENDING one changes nothing the poller does not already know.
      return { kind: 'ignored', reason: `MTN MoMo reported ${externalId} still PENDING` };
    default:
      throw new MalformedCallbackError(`The MTN MoMo callback's status ${String(body.status)} is not MTN's`);
  }
}
