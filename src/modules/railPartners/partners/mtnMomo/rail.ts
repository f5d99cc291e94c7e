/**
 * MTN MoMo Open API as a partner rail: payouts through the disbursement product's transfer, collections
 * through the collection product's request-to-pay, both asynchronous (202, then a callback and GET).
 *
 * Idempotency: MTN identifies a request by the X-Reference-Id (a UUID) the caller chooses, and answers a
 * second POST with the same one 409 RESOURCE_ALREADY_EXIST. The adapter derives that UUID from the
 * idempotency reference alone (momoReferenceId), so a repeated submit, from any worker or after a restart,
 * names the same request; its 409 is read as "already made" and answered with the same reference after a
 * GET, never with a second payment. The same derivation lets a callback, which carries only our externalId,
 * name the reference it is about.
 *
 * Callbacks: MTN does not sign them. What guards the endpoint is the organization's unguessable path token
 * (CallbackTarget.baseUrl), and nothing a callback says is final on its own word alone: the rail worker's
 * poller confirms every outcome with GET. parseCallback only reads the body.
 *
 * This file puts the adapter together; its parts: connection.ts (configuration, the error, tokens,
 * requests), requests.ts (transfers, requests-to-pay, their status), account.ts (balances and the
 * account-holder check a payout makes first), callbacks.ts (parseCallback), protocol.ts (MTN's products,
 * codes, reference ids and amounts).
 */

import type { CallbackTarget, PartnerRail } from '../../../../rails/partner.ts';
import { type MomoAccountBalance, momoAccountBalance } from './account.ts';
import { parseMomoCallback } from './callbacks.ts';
import { type MtnMomoConfig, momoConnection } from './connection.ts';
import { type MomoProduct, MTN_MOMO_PARTNER } from './protocol.ts';
import { checkPayout, checkRequest, collect, submitPayout } from './requests.ts';

export function mtnMomoRail(config: MtnMomoConfig, callbacks: CallbackTarget): PartnerRail {
  const connection = momoConnection(config, callbacks);
  return {
    partner: MTN_MOMO_PARTNER,
    submit: (request, now) => submitPayout(connection, request, now),
    check: (transfer, now) => checkPayout(connection, transfer, now),
    collect: (request, now) => collect(connection, request, now),
    checkCollection: (reference, idempotencyReference, now) =>
      checkRequest(connection, 'collection', reference, idempotencyReference, now),
    parseCallback: parseMomoCallback,
    // MTN answers at once: the disbursement account pays payouts, the collection account takes collections.
    queryBalances: async () => {
      const products = ['disbursement', 'collection'] as const;
      const balances = await Promise.all(products.map((product) => momoAccountBalance(connection, product)));
      return {
        kind: 'reported',
        accounts: balances.map((b, i) => ({
          account: products[i] as string,
          currency: b.currency,
          availableMinor: b.availableMinor,
          currentMinor: null,
        })),
      };
    },
  };
}

/**
 * A product account's available balance (the disbursement account pays payouts, the collection account
 * receives collections). The rail interface has no balance operation, so this stands beside it; it takes its
 * own token. Throws MtnMomoError when MTN gives no balance.
 */
export function mtnMomoAccountBalance(
  config: MtnMomoConfig,
  product: MomoProduct,
): Promise<MomoAccountBalance> {
  return momoAccountBalance(momoConnection(config, { baseUrl: '' }), product);
}
