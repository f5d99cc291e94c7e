/**
 * What arrives at the M-Pesa adapter's callback URLs (rail.ts), read: B2C results, queue time-out notices,
 * Transaction Status results, STK callbacks, C2B validations and confirmations (c2b.ts),
 * reversal results (reversal.ts) and Account Balance results (checked, then `ignored`: they
 * move no money; accountBalance.ts reads their amounts). Pure. Daraja does not sign callbacks, so this only reads
 * their shape.
 */

import {
  type ArrivedCallback,
  type CallbackReport,
  MalformedCallbackError,
} from '../../../../rails/partner.ts';
import { darajaBalancesReport } from './accountBalance.ts';
import { parseC2BCallback } from './c2b.ts';
import { amountMinorOf, keyValues, objectField, requiredString, resultCodeOf } from './callbackFields.ts';
import {
  collectionFailureCode,
  DARAJA_CALLBACK_PATHS,
  DARAJA_UNKNOWN_RESULT_FAILURE_CODE,
  parseObject,
  payoutFailureCode,
} from './protocol.ts';
import { failedReport, payoutSubject, settledReport } from './reports.ts';
import { isReversalCallbackPath, parseReversalCallback } from './reversal.ts';

/** B2C result codes that say nothing about the payout: the first request's own result decides. */
const PAYOUT_RESULT_CODES_TO_IGNORE: Record<string, string> = {
  '15': 'duplicate_originator_conversation_id',
};

/** A callback by the path it arrived at; throws MalformedCallbackError for one it cannot read. */
export function parseDarajaCallback(callback: ArrivedCallback): CallbackReport {
  const body = parseObject(callback.rawBody);
  if (!body) throw new MalformedCallbackError(`Daraja callback at ${callback.path} is not a JSON object`);
  switch (callback.path) {
    case DARAJA_CALLBACK_PATHS.b2cResult:
      return parseB2cResult(body);
    case DARAJA_CALLBACK_PATHS.b2cQueueTimeout:
    case DARAJA_CALLBACK_PATHS.statusQueueTimeout:
    case DARAJA_CALLBACK_PATHS.balanceQueueTimeout:
      return parseQueueTimeout(body, callback.path);
    case DARAJA_CALLBACK_PATHS.statusResult:
      return parseStatusResult(body);
    case DARAJA_CALLBACK_PATHS.stk:
      return parseStkCallback(body);
    case DARAJA_CALLBACK_PATHS.c2bValidation:
      return parseC2BCallback(body, 'validation');
    case DARAJA_CALLBACK_PATHS.c2bConfirmation:
      return parseC2BCallback(body, 'confirmation');
    case DARAJA_CALLBACK_PATHS.balanceResult:
      return darajaBalancesReport(body);
    default:
      if (isReversalCallbackPath(callback.path)) return parseReversalCallback(body, callback.path);
      throw new MalformedCallbackError(`No Daraja callback is expected at ${callback.path}`);
  }
}

function parseB2cResult(body: Record<string, unknown>): CallbackReport {
  const result = objectField(body, 'Result', 'B2C result');
  const reference = requiredString(result, 'OriginatorConversationID', 'B2C result');
  const code = resultCodeOf(result, 'B2C result');
  const ignored = PAYOUT_RESULT_CODES_TO_IGNORE[code];
  if (ignored) return { kind: 'ignored', reason: ignored };
  if (code !== '0') return failedReport(payoutSubject(reference), payoutFailureCode(code));
  const parameters = keyValues(result.ResultParameters, 'ResultParameter', 'Key', 'B2C result');
  const receipt = parameters.get('TransactionReceipt') ?? result.TransactionID;
  if (typeof receipt !== 'string' || receipt === '') {
    throw new MalformedCallbackError('B2C result reports success without a TransactionReceipt');
  }
  const amountMinor = amountMinorOf(parameters.get('TransactionAmount'), 'B2C result TransactionAmount');
  return settledReport(payoutSubject(reference), receipt, amountMinor);
}

const QUEUE_TIMEOUT_REASONS: Record<string, string> = {
  [DARAJA_CALLBACK_PATHS.b2cQueueTimeout]: 'b2c_queue_timeout',
  [DARAJA_CALLBACK_PATHS.statusQueueTimeout]: 'status_queue_timeout',
  [DARAJA_CALLBACK_PATHS.balanceQueueTimeout]: 'balance_queue_timeout',
};

/** Daraja's queue time-out notice: the request waited too long in Daraja's queue. It decides nothing. */
function parseQueueTimeout(body: Record<string, unknown>, path: string): CallbackReport {
  const result = objectField(body, 'Result', 'queue time-out notice');
  requiredString(result, 'OriginatorConversationID', 'queue time-out notice');
  return {
    kind: 'ignored',
    reason: QUEUE_TIMEOUT_REASONS[path] ?? 'queue_timeout',
  };
}

/** Failed TransactionStatus values (Daraja publishes only "Completed"; the others are read defensively). */
const FAILED_TRANSACTION_STATUSES = new Set(['failed', 'declined', 'cancelled', 'canceled', 'expired']);

/**
 * A Transaction Status result. Its top-level ids are the query's own; the payout is named by the
 * OriginatorConversationID among the ResultParameters, or, when M-Pesa found nothing, by the Occasion we
 * sent (echoed in ReferenceData). Anything short of a final status changes nothing: the next check asks again.
 */
export function parseStatusResult(body: Record<string, unknown>): CallbackReport {
  const result = objectField(body, 'Result', 'status result');
  const code = resultCodeOf(result, 'status result');
  const parameters =
    result.ResultParameters === undefined
      ? new Map<string, unknown>()
      : keyValues(result.ResultParameters, 'ResultParameter', 'Key', 'status result');
  const referenceItem = (
    result.ReferenceData as { ReferenceItem?: { Key?: unknown; Value?: unknown } } | undefined
  )?.ReferenceItem;
  const occasion = referenceItem?.Key === 'Occasion' ? referenceItem.Value : undefined;
  const named = parameters.get('OriginatorConversationID') ?? occasion;
  if (code !== '0') return { kind: 'ignored', reason: `status_query_result_${code}` };
  if (typeof named !== 'string' || named === '') {
    throw new MalformedCallbackError('Status result names no OriginatorConversationID');
  }
  const status = parameters.get('TransactionStatus');
  if (typeof status !== 'string') throw new MalformedCallbackError('Status result has no TransactionStatus');
  if (status.toLowerCase() === 'completed') {
    const receipt = parameters.get('ReceiptNo');
    if (typeof receipt !== 'string' || receipt === '') {
      throw new MalformedCallbackError('Status result reports a completed payout without a ReceiptNo');
    }
    return settledReport(
      payoutSubject(named),
      receipt,
      amountMinorOf(parameters.get('Amount'), 'status result Amount'),
    );
  }
  if (FAILED_TRANSACTION_STATUSES.has(status.toLowerCase())) {
    // The status result carries no failure code; the B2C result (when it arrives) is the precise one.
    return failedReport(payoutSubject(named), DARAJA_UNKNOWN_RESULT_FAILURE_CODE);
  }
  return { kind: 'ignored', reason: `transaction_status_${status.toLowerCase()}` };
}

function parseStkCallback(body: Record<string, unknown>): CallbackReport {
  const stk = objectField(objectField(body, 'Body', 'STK callback'), 'stkCallback', 'STK callback');
  const reference = requiredString(stk, 'CheckoutRequestID', 'STK callback');
  requiredString(stk, 'MerchantRequestID', 'STK callback');
  const code = resultCodeOf(stk, 'STK callback');
  if (code !== '0') return failedReport({ kind: 'collection', reference }, collectionFailureCode(code));
  const items = keyValues(stk.CallbackMetadata, 'Item', 'Name', 'STK callback');
  const receipt = items.get('MpesaReceiptNumber');
  if (typeof receipt !== 'string' || receipt === '') {
    throw new MalformedCallbackError('STK callback reports success without an MpesaReceiptNumber');
  }
  return settledReport(
    { kind: 'collection', reference },
    receipt,
    amountMinorOf(items.get('Amount'), 'STK callback Amount'),
  );
}
