/**
 * M-Pesa payouts to paybills and tills through Daraja's B2B payment request (rail.ts): `BusinessPayBill`
 * (with the paybill's account number) and `BusinessBuyGoods`, from our shortcode; their status by the
 * Transaction Status query; and what arrives at their callback URLs.
 *
 * Idempotency. A B2B request carries no id of ours (Daraja generates its OriginatorConversationID), so a
 * repeated request is a second payment. The request is therefore recorded in the payout request journal
 * before it goes out, and a submit that finds it recorded sends nothing: the payout stays `processing`
 * and its result callback or a status query decides it. The journal keeps Daraja's id from the
 * acknowledgement, which the status query needs; a refusal that never reached M-Pesa (HTTP 400, a refused
 * token) is forgotten, so a later submit may send again.
 *
 * The payout's reference is its transfer id, and every callback URL names it (`b2b/result/<transfer id>`),
 * so a result is matched to its payout even when the acknowledgement never came back.
 */

import type { Transfer } from '../../../../domain/transferRecord.ts';
import {
  type ArrivedCallback,
  type CallbackReport,
  MalformedCallbackError,
  type PayoutRequestJournal,
} from '../../../../rails/partner.ts';
import type { RailOutcome, SubmitRequest, SubmitResult } from '../../../../rails/rail.ts';
import { amountMinorOf, keyValues, objectField, requiredString, resultCodeOf } from './callbackFields.ts';
import { parseStatusResult } from './callbacks.ts';
import {
  DarajaAuthError,
  type DarajaConnection,
  DarajaProtocolError,
  post,
  prepareToken,
  securityCredential,
  unexpected,
} from './connection.ts';
import { DARAJA_PAYOUT_FIRST_CHECK_AFTER_MS, DARAJA_STATUS_POLL_INTERVAL_MS } from './payouts.ts';
import {
  DARAJA_CALLBACK_PATHS,
  DARAJA_PAYOUT_FAILURE_CODES,
  DARAJA_UNKNOWN_RESULT_FAILURE_CODE,
  type DarajaAnswer,
  PATHS,
  parseObject,
  printable,
  REMARKS_MAX_CHARS,
  refusedFailureCode,
  stringField,
  wholeShillings,
} from './protocol.ts';
import { failedReport, payoutSubject, settledReport } from './reports.ts';

export const B2B_PATH = '/mpesa/b2b/v1/paymentrequest';
/** Daraja's identifier types: 4 an organization shortcode (paybill or PartyA), 2 a till. */
const SHORTCODE_IDENTIFIER = '4';
const TILL_IDENTIFIER = '2';
/** The paybill account number Daraja takes (AccountReference), in characters at most. */
export const B2B_ACCOUNT_REFERENCE_MAX_CHARS = 13;
/** Paybill and till numbers: 5 to 7 digits, as our destinations are checked. */
const BUSINESS_NUMBER = /^\d{5,7}$/;

/** Callback paths under the organization's base; each ends in the payout's transfer id. */
export const B2B_CALLBACK_PREFIXES = {
  result: 'b2b/result/',
  queueTimeout: 'b2b/timeout/',
  statusResult: 'b2b/status/',
} as const;

/** B2B ResultCode → failure code: B2C's table, except that a short balance is our shortcode's float. */
export const DARAJA_B2B_FAILURE_CODES: Record<string, string> = {
  ...DARAJA_PAYOUT_FAILURE_CODES,
  '1': 'insufficient_float', // our shortcode's account cannot cover it
};

/** The B2B request a paybill or till payout is, or why Daraja could not carry it. */
type B2bTarget =
  | { commandId: 'BusinessPayBill'; partyB: string; accountReference: string }
  | { commandId: 'BusinessBuyGoods'; partyB: string }
  | { failureCode: string };

export function isB2bPayout(transfer: Transfer): boolean {
  return transfer.destination.type === 'paybill' || transfer.destination.type === 'till';
}

function b2bTarget(transfer: Transfer): B2bTarget {
  const destination = transfer.destination;
  if (destination.type === 'paybill') {
    if (!BUSINESS_NUMBER.test(destination.business_number)) return { failureCode: 'invalid_account' };
    const reference = printable(destination.account_reference, Number.POSITIVE_INFINITY);
    if (reference === '' || reference.length > B2B_ACCOUNT_REFERENCE_MAX_CHARS)
      return { failureCode: 'invalid_account_reference' };
    return { commandId: 'BusinessPayBill', partyB: destination.business_number, accountReference: reference };
  }
  if (destination.type === 'till' && BUSINESS_NUMBER.test(destination.till_number))
    return { commandId: 'BusinessBuyGoods', partyB: destination.till_number };
  return { failureCode: 'invalid_account' };
}

/** Until a request is acknowledged it is in doubt: a payout whose request is recorded is never sent again. */
export async function submitB2bPayout(
  connection: DarajaConnection,
  journal: PayoutRequestJournal,
  { transfer }: SubmitRequest,
  now: Date,
): Promise<SubmitResult> {
  const shillings = wholeShillings(transfer.amountMinor, transfer.currency);
  if (shillings === null) return { accepted: false, failureCode: 'amount_not_supported' };
  const target = b2bTarget(transfer);
  if ('failureCode' in target) return { accepted: false, failureCode: target.failureCode };
  const accepted: SubmitResult = {
    accepted: true,
    reference: transfer.id,
    checkAt: new Date(now.getTime() + DARAJA_PAYOUT_FIRST_CHECK_AFTER_MS),
  };
  // A token problem is found before the request is recorded: nothing has gone out yet.
  await prepareToken(connection);
  if (!(await journal.begin(transfer.id))) return accepted;
  let answer: DarajaAnswer;
  try {
    answer = await post(connection, B2B_PATH, b2bRequestBody(connection, transfer, target, shillings));
  } catch (error) {
    // A refused token never reached M-Pesa; anything else (no answer, a broken connection) may have.
    if (error instanceof DarajaAuthError) await journal.release(transfer.id);
    throw error;
  }
  if (answer.status === 200 && String(answer.body?.ResponseCode) === '0') {
    const partnerId = stringField(answer.body, 'OriginatorConversationID');
    if (partnerId === undefined || partnerId === '')
      throw new DarajaProtocolError(
        `Daraja accepted B2B payout ${transfer.id} without an OriginatorConversationID`,
      );
    await journal.acknowledge(transfer.id, partnerId);
    return accepted;
  }
  if (answer.status === 400) {
    await journal.release(transfer.id);
    return { accepted: false, failureCode: refusedB2bFailureCode(answer) };
  }
  // A 5xx, or an answer we cannot read: the request may be with M-Pesa. Recorded, so never sent again.
  return unexpected(B2B_PATH, answer);
}

function b2bRequestBody(
  connection: DarajaConnection,
  transfer: Transfer,
  target: Exclude<B2bTarget, { failureCode: string }>,
  shillings: number,
): Record<string, unknown> {
  const { config, callbackBase } = connection;
  return {
    Initiator: config.initiatorName,
    SecurityCredential: securityCredential(connection),
    CommandID: target.commandId,
    SenderIdentifierType: SHORTCODE_IDENTIFIER,
    // Daraja's spelling.
    RecieverIdentifierType: target.commandId === 'BusinessPayBill' ? SHORTCODE_IDENTIFIER : TILL_IDENTIFIER,
    Amount: shillings,
    PartyA: config.shortCode,
    PartyB: target.partyB,
    ...('accountReference' in target ? { AccountReference: target.accountReference } : {}),
    Remarks: printable(`Payout ${transfer.id}`, REMARKS_MAX_CHARS),
    QueueTimeOutURL: `${callbackBase}/${B2B_CALLBACK_PREFIXES.queueTimeout}${transfer.id}`,
    ResultURL: `${callbackBase}/${B2B_CALLBACK_PREFIXES.result}${transfer.id}`,
    // The copies spell it so (as B2C's sample does).
    Occassion: printable(transfer.id, REMARKS_MAX_CHARS),
  };
}

/** A refused field: PartyB is the paybill or till here, not a phone. */
function refusedB2bFailureCode(answer: DarajaAnswer): string {
  const message = stringField(answer.body, 'errorMessage') ?? '';
  if (/Invalid\s+PartyB\b/i.test(message)) return 'invalid_account';
  if (/Invalid\s+AccountReference\b/i.test(message)) return 'invalid_account_reference';
  return refusedFailureCode(answer);
}

/**
 * Asks Transaction Status about the payout by Daraja's id for its request (its result arrives at
 * `b2b/status/<transfer id>`). Without that id (the acknowledgement never came) nothing can be asked:
 * the result callback, or the rail's statement, decides the payout.
 */
export async function checkB2bPayout(
  connection: DarajaConnection,
  journal: PayoutRequestJournal,
  transfer: Transfer,
  now: Date,
): Promise<RailOutcome> {
  const { config, callbackBase } = connection;
  const processing: RailOutcome = {
    kind: 'processing',
    checkAt: new Date(now.getTime() + DARAJA_STATUS_POLL_INTERVAL_MS),
    reference: transfer.id,
  };
  const partnerId = await journal.partnerRequestId(transfer.id);
  if (partnerId === undefined) return processing;
  const answer = await post(connection, PATHS.transactionStatus, {
    Initiator: config.initiatorName,
    SecurityCredential: securityCredential(connection),
    CommandID: 'TransactionStatusQuery',
    OriginalConversationID: partnerId,
    PartyA: config.shortCode,
    IdentifierType: SHORTCODE_IDENTIFIER,
    ResultURL: `${callbackBase}/${B2B_CALLBACK_PREFIXES.statusResult}${transfer.id}`,
    QueueTimeOutURL: `${callbackBase}/${DARAJA_CALLBACK_PATHS.statusQueueTimeout}`,
    Remarks: 'Payout status',
    Occasion: printable(transfer.id, REMARKS_MAX_CHARS),
  });
  if (answer.status !== 200 || String(answer.body?.ResponseCode) !== '0') {
    return unexpected(PATHS.transactionStatus, answer);
  }
  return processing;
}

/** A callback at one of B2B's paths (they end in the payout's transfer id), or undefined for any other path. */
export function parseB2bCallback(callback: ArrivedCallback): CallbackReport | undefined {
  const match = Object.entries(B2B_CALLBACK_PREFIXES).find(([, prefix]) => callback.path.startsWith(prefix));
  if (!match) return undefined;
  const [kind, prefix] = match;
  const transferId = callback.path.slice(prefix.length);
  if (transferId === '' || transferId.includes('/'))
    throw new MalformedCallbackError(`Daraja B2B callback at ${callback.path} names no payout`);
  const body = parseObject(callback.rawBody);
  if (!body) throw new MalformedCallbackError(`Daraja callback at ${callback.path} is not a JSON object`);
  if (kind === 'result') return parseB2bResult(body, transferId);
  if (kind === 'statusResult') return namedBy(parseStatusResult(body), transferId);
  const notice = objectField(body, 'Result', 'queue time-out notice');
  requiredString(notice, 'OriginatorConversationID', 'queue time-out notice');
  // Still processing: the scheduled status query decides it.
  return { kind: 'ignored', reason: 'b2b_queue_timeout' };
}

/** A status result about a B2B payout names it by the transfer id in its URL. */
function namedBy(report: CallbackReport, transferId: string): CallbackReport {
  if (report.kind !== 'payout' || report.outcome.kind === 'processing') return report;
  return {
    ...report,
    reference: transferId,
    idempotencyReference: transferId,
    outcome: { ...report.outcome, reference: transferId },
  };
}

/** The B2B result: settled with its TransactionID and Amount, or failed by DARAJA_B2B_FAILURE_CODES. */
function parseB2bResult(body: Record<string, unknown>, transferId: string): CallbackReport {
  const result = objectField(body, 'Result', 'B2B result');
  requiredString(result, 'OriginatorConversationID', 'B2B result');
  const code = resultCodeOf(result, 'B2B result');
  if (code !== '0') {
    const failureCode = DARAJA_B2B_FAILURE_CODES[code] ?? DARAJA_UNKNOWN_RESULT_FAILURE_CODE;
    return failedReport(payoutSubject(transferId), failureCode);
  }
  const receipt = result.TransactionID;
  if (typeof receipt !== 'string' || receipt === '')
    throw new MalformedCallbackError('B2B result reports success without a TransactionID');
  const parameters = keyValues(result.ResultParameters, 'ResultParameter', 'Key', 'B2B result');
  const amountMinor = amountMinorOf(parameters.get('Amount'), 'B2B result Amount');
  return settledReport(payoutSubject(transferId), receipt, amountMinor);
}

/** A journal in this process's memory: for an adapter used on its own (tests); the directory gives a durable one. */
export function memoryPayoutRequestJournal(): PayoutRequestJournal {
  const requests = new Map<string, string | undefined>();
  return {
    async begin(transferId) {
      if (requests.has(transferId)) return false;
      requests.set(transferId, undefined);
      return true;
    },
    async acknowledge(transferId, partnerRequestId) {
      if (requests.has(transferId)) requests.set(transferId, requests.get(transferId) ?? partnerRequestId);
    },
    async release(transferId) {
      if (requests.get(transferId) === undefined) requests.delete(transferId);
    },
    async partnerRequestId(transferId) {
      return requests.get(transferId);
    },
  };
}
