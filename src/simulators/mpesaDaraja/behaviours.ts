/**
 * What the Daraja simulator does for each number: the outcome types, the magic numbers
 * (DARAJA_SIMULATOR_PHONE_BEHAVIOURS) and the lookup every API makes by payee (B2C PartyB) or payer (STK
 * PhoneNumber).
 */
/** What one API does for one number. */
export type DarajaSimulatedOutcome =
  /** The money moves. `callback` says how the result reaches the callback URL. */
  | { kind: 'complete'; callback: 'once' | 'twice' | 'late' | 'malformed'; afterDelayedSettlement?: boolean }
  /** M-Pesa processes the request and declines it with this ResultCode (in the result callback). */
  | { kind: 'decline'; resultCode: number | string; resultDesc: string }
  /**
   * Accepted, then nothing: no callback ever; queries say it is still being processed. An STK prompt
   * still ends at DARAJA_STK_PROMPT_TIMEOUT_MS, with ResultCode 1037 (or 1019 when `expires`).
   */
  | { kind: 'never_complete'; expires?: boolean }
  /** The API refuses the request synchronously with this HTTP status and Daraja error body. */
  | { kind: 'refuse'; status: number; errorCode: string; errorMessage: string }
  /** The request is carried out but the API never answers (the client times out). */
  | { kind: 'hang' }
  /** B2C: the request times out in Daraja's queue: a notice to QueueTimeOutURL, no result, never paid. */
  | { kind: 'queue_timeout' };

export interface DarajaPhoneBehaviour {
  /** B2C payments to this number. */
  payout: DarajaSimulatedOutcome;
  /** STK pushes to this number. */
  collection: DarajaSimulatedOutcome;
}

/** M-Pesa's decline of a request it processed: the result callback's ResultCode and ResultDesc. */
export function declined(resultCode: number | string, resultDesc: string): DarajaSimulatedOutcome {
  return { kind: 'decline', resultCode, resultDesc };
}

const COMPLETE: DarajaSimulatedOutcome = { kind: 'complete', callback: 'once' };
/** A payment larger than the paying account's balance (B2C's float, a payer's M-Pesa, a B2B shortcode's). */
export const INSUFFICIENT_BALANCE = declined(1, 'The balance is insufficient for the transaction.');
const DAILY_LIMIT = declined(4, 'Declined due to limit rule: would exceed daily transfer limit.');
const both = (outcome: DarajaSimulatedOutcome): DarajaPhoneBehaviour => ({
  payout: outcome,
  collection: outcome,
});

/**
 * Magic numbers (E.164, as our transfers carry them; Daraja sees them without the `+`). Any other valid
 * Safaricom number completes. The first six are SANDBOX_PHONE_BEHAVIOURS' numbers with Daraja's codes.
 */
export const DARAJA_SIMULATOR_PHONE_BEHAVIOURS: Record<string, DarajaPhoneBehaviour> = {
  // sandbox: settles
  '+254700000000': both(COMPLETE),
  // sandbox: recipient_not_registered. An STK push to a number M-Pesa does not know is refused outright.
  '+254700000001': {
    payout: declined(
      2040,
      "Credit Party customer type (Unregistered or Registered Customer) can't be supported by the service.",
    ),
    collection: {
      kind: 'refuse',
      status: 400,
      errorCode: '400.002.02',
      errorMessage: 'Bad Request - Invalid PhoneNumber',
    },
  },
  // sandbox: insufficient_funds
  '+254700000002': both(INSUFFICIENT_BALANCE),
  // sandbox: time-out (no result ever; queries say it is still being processed)
  '+254700000003': both({ kind: 'never_complete' }),
  // sandbox: settles after SANDBOX_DELAYED_SETTLEMENT_MS (the simulator's delayedSettlementMs)
  '+254700000004': both({ kind: 'complete', callback: 'once', afterDelayedSettlement: true }),
  // sandbox: limit_exceeded
  '+254700000005': both(DAILY_LIMIT),
  // the result callback is POSTed twice, byte for byte
  '+254700000010': both({ kind: 'complete', callback: 'twice' }),
  // the money moves at once; its callback arrives lateCallbackDelayMs later
  '+254700000011': both({ kind: 'complete', callback: 'late' }),
  // the money moves; its callback body is cut short (not JSON)
  '+254700000012': both({ kind: 'complete', callback: 'malformed' }),
  // the API answers 500 and does nothing
  '+254700000013': both({
    kind: 'refuse',
    status: 500,
    errorCode: '500.003.1001',
    errorMessage: 'Internal Server Error',
  }),
  // the API answers 503 and does nothing (status assumed; the body is Daraja's "system is busy")
  '+254700000014': both({
    kind: 'refuse',
    status: 503,
    errorCode: '500.003.02',
    errorMessage: 'System is busy. Please try again in few minutes.',
  }),
  // the request goes through but the API never answers
  '+254700000015': both({ kind: 'hang' }),
  // B2C: the request times out in Daraja's queue (notice to QueueTimeOutURL, never paid)
  '+254700000016': { payout: { kind: 'queue_timeout' }, collection: COMPLETE },
  // STK: the payer cancels the prompt
  '+254700000020': {
    payout: COMPLETE,
    collection: declined(1032, 'Request cancelled by user'),
  },
  // STK: the payer's phone cannot be reached
  '+254700000021': {
    payout: COMPLETE,
    collection: declined(1037, 'DS timeout user cannot be reached'),
  },
  // STK: the prompt is never answered and ends, at the prompt time-out, as expired (ResultCode 1019)
  '+254700000022': { payout: COMPLETE, collection: { kind: 'never_complete', expires: true } },
};

/** The behaviour for a Daraja MSISDN (no `+`); any number not in the table completes. */
export function behaviourOf(msisdn: string): DarajaPhoneBehaviour {
  return DARAJA_SIMULATOR_PHONE_BEHAVIOURS[`+${msisdn}`] ?? both(COMPLETE);
}
