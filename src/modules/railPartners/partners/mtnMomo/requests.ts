/**
 * MTN MoMo's requests (rail.ts): payouts as the disbursement product's transfers, collections as the
 * collection product's requests-to-pay, each POSTed under its derived X-Reference-Id, and a request's
 * status read with GET.
 */

import type { Transfer } from '../../../../domain/transferRecord.ts';
import type { CollectionRequest, CollectResult } from '../../../../rails/partner.ts';
import type { RailOutcome, SubmitRequest, SubmitResult } from '../../../../rails/rail.ts';
import { momoAccountHolderActive } from './account.ts';
import { authorized, describe, fetchResource, type MomoConnection, MtnMomoError } from './connection.ts';
import {
  failureCodeOfMomoReason,
  MOMO_CURRENCIES,
  MOMO_PAYEE_NOT_ACTIVE_FAILURE_CODE,
  MOMO_SYNCHRONOUS_REFUSAL_REASONS,
  type MomoProduct,
  momoAmountOf,
  momoNote,
  momoReferenceId,
  msisdnOf,
  PATHS,
  reasonCodeOf,
} from './protocol.ts';

/** How long until a request still PENDING (or just accepted) is looked at again with GET. */
export const MOMO_STATUS_POLL_INTERVAL_MS = 30_000;

/** Refuses to take another request's answer as ours: the externalId must be our idempotency reference. */
function checkBelongs(resource: Record<string, unknown>, referenceId: string, idempotencyReference: string) {
  if (resource.externalId !== idempotencyReference) {
    throw new MtnMomoError(
      `MTN MoMo request ${referenceId} carries externalId ${String(resource.externalId)}, not ${idempotencyReference}`,
    );
  }
}

function outcomeOf(resource: Record<string, unknown>, referenceId: string, now: Date): RailOutcome {
  switch (resource.status) {
    case 'SUCCESSFUL':
      return { kind: 'settled' };
    case 'FAILED':
      return { kind: 'failed', failureCode: failureCodeOfMomoReason(reasonCodeOf(resource.reason)) };
    case 'PENDING':
      return { kind: 'processing', checkAt: new Date(now.getTime() + MOMO_STATUS_POLL_INTERVAL_MS) };
    default:
      throw new MtnMomoError(
        `MTN MoMo request ${referenceId} has an unknown status ${String(resource.status)}`,
      );
  }
}

/**
 * POSTs a transfer or request-to-pay under its derived X-Reference-Id and reads MTN's answer: 202 is
 * accepted, 409 is the same request made before, a 400 or a confirmed refusal is a failure code, anything
 * else throws so the worker asks again (safe: the same X-Reference-Id cannot make a second request).
 */
async function createRequest(
  connection: MomoConnection,
  product: MomoProduct,
  idempotencyReference: string,
  body: Record<string, unknown>,
  now: Date,
): Promise<SubmitResult> {
  const referenceId = momoReferenceId(idempotencyReference, product);
  const accepted = (): SubmitResult => ({
    accepted: true,
    reference: referenceId,
    checkAt: new Date(now.getTime() + MOMO_STATUS_POLL_INTERVAL_MS),
  });
  const answer = await authorized(
    connection,
    product,
    'POST',
    PATHS[product].resource,
    {
      'X-Reference-Id': referenceId,
      'X-Callback-Url': `${connection.callbackBase}/${product}`,
      'Content-Type': 'application/json',
    },
    JSON.stringify(body),
  );
  if (answer.status === 202) return accepted();
  if (answer.status === 409 && answer.code === 'RESOURCE_ALREADY_EXIST') {
    const existing = await fetchResource(connection, product, referenceId);
    if (!existing) {
      throw new MtnMomoError(
        `MTN MoMo answered 409 for ${referenceId} but does not know it`,
        409,
        answer.code,
      );
    }
    checkBelongs(existing, referenceId, idempotencyReference);
    return accepted();
  }
  if (answer.status === 400) {
    return { accepted: false, failureCode: failureCodeOfMomoReason(answer.code) };
  }
  if (
    answer.status >= 500 &&
    answer.code !== undefined &&
    MOMO_SYNCHRONOUS_REFUSAL_REASONS.has(answer.code)
  ) {
    const existing = await fetchResource(connection, product, referenceId);
    if (!existing) return { accepted: false, failureCode: failureCodeOfMomoReason(answer.code) };
    checkBelongs(existing, referenceId, idempotencyReference);
    return accepted();
  }
  throw new MtnMomoError(
    `MTN MoMo answered POST ${PATHS[product].resource} with ${describe(answer)}`,
    answer.status,
    answer.code,
  );
}

/** A request's outcome by GET, checked to be ours. */
export async function checkRequest(
  connection: MomoConnection,
  product: MomoProduct,
  referenceId: string,
  idempotencyReference: string,
  now: Date,
): Promise<RailOutcome> {
  const resource = await fetchResource(connection, product, referenceId);
  if (!resource) {
    // Only asked about a reference MTN accepted: say so on the transfer and look again later.
    return {
      kind: 'processing',
      reason: 'partner_reference_not_found',
      checkAt: new Date(now.getTime() + MOMO_STATUS_POLL_INTERVAL_MS),
    };
  }
  checkBelongs(resource, referenceId, idempotencyReference);
  return outcomeOf(resource, referenceId, now);
}

/**
 * A payout as a disbursement transfer, refused here when MTN could not carry it, or when MTN says the payee is
 * not an active account holder (MOMO_PAYEE_NOT_ACTIVE_FAILURE_CODE).
 */
export async function submitPayout(
  connection: MomoConnection,
  { idempotencyReference, transfer }: SubmitRequest,
  now: Date,
): Promise<SubmitResult> {
  const destination = transfer.destination;
  if (destination.type !== 'mobile_money' || destination.network !== 'mtn') {
    return { accepted: false, failureCode: 'destination_not_supported' };
  }
  if (!MOMO_CURRENCIES.has(transfer.currency)) {
    return { accepted: false, failureCode: 'currency_not_supported' };
  }
  const amount = momoAmountOf(transfer.amountMinor, transfer.currency);
  if (amount === undefined) return { accepted: false, failureCode: 'amount_not_supported' };
  const payee = msisdnOf(destination.phone);
  if ((await momoAccountHolderActive(connection, 'disbursement', 'msisdn', payee)) === false) {
    // Refused only if no earlier attempt made the transfer: one that did is MTN's to decide, not ours.
    const earlier = await fetchResource(
      connection,
      'disbursement',
      momoReferenceId(idempotencyReference, 'disbursement'),
    );
    if (earlier === undefined) return { accepted: false, failureCode: MOMO_PAYEE_NOT_ACTIVE_FAILURE_CODE };
  }
  return createRequest(
    connection,
    'disbursement',
    idempotencyReference,
    {
      amount,
      currency: transfer.currency,
      externalId: idempotencyReference,
      payee: { partyIdType: 'MSISDN', partyId: payee },
      payerMessage: momoNote(idempotencyReference),
      payeeNote: momoNote(idempotencyReference),
    },
    now,
  );
}

/** Asks MTN with GET what became of a payout. */
export async function checkPayout(
  connection: MomoConnection,
  transfer: Transfer,
  now: Date,
): Promise<RailOutcome> {
  if (transfer.railReference === null) {
    throw new MtnMomoError(`transfer ${transfer.id} has no MTN MoMo reference to check`);
  }
  return checkRequest(connection, 'disbursement', transfer.railReference, transfer.id, now);
}

/** A collection as a request-to-pay, refused here when MTN could not carry it. */
export async function collect(
  connection: MomoConnection,
  request: CollectionRequest,
  now: Date,
): Promise<CollectResult> {
  if (!MOMO_CURRENCIES.has(request.currency)) {
    return { accepted: false, failureCode: 'currency_not_supported' };
  }
  const amount = momoAmountOf(request.amountMinor, request.currency);
  if (amount === undefined) return { accepted: false, failureCode: 'amount_not_supported' };
  return createRequest(
    connection,
    'collection',
    request.idempotencyReference,
    {
      amount,
      currency: request.currency,
      externalId: request.idempotencyReference,
      payer: { partyIdType: 'MSISDN', partyId: msisdnOf(request.payerPhone) },
      // The payer reads payerMessage on their phone and in their history; payeeNote is ours.
      payerMessage: momoNote(request.description),
      payeeNote: momoNote(request.reference),
    },
    now,
  );
}
