/**
 * Safaricom M-Pesa through Daraja: payouts by B2C, collections by M-Pesa Express (STK push), payout status
 * by the Transaction Status API, payers' own payments to the paybill or till (C2B),
 * and reversals of settled payouts by the Reversal API. Daraja answers requests synchronously with an acceptance and reports the
 * outcome later by POSTing to the callback URLs each request names; this adapter builds those URLs under
 * the organization's callback base and reads what arrives there (parseCallback).
 *
 * Idempotency. B2C carries our idempotency reference as OriginatorConversationID. Daraja refuses a repeated
 * one (HTTP 500, `500.002.1001` "Duplicate OriginatorConversationID") without paying again and without
 * naming the first ConversationID, so the payout's reference is the OriginatorConversationID: the one id
 * every submit knows, that every result echoes and that the Transaction Status API accepts. A duplicate
 * refusal is read as "already accepted".
 *
 * M-Pesa Express has no idempotency key: each push is a new CheckoutRequestID and a new PIN prompt, and the
 * callback does not echo anything of ours. Without persisting anything this adapter can only (1) answer a
 * repeated collect on this instance with the first push's reference, and (2) take M-Pesa's refusal to
 * prompt a phone that already has a prompt open ("Unable to lock subscriber") as `payer_busy` rather than
 * retry into a second prompt. A collect repeated from another process after the first prompt has closed
 * sends a second prompt: the residual risk, documented in docs/rails/mpesa-daraja.md.
 *
 * Daraja does not sign callbacks. The guard is the unguessable token in the callback base URL (and, in
 * production, allow-listing Safaricom's callback IP addresses); parseCallback only reads the shape.
 *
 * B2B (paybills and tills) has no idempotency key: b2b.ts records each request in the payout request journal
 * before it goes out and never sends one twice.
 *
 * This file puts the adapter together; its parts: connection.ts (configuration, errors, the token, requests),
 * payouts.ts (B2C, Transaction Status), b2b.ts (B2B to paybills and tills), collections.ts (STK push and
 * query), callbacks.ts (parseCallback), callbackFields.ts (reading callback bodies), accountBalance.ts (the
 * balance query and its result), c2b.ts (C2B URL registration, validation and confirmation), reversal.ts
 * (reversals of settled payouts), protocol.ts (Daraja's paths, codes and limits).
 */

import type {
  CallbackTarget,
  CreditUrlRegistration,
  PartnerRail,
  PayoutRequestJournal,
} from '../../../../rails/partner.ts';
import { type DarajaBalanceQuery, queryAccountBalance } from './accountBalance.ts';
import {
  checkB2bPayout,
  isB2bPayout,
  memoryPayoutRequestJournal,
  parseB2bCallback,
  submitB2bPayout,
} from './b2b.ts';
import { answerC2BCredit, registerC2BUrls } from './c2b.ts';
import { parseDarajaCallback } from './callbacks.ts';
import { checkCollection, collect, type RememberedPushes } from './collections.ts';
import { darajaConnection, type MpesaDarajaConfig } from './connection.ts';
import { checkPayout, submitPayout } from './payouts.ts';
import { checkReversal, reversePayout } from './reversal.ts';

/** The partner rail, plus Daraja's Account Balance query (no rail interface method asks for balances yet). */
export interface MpesaDarajaRail extends PartnerRail {
  /** Asks for the shortcode's balances; they arrive at `balance/result` (accountBalance.ts reads them). */
  queryAccountBalance(): Promise<DarajaBalanceQuery>;
  /** Registers our C2B validation and confirmation URLs for the paybill or till payers pay (c2b.ts). */
  registerCreditUrls(): Promise<CreditUrlRegistration>;
}

/** `payoutRequests`: where B2B requests are recorded; one in this instance's memory when not given (tests). */
export function mpesaDarajaRail(
  config: MpesaDarajaConfig,
  callbacks: CallbackTarget,
  payoutRequests: PayoutRequestJournal = memoryPayoutRequestJournal(),
): MpesaDarajaRail {
  const connection = darajaConnection(config, callbacks);
  const pushes: RememberedPushes = new Map();
  return {
    partner: 'mpesa_daraja',
    submit: (request, now) =>
      isB2bPayout(request.transfer)
        ? submitB2bPayout(connection, payoutRequests, request, now)
        : submitPayout(connection, request, now),
    check: (transfer, now) =>
      isB2bPayout(transfer)
        ? checkB2bPayout(connection, payoutRequests, transfer, now)
        : checkPayout(connection, transfer, now),
    collect: (request, now) => collect(connection, pushes, request, now),
    checkCollection: (reference, _idempotencyReference, now) => checkCollection(connection, reference, now),
    parseCallback: (callback) => parseB2bCallback(callback) ?? parseDarajaCallback(callback),
    queryAccountBalance: () => queryAccountBalance(connection),
    // Payers pay the Lipa na M-Pesa paybill or till, the STK shortcode.
    registerCreditUrls: () => registerC2BUrls(connection, config.stkShortCode ?? config.shortCode),
    answerCredit: answerC2BCredit,
    reverse: (request, now) => reversePayout(connection, request, now),
    checkReversal: (reference, idempotencyReference, now) =>
      checkReversal(connection, reference, idempotencyReference, now),
  };
}
