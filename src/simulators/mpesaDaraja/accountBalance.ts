/**
 * Daraja's Account Balance API: a query for a shortcode's balances is checked as Daraja checks it, accepted
 * at once, and its result (the `AccountBalance` string of the published sample, accounts joined by `&`,
 * each `Name|Currency|amounts…`) is POSTed to the query's ResultURL. A shortcode's Utility Account is the
 * documented starting float plus the STK, C2B and B2B paybill payments it received, minus the B2C and B2B
 * payments it made; the other
 * accounts of the sample are reported at zero.
 */
import { schedule } from './callbacks.ts';
import {
  compactDateTime,
  conversationId,
  placeholderTransactionId,
  receiptNumber,
  requestIdLike,
} from './formats.ts';
import {
  acceptedAnswer,
  INITIATOR_INVALID,
  initiatorRefusal,
  queueTimeoutReference,
  sampleResult,
} from './resultApis.ts';
import { initiatorValid } from './securityCredential.ts';
import { type ApiAnswer, type DarajaState, invalidField, SUCCESS_DESC } from './state.ts';
import { absoluteUrl, boundedText, REMARKS_MAX_CHARS, SHORTCODE } from './validation.ts';

export const ACCOUNT_BALANCE_PATH = '/mpesa/accountbalance/v1/query';

/** Every shortcode's Utility Account starts with this float, in whole shillings (a sandbox choice). */
export const DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS = 1_000_000;
/** Shillings to cents: the simulator keeps balances in cents and writes them with two decimals. */
const CENTS_PER_SHILLING = 100n;
/** The accounts of the published sample, in its order; only the Utility Account moves here. */
const SAMPLE_ACCOUNTS = [
  'Working Account',
  'Float Account',
  'Utility Account',
  'Charges Paid Account',
  'Organization Settlement Account',
] as const;
/** `IdentifierType` values the page lists: 1 MSISDN, 2 till number, 4 organization shortcode. */
const IDENTIFIER_TYPES = new Set(['1', '2', '4']);

/** POST /mpesa/accountbalance/v1/query */
export function accountBalanceQuery(state: DarajaState, body: Record<string, unknown>): ApiAnswer {
  const refusal = checkBalanceQuery(body);
  if (refusal) return refusal;
  const partyA = String(body.PartyA);
  const ids = { originatorConversationId: requestIdLike(), conversationId: conversationId() };
  const credentialsValid = initiatorValid(state.config, body.Initiator, body.SecurityCredential);
  // Built when sent: it reports the balances as they stand then.
  schedule(
    state,
    String(body.ResultURL),
    () => JSON.stringify(balanceResultBody(state, partyA, ids, credentialsValid)),
    state.config.callbackDelayMs,
  );
  return acceptedAnswer(ids);
}

/** Daraja's refusal of the first missing or malformed field, or undefined for a valid query. */
function checkBalanceQuery(body: Record<string, unknown>): ApiAnswer | undefined {
  const initiatorProblem = initiatorRefusal(body, 'AccountBalance');
  if (initiatorProblem) return initiatorProblem;
  if (!SHORTCODE.test(String(body.PartyA ?? ''))) return invalidField('PartyA');
  if (!IDENTIFIER_TYPES.has(String(body.IdentifierType))) return invalidField('IdentifierType');
  if (!boundedText(body.Remarks, REMARKS_MAX_CHARS)) return invalidField('Remarks');
  if (!absoluteUrl(body.QueueTimeOutURL)) return invalidField('QueueTimeOutURL');
  if (!absoluteUrl(body.ResultURL)) return invalidField('ResultURL');
  return undefined;
}

function balanceResultBody(
  state: DarajaState,
  partyA: string,
  ids: { originatorConversationId: string; conversationId: string },
  credentialsValid: boolean,
): unknown {
  const envelope = {
    ResultType: 0,
    OriginatorConversationID: ids.originatorConversationId,
    ConversationID: ids.conversationId,
    TransactionID: placeholderTransactionId(receiptNumber()),
  };
  const referenceData = queueTimeoutReference('abresults');
  if (!credentialsValid) {
    const { resultCode, resultDesc } = INITIATOR_INVALID;
    return sampleResult(envelope, resultCode, resultDesc, {}, referenceData);
  }
  const balances = [
    { Key: 'AccountBalance', Value: accountBalanceText(utilityCents(state, partyA)) },
    { Key: 'BOCompletedTime', Value: compactDateTime(state.now()) },
  ];
  const reported = { ResultParameters: { ResultParameter: balances } };
  return sampleResult(envelope, 0, SUCCESS_DESC, reported, referenceData);
}

/**
 * The starting float, plus STK payments collected under the shortcode, C2B payments completed to it and B2B
 * paybill payments to it, minus B2C and B2B payments made from it.
 */
export function utilityCents(state: DarajaState, shortCode: string): bigint {
  let shillings = BigInt(DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS);
  for (const push of state.pushes) {
    if (push.businessShortCode === shortCode && moved(push)) shillings += BigInt(push.amount);
  }
  for (const payment of state.c2bPayments) {
    if (payment.shortCode === shortCode && payment.status === 'completed')
      shillings += BigInt(payment.amount);
  }
  for (const payment of state.payments) {
    if (payment.partyA === shortCode && moved(payment)) shillings -= BigInt(payment.amount);
    if (payment.creditsUtilityOf === shortCode && moved(payment)) shillings += BigInt(payment.amount);
  }
  return shillings * CENTS_PER_SHILLING;
}

/** Money moved: completed with a paying outcome (a declined or timed-out request moved nothing). */
function moved(record: { outcome: { kind: string }; completedAt?: Date }): boolean {
  return (
    record.completedAt !== undefined && (record.outcome.kind === 'complete' || record.outcome.kind === 'hang')
  );
}

/** `Name|KES|current|available|reserved|uncleared` per account, joined by `&`, as the sample writes it. */
function accountBalanceText(utility: bigint): string {
  return SAMPLE_ACCOUNTS.map((name) => accountText(name, name === 'Utility Account' ? utility : 0n)).join(
    '&',
  );
}

/** One account as the sample writes it: `Name|KES|current|available|0.00|0.00` (nothing reserved or uncleared). */
export function accountText(name: string, cents: bigint): string {
  const amount = decimalShillings(cents);
  return `${name}|KES|${amount}|${amount}|0.00|0.00`;
}

/** Cents written as shillings with two decimals (negative with `-`), as Daraja's samples write amounts. */
export function decimalShillings(cents: bigint): string {
  const sign = cents < 0n ? '-' : '';
  const magnitude = cents < 0n ? -cents : cents;
  return `${sign}${magnitude / CENTS_PER_SHILLING}.${String(magnitude % CENTS_PER_SHILLING).padStart(2, '0')}`;
}
