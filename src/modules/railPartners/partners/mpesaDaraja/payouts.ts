/**
 * M-Pesa payouts through Daraja (rail.ts): B2C under our idempotency reference as the
 * OriginatorConversationID, and the Transaction Status query that asks for a payout's result again by that
 * id (the query's `OriginalConversationID`).
 */

import type { Transfer } from '../../../../domain/transferRecord.ts';
import type { RailOutcome, SubmitRequest, SubmitResult } from '../../../../rails/rail.ts';
import {
  type DarajaConnection,
  DarajaProtocolError,
  post,
  securityCredential,
  unexpected,
} from './connection.ts';
import {
  DARAJA_CALLBACK_PATHS,
  DARAJA_UNKNOWN_RESULT_FAILURE_CODE,
  DUPLICATE_ORIGINATOR,
  matches,
  PATHS,
  printable,
  REMARKS_MAX_CHARS,
  refusedFailureCode,
  SAFARICOM_E164,
  stringField,
  wholeShillings,
} from './protocol.ts';

/** When to look at an accepted payout if its result has not arrived (results usually take seconds). */
export const DARAJA_PAYOUT_FIRST_CHECK_AFTER_MS = 60_000;
/** How often a payout still processing is asked about again (each check is a Transaction Status query). */
export const DARAJA_STATUS_POLL_INTERVAL_MS = 60_000;

function payoutRecipient(transfer: Transfer): { msisdn: string } | { failureCode: string } {
  const destination = transfer.destination;
  if (destination.type !== 'mobile_money') return { failureCode: 'invalid_phone' };
  if (destination.network !== 'mpesa') return { failureCode: 'network_not_supported' };
  if (!SAFARICOM_E164.test(destination.phone)) return { failureCode: 'invalid_phone' };
  return { msisdn: destination.phone.slice(1) };
}

/** A B2C payout: refused here when Daraja could not carry it, else sent; a duplicate refusal is "already accepted". */
export async function submitPayout(
  connection: DarajaConnection,
  { idempotencyReference, transfer }: SubmitRequest,
  now: Date,
): Promise<SubmitResult> {
  const { config, callbackBase } = connection;
  const shillings = wholeShillings(transfer.amountMinor, transfer.currency);
  if (shillings === null) return { accepted: false, failureCode: 'amount_not_supported' };
  const recipient = payoutRecipient(transfer);
  if ('failureCode' in recipient) return { accepted: false, failureCode: recipient.failureCode };
  const answer = await post(connection, PATHS.b2c, {
    OriginatorConversationID: idempotencyReference,
    InitiatorName: config.initiatorName,
    SecurityCredential: securityCredential(connection),
    CommandID: config.b2cCommandId ?? 'BusinessPayment',
    Amount: shillings,
    PartyA: config.shortCode,
    PartyB: recipient.msisdn,
    Remarks: printable(`Payout ${transfer.id}`, REMARKS_MAX_CHARS),
    QueueTimeOutURL: `${callbackBase}/${DARAJA_CALLBACK_PATHS.b2cQueueTimeout}`,
    ResultURL: `${callbackBase}/${DARAJA_CALLBACK_PATHS.b2cResult}`,
    // Daraja's published sample spells the field this way.
    Occassion: printable(idempotencyReference, REMARKS_MAX_CHARS),
  });
  const accepted: SubmitResult = {
    accepted: true,
    reference: idempotencyReference,
    checkAt: new Date(now.getTime() + DARAJA_PAYOUT_FIRST_CHECK_AFTER_MS),
  };
  if (answer.status === 200 && String(answer.body?.ResponseCode) === '0') {
    const echoed = stringField(answer.body, 'OriginatorConversationID');
    if (echoed !== undefined && echoed !== idempotencyReference) {
      throw new DarajaProtocolError(
        `Daraja accepted payout ${idempotencyReference} under another OriginatorConversationID, ${echoed}`,
      );
    }
    return accepted;
  }
  // The first submit with this reference reached Daraja; its result (or a status query) decides.
  if (matches(answer, DUPLICATE_ORIGINATOR)) return accepted;
  if (answer.status === 400) return { accepted: false, failureCode: refusedFailureCode(answer) };
  if (answer.status === 200) return { accepted: false, failureCode: DARAJA_UNKNOWN_RESULT_FAILURE_CODE };
  return unexpected(PATHS.b2c, answer);
}

/** What a Transaction Status query names, says, and where its result and queue time-out go. */
export interface TransactionStatusQuery {
  reference: string;
  occasion: string;
  remarks: string;
  resultPath: string;
  timeoutPath: string;
  byReceipt?: boolean;
  /** The shortcode the payment is on; the B2C shortcode when not given. */
  partyA?: string;
}

/**
 * Sends a Transaction Status query naming a request by its OriginatorConversationID (the published
 * request's `OriginalConversationID`), or a payment by its receipt (`TransactionID`, with `byReceipt`); the
 * result arrives at `resultPath`. Throws unless Daraja accepts; returns the query's ConversationID, which
 * the result echoes.
 */
export async function askTransactionStatus(
  connection: DarajaConnection,
  query: TransactionStatusQuery,
): Promise<string | undefined> {
  const { config, callbackBase } = connection;
  const answer = await post(connection, PATHS.transactionStatus, {
    Initiator: config.initiatorName,
    SecurityCredential: securityCredential(connection),
    CommandID: 'TransactionStatusQuery',
    [query.byReceipt ? 'TransactionID' : 'OriginalConversationID']: query.reference,
    PartyA: query.partyA ?? config.shortCode,
    IdentifierType: '4', // PartyA is an organization shortcode
    ResultURL: `${callbackBase}/${query.resultPath}`,
    QueueTimeOutURL: `${callbackBase}/${query.timeoutPath}`,
    Remarks: query.remarks,
    // Echoed in the result's ReferenceData: names the request even when M-Pesa cannot find it.
    Occasion: printable(query.occasion, REMARKS_MAX_CHARS),
  });
  if (answer.status !== 200 || String(answer.body?.ResponseCode) !== '0') {
    unexpected(PATHS.transactionStatus, answer);
  }
  return stringField(answer.body, 'ConversationID');
}

/**
 * Asks Transaction Status about a request named by its reference; its result comes as a callback, so the
 * request is still processing, to be looked at again `pollIntervalMs` from now.
 */
export async function askedStillProcessing(
  connection: DarajaConnection,
  query: TransactionStatusQuery,
  now: Date,
  pollIntervalMs: number,
): Promise<RailOutcome> {
  await askTransactionStatus(connection, query);
  return {
    kind: 'processing',
    checkAt: new Date(now.getTime() + pollIntervalMs),
    reference: query.reference,
  };
}

/** Asks for a Transaction Status result (it arrives at `status/result`) and looks again later. */
export async function checkPayout(
  connection: DarajaConnection,
  transfer: Transfer,
  now: Date,
): Promise<RailOutcome> {
  const reference = transfer.railReference;
  if (!reference) throw new DarajaProtocolError(`Transfer ${transfer.id} has no Daraja reference to check`);
  // We know no receipt yet: the payout is named by its OriginatorConversationID, echoed as the Occasion.
  return askedStillProcessing(
    connection,
    {
      reference,
      occasion: reference,
      remarks: 'Payout status',
      resultPath: DARAJA_CALLBACK_PATHS.statusResult,
      timeoutPath: DARAJA_CALLBACK_PATHS.statusQueueTimeout,
    },
    now,
    DARAJA_STATUS_POLL_INTERVAL_MS,
  );
}
