/**
 * M-Pesa reversals through Daraja (rail.ts): the Reversal request for a settled B2C payout (named by its
 * receipt, for its whole amount, back to our B2C shortcode), the Transaction Status query that asks for a
 * reversal's result again when it has not come, and the reading of both results as `reversal` reports.
 *
 * Daraja's Reversal request carries no id of ours: its acknowledgement's OriginatorConversationID is the
 * reversal's reference, and every result echoes it. A successful result also names the payout's receipt
 * (`OriginalTransactionID`), so a result whose acknowledgement was lost still finds its payout.
 */

import {
  type CallbackReport,
  MalformedCallbackError,
  type ReversalRequest,
} from '../../../../rails/partner.ts';
import type { RailOutcome, SubmitResult } from '../../../../rails/rail.ts';
import { amountMinorOf, keyValues, objectField, requiredString, resultCodeOf } from './callbackFields.ts';
import { type DarajaConnection, post, securityCredential, unexpected } from './connection.ts';
import { askedStillProcessing } from './payouts.ts';
import {
  DARAJA_UNKNOWN_RESULT_FAILURE_CODE,
  payoutFailureCode,
  printable,
  REMARKS_MAX_CHARS,
  refusedFailureCode,
  stringField,
  wholeShillings,
} from './protocol.ts';
import { failedReport, settledReport } from './reports.ts';

export const DARAJA_REVERSAL_PATH = '/mpesa/reversal/v1/request';

/** Callback paths of reversals under the organization's callback base URL. */
export const DARAJA_REVERSAL_CALLBACK_PATHS = {
  result: 'reversal/result',
  queueTimeout: 'reversal/timeout',
  statusResult: 'reversal/status/result',
  statusQueueTimeout: 'reversal/status/timeout',
} as const;

/** The published page's only `RecieverIdentifierType` for a reversal. */
const REVERSAL_RECEIVER_IDENTIFIER_TYPE = '11';
/** When to ask about an accepted reversal whose result has not come. */
export const DARAJA_REVERSAL_FIRST_CHECK_AFTER_MS = 60_000;
/** How often a reversal still undecided is asked about again. */
export const DARAJA_REVERSAL_POLL_INTERVAL_MS = 60_000;
/** Remarks must be 2 to 100 characters; a shorter reason is padded with this. */
const DEFAULT_REMARKS = 'Payout reversal';

/** Reversal ResultCodes of its own → our failure code; the others mean what they mean for a payout. */
export const DARAJA_REVERSAL_FAILURE_CODES: Record<string, string> = {
  R000001: 'already_reversed', // "The transaction has already been reversed."
  R000002: 'original_transaction_invalid', // "The OriginalTransactionID is invalid."
};

export function reversalFailureCode(code: string): string {
  return DARAJA_REVERSAL_FAILURE_CODES[code] ?? payoutFailureCode(code);
}

/** Sends the Reversal request; a 400 is a refusal (it never reached M-Pesa), the rest throws to be retried. */
export async function reversePayout(
  connection: DarajaConnection,
  { transfer, partnerTransactionId, remarks }: ReversalRequest,
  now: Date,
): Promise<SubmitResult> {
  const { config, callbackBase } = connection;
  const shillings = wholeShillings(transfer.amountMinor, transfer.currency);
  if (shillings === null) return { accepted: false, failureCode: 'amount_not_supported' };
  const text = printable(remarks, REMARKS_MAX_CHARS);
  const answer = await post(connection, DARAJA_REVERSAL_PATH, {
    Initiator: config.initiatorName,
    SecurityCredential: securityCredential(connection),
    CommandID: 'TransactionReversal',
    TransactionID: partnerTransactionId,
    Amount: shillings,
    ReceiverParty: config.shortCode,
    // Daraja's field name is spelt this way.
    RecieverIdentifierType: REVERSAL_RECEIVER_IDENTIFIER_TYPE,
    ResultURL: `${callbackBase}/${DARAJA_REVERSAL_CALLBACK_PATHS.result}`,
    QueueTimeOutURL: `${callbackBase}/${DARAJA_REVERSAL_CALLBACK_PATHS.queueTimeout}`,
    Remarks: text.length >= 2 ? text : DEFAULT_REMARKS,
    Occasion: printable(transfer.id, REMARKS_MAX_CHARS),
  });
  const reference = stringField(answer.body, 'OriginatorConversationID');
  if (answer.status === 200 && String(answer.body?.ResponseCode) === '0' && reference) {
    return {
      accepted: true,
      reference,
      checkAt: new Date(now.getTime() + DARAJA_REVERSAL_FIRST_CHECK_AFTER_MS),
    };
  }
  if (answer.status === 400) return { accepted: false, failureCode: refusedFailureCode(answer) };
  return unexpected(DARAJA_REVERSAL_PATH, answer);
}

/** Asks Transaction Status about a reversal by its OriginatorConversationID; the result comes as a callback. */
export async function checkReversal(
  connection: DarajaConnection,
  reference: string,
  idempotencyReference: string,
  now: Date,
): Promise<RailOutcome> {
  return askedStillProcessing(
    connection,
    {
      reference,
      occasion: idempotencyReference,
      remarks: 'Reversal status',
      resultPath: DARAJA_REVERSAL_CALLBACK_PATHS.statusResult,
      timeoutPath: DARAJA_REVERSAL_CALLBACK_PATHS.statusQueueTimeout,
    },
    now,
    DARAJA_REVERSAL_POLL_INTERVAL_MS,
  );
}

/** Whether a callback path is a reversal's. */
export function isReversalCallbackPath(path: string): boolean {
  return (Object.values(DARAJA_REVERSAL_CALLBACK_PATHS) as string[]).includes(path);
}

/** A reversal's callback by its path: the result, a status result, or a queue notice (which decides nothing). */
export function parseReversalCallback(body: Record<string, unknown>, path: string): CallbackReport {
  if (path === DARAJA_REVERSAL_CALLBACK_PATHS.result) return parseReversalResult(body);
  if (path === DARAJA_REVERSAL_CALLBACK_PATHS.statusResult) return parseReversalStatusResult(body);
  requiredString(
    objectField(body, 'Result', 'queue time-out notice'),
    'OriginatorConversationID',
    'queue time-out notice',
  );
  return {
    kind: 'ignored',
    reason:
      path === DARAJA_REVERSAL_CALLBACK_PATHS.queueTimeout
        ? 'reversal_queue_timeout'
        : 'reversal_status_queue_timeout',
  };
}

/** The Reversal result: settled with the reversal's receipt and the payout's, or failed by the table. */
function parseReversalResult(body: Record<string, unknown>): CallbackReport {
  const result = objectField(body, 'Result', 'reversal result');
  const reference = requiredString(result, 'OriginatorConversationID', 'reversal result');
  const code = resultCodeOf(result, 'reversal result');
  if (code !== '0') return failedReport({ kind: 'reversal', reference }, reversalFailureCode(code));
  const parameters = keyValues(result.ResultParameters, 'ResultParameter', 'Key', 'reversal result');
  const receipt = result.TransactionID;
  const original = parameters.get('OriginalTransactionID');
  if (typeof receipt !== 'string' || receipt === '' || typeof original !== 'string' || original === '') {
    throw new MalformedCallbackError(
      'Reversal result reports success without its TransactionID and OriginalTransactionID',
    );
  }
  const amountMinor = amountMinorOf(parameters.get('Amount'), 'reversal result Amount');
  return {
    ...settledReport({ kind: 'reversal', reference }, receipt, amountMinor),
    originalTransactionId: original,
  };
}

/**
 * A Transaction Status result about a reversal: named by the OriginatorConversationID among its parameters,
 * or by our Occasion echoed when M-Pesa found nothing (then nothing is decided: the next check asks again).
 */
function parseReversalStatusResult(body: Record<string, unknown>): CallbackReport {
  const result = objectField(body, 'Result', 'reversal status result');
  const code = resultCodeOf(result, 'reversal status result');
  if (code !== '0') return { kind: 'ignored', reason: `reversal_status_query_result_${code}` };
  const parameters = keyValues(result.ResultParameters, 'ResultParameter', 'Key', 'reversal status result');
  const reference = parameters.get('OriginatorConversationID');
  const status = parameters.get('TransactionStatus');
  if (typeof reference !== 'string' || reference === '' || typeof status !== 'string') {
    throw new MalformedCallbackError(
      'Reversal status result names no OriginatorConversationID or TransactionStatus',
    );
  }
  const receipt = parameters.get('ReceiptNo');
  if (status.toLowerCase() === 'completed') {
    if (typeof receipt !== 'string' || receipt === '') {
      throw new MalformedCallbackError('Reversal status result reports completion without a ReceiptNo');
    }
    const amountMinor = amountMinorOf(parameters.get('Amount'), 'reversal result Amount');
    return settledReport({ kind: 'reversal', reference }, receipt, amountMinor);
  }
  if (status.toLowerCase() === 'failed') {
    // The status result carries no reason; the Reversal result (when it arrives) is the precise one.
    return failedReport({ kind: 'reversal', reference }, DARAJA_UNKNOWN_RESULT_FAILURE_CODE);
  }
  return { kind: 'ignored', reason: `reversal_status_${status.toLowerCase()}` };
}
