/**
 * MTN MoMo's account APIs as the adapter reads them (rail.ts): a product account's balance, and whether an
 * account holder is active, which a payout asks before it is made so a number that cannot receive fails at
 * once rather than after MTN has queued it.
 */

import { isRecord } from '../../../../domain/json.ts';
import { type Currency, isCurrency } from '../../../../domain/money.ts';
import { authorized, describe, type MomoConnection, MtnMomoError } from './connection.ts';
import { type MomoProduct, minorUnitsOfMomoAmount } from './protocol.ts';

/**
 * The account-holder check's time limit: short, since a payout that gets no answer in time goes on without
 * it (the check only makes a failure come sooner; MTN still decides the transfer).
 */
export const MOMO_ACTIVE_CHECK_TIMEOUT_MS = 2_000;

/** The account holder id types MTN's path takes, in small letters as its reference asks. */
export type MomoAccountHolderIdType = 'msisdn' | 'email' | 'party_code';

/** A product account's available balance, exactly, in the currency's minor units (negative when overdrawn). */
export interface MomoAccountBalance {
  currency: Currency;
  availableMinor: bigint;
}

/**
 * GET /{product}/v1_0/accountholder/{type}/{id}/active: true or false as MTN answers `{result}`, or undefined
 * when there is no such answer (an error, a time-out, another body): the caller then goes on without it.
 */
export async function momoAccountHolderActive(
  connection: MomoConnection,
  product: MomoProduct,
  idType: MomoAccountHolderIdType,
  id: string,
): Promise<boolean | undefined> {
  const path = `/${product}/v1_0/accountholder/${idType}/${encodeURIComponent(id)}/active`;
  try {
    const answer = await authorized(
      connection,
      product,
      'GET',
      path,
      {},
      undefined,
      MOMO_ACTIVE_CHECK_TIMEOUT_MS,
    );
    const body = answer.body;
    if (answer.status !== 200 || !isRecord(body) || typeof body.result !== 'boolean') return undefined;
    return body.result;
  } catch (error) {
    if (error instanceof MtnMomoError) return undefined;
    throw error;
  }
}

/** GET /{product}/v1_0/account/balance, read exactly; throws MtnMomoError for any other answer. */
export async function momoAccountBalance(
  connection: MomoConnection,
  product: MomoProduct,
): Promise<MomoAccountBalance> {
  const path = `/${product}/v1_0/account/balance`;
  const answer = await authorized(connection, product, 'GET', path);
  const body = answer.body;
  if (answer.status !== 200 || !isRecord(body)) {
    throw new MtnMomoError(
      `MTN MoMo answered GET ${path} with ${describe(answer)}`,
      answer.status,
      answer.code,
    );
  }
  const { availableBalance, currency } = body;
  if (typeof currency !== 'string' || !isCurrency(currency) || typeof availableBalance !== 'string') {
    throw new MtnMomoError(`MTN MoMo's ${product} balance is not an amount in a currency we know`);
  }
  const negative = availableBalance.startsWith('-');
  const magnitude = minorUnitsOfMomoAmount(negative ? availableBalance.slice(1) : availableBalance, currency);
  if (magnitude === undefined) {
    throw new MtnMomoError(`MTN MoMo's ${product} balance ${availableBalance} is not a ${currency} amount`);
  }
  return { currency, availableMinor: negative ? -magnitude : magnitude };
}
