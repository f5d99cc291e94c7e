/**
 * Daraja's Customer to Business (C2B) API in the simulator: Register URL (a shortcode's ValidationURL,
 * ConfirmationURL and ResponseType), the sandbox-only simulate request, and the payment it starts: the
 * payer's money to a paybill or till, asked of the ValidationURL first when the shortcode has external
 * validation on (an answer of ResultCode `0` accepts, any other code such as `C2B00012` cancels it; no answer
 * within DARAJA_C2B_VALIDATION_TIMEOUT_MS applies the ResponseType), then, once completed, credited to the
 * shortcode's Utility Account (accountBalance.ts) and POSTed to the ConfirmationURL in the published shape.
 */
import { decimalShillings, utilityCents } from './accountBalance.ts';
import { scheduleResult } from './callbacks.ts';
import { compactDateTime, receiptNumber, requestIdLike } from './formats.ts';
import {
  ApiAnswer,
  type DarajaCallbackDelivery,
  type DarajaSimulatedC2BPayment,
  type DarajaState,
  errorBody,
} from './state.ts';
import { absoluteUrl, nonEmptyString, SAFARICOM_MSISDN, SHORTCODE, wholeAmount } from './validation.ts';

export const C2B_REGISTER_PATHS = new Set(['/mpesa/c2b/v1/registerurl', '/mpesa/c2b/v2/registerurl']);
export const C2B_SIMULATE_PATHS = new Set(['/mpesa/c2b/v1/simulate', '/mpesa/c2b/v2/simulate']);

/** How long M-Pesa waits for a validation answer before applying the ResponseType (the page says about 8 s). */
export const DARAJA_C2B_VALIDATION_TIMEOUT_MS = 8_000;
/** BillRefNumber (the paybill account number) at most; assumed, the pages give no figure. */
export const C2B_BILL_REF_MAX_CHARS = 20;
const C2B_COMMANDS: Record<string, string> = {
  CustomerPayBillOnline: 'Pay Bill',
  CustomerBuyGoodsOnline: 'Buy Goods',
};
const RESPONSE_TYPES = new Set(['Completed', 'Cancelled']);

export interface DarajaC2BRegistration {
  shortCode: string;
  responseType: 'Completed' | 'Cancelled';
  confirmationUrl: string;
  validationUrl: string;
}

/** How the confirmation of a completed payment is sent (tests reach the duplicated, late and missing cases). */
export type C2BConfirmationDelivery = 'once' | 'twice' | 'late' | 'none';

export interface DarajaC2BPaymentInput {
  shortCode: string;
  commandId?: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
  /** Whole shillings. */
  amount: number;
  /** 2547XXXXXXXX */
  msisdn: string;
  billRefNumber?: string;
  firstName?: string;
  confirmation?: C2BConfirmationDelivery;
}

/** C2B's records, per simulator. */
interface DarajaC2BState {
  registrations: Map<string, DarajaC2BRegistration>;
  /** Shortcodes whose payments are asked of the ValidationURL (off by default, as on M-Pesa). */
  externalValidation: Set<string>;
  validationTimeoutMs: number;
}

const c2bStates = new WeakMap<DarajaState, DarajaC2BState>();

function c2bState(state: DarajaState): DarajaC2BState {
  let c2b = c2bStates.get(state);
  if (!c2b) {
    c2b = {
      registrations: new Map(),
      externalValidation: new Set(),
      validationTimeoutMs: DARAJA_C2B_VALIDATION_TIMEOUT_MS,
    };
    c2bStates.set(state, c2b);
  }
  return c2b;
}

/** The register URL request's refusal (`400.003.02`, assumed message), naming the field. */
function invalidC2BField(field: string): ApiAnswer {
  return new ApiAnswer(400, errorBody('400.003.02', `Bad Request - Invalid ${field}`));
}

function acknowledgement(description: string): ApiAnswer {
  // Daraja spells it OriginatorCoversationID here.
  return new ApiAnswer(200, {
    OriginatorCoversationID: requestIdLike(),
    ResponseCode: '0',
    ResponseDescription: description,
  });
}

/** POST /mpesa/c2b/v1/registerurl (and v2): the shortcode's URLs; the sandbox lets them be registered again. */
export function registerC2BUrls(state: DarajaState, body: Record<string, unknown>): ApiAnswer {
  const shortCode = String(body.ShortCode ?? '');
  if (!SHORTCODE.test(shortCode)) return invalidC2BField('ShortCode');
  if (!RESPONSE_TYPES.has(String(body.ResponseType))) return invalidC2BField('ResponseType');
  if (!absoluteUrl(body.ConfirmationURL)) return invalidC2BField('ConfirmationURL');
  if (!absoluteUrl(body.ValidationURL)) return invalidC2BField('ValidationURL');
  c2bState(state).registrations.set(shortCode, {
    shortCode,
    responseType: body.ResponseType as DarajaC2BRegistration['responseType'],
    confirmationUrl: String(body.ConfirmationURL),
    validationUrl: String(body.ValidationURL),
  });
  return acknowledgement('Success');
}

/** POST /mpesa/c2b/v1/simulate (and v2), sandbox only: a payer pays the shortcode; answered at once. */
export function simulateC2BPayment(state: DarajaState, body: Record<string, unknown>): ApiAnswer {
  const commandId = String(body.CommandID);
  if (!Object.hasOwn(C2B_COMMANDS, commandId)) return invalidC2BField('CommandID');
  const amount = wholeAmount(body.Amount);
  if (amount === null) return invalidC2BField('Amount');
  const msisdn = String(body.Msisdn ?? '');
  if (!SAFARICOM_MSISDN.test(msisdn)) return invalidC2BField('Msisdn');
  const shortCode = String(body.ShortCode ?? '');
  if (!SHORTCODE.test(shortCode)) return invalidC2BField('ShortCode');
  const billRef = body.BillRefNumber;
  const paybill = commandId === 'CustomerPayBillOnline';
  const billRefValid =
    billRef === undefined || billRef === null
      ? !paybill
      : typeof billRef === 'string' &&
        billRef.length <= C2B_BILL_REF_MAX_CHARS &&
        (!paybill || nonEmptyString(billRef));
  if (!billRefValid) return invalidC2BField('BillRefNumber');
  void trackC2BPayment(state, {
    shortCode,
    commandId: commandId as DarajaC2BPaymentInput['commandId'],
    amount,
    msisdn,
    billRefNumber: typeof billRef === 'string' ? billRef : '',
  });
  return acknowledgement('Success');
}

/** Runs a payment, counted among the simulator's in-flight work so `idle()` waits for its validation. */
export function trackC2BPayment(
  state: DarajaState,
  input: DarajaC2BPaymentInput,
): Promise<DarajaSimulatedC2BPayment> {
  const run = runC2BPayment(state, input);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  state.inFlight.add(settled);
  void settled.finally(() => state.inFlight.delete(settled));
  return run;
}

/**
 * A payer's payment to a shortcode: validated where the shortcode asks for it, then completed (credited,
 * confirmed as `input.confirmation` says) or cancelled. With no URLs registered it completes unannounced.
 */
async function runC2BPayment(
  state: DarajaState,
  input: DarajaC2BPaymentInput,
): Promise<DarajaSimulatedC2BPayment> {
  const c2b = c2bState(state);
  const commandId = input.commandId ?? 'CustomerPayBillOnline';
  const payment: DarajaSimulatedC2BPayment = {
    transId: receiptNumber(),
    shortCode: input.shortCode,
    commandId,
    amount: input.amount,
    msisdn: input.msisdn,
    billRefNumber: input.billRefNumber ?? '',
    firstName: input.firstName ?? 'SIMULATED',
    at: state.now(),
    status: 'validating',
  };
  state.c2bPayments.push(payment);
  const registration = c2b.registrations.get(input.shortCode);
  if (registration && c2b.externalValidation.has(input.shortCode)) {
    payment.decidedBy = await askValidation(state, registration, payment);
    const accepted =
      payment.decidedBy === 'accepted' ||
      (payment.decidedBy === 'response_type' && registration.responseType === 'Completed');
    if (!accepted) {
      payment.status = 'cancelled';
      return payment;
    }
  }
  payment.status = 'completed';
  if (registration) scheduleConfirmation(state, registration, payment, input.confirmation ?? 'once');
  return payment;
}

/** Sends the confirmation as asked: once, twice (the same bytes), late, or never. */
function scheduleConfirmation(
  state: DarajaState,
  registration: DarajaC2BRegistration,
  payment: DarajaSimulatedC2BPayment,
  delivery: C2BConfirmationDelivery,
): void {
  if (delivery === 'none') return;
  // Built once, so a duplicate is the same bytes, with the balance as it stood when the money moved.
  const text = JSON.stringify(c2bCallbackBody(state, payment, 'confirmation'));
  scheduleResult(
    state,
    { kind: 'complete', callback: delivery },
    registration.confirmationUrl,
    () => JSON.parse(text),
    () => {},
  );
}

/** POSTs the validation request; `accepted`, the rejection code answered, or `response_type` for no answer. */
async function askValidation(
  state: DarajaState,
  registration: DarajaC2BRegistration,
  payment: DarajaSimulatedC2BPayment,
): Promise<string> {
  const delivery: DarajaCallbackDelivery = {
    url: registration.validationUrl,
    body: JSON.stringify(c2bCallbackBody(state, payment, 'validation')),
    at: new Date(),
  };
  try {
    const response = await fetch(registration.validationUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: delivery.body,
      signal: AbortSignal.timeout(c2bState(state).validationTimeoutMs),
    });
    delivery.status = response.status;
    const answer: unknown = await response.json().catch(() => undefined);
    const code = (answer as { ResultCode?: unknown } | undefined)?.ResultCode;
    if (code === 0 || code === '0') return 'accepted';
    if (typeof code === 'string' && code.trim() !== '') return code.trim();
    return 'response_type';
  } catch (error) {
    delivery.error = error instanceof Error ? error.message : String(error);
    return 'response_type';
  } finally {
    state.deliveries.push(delivery);
  }
}

/** The published validation and confirmation body; OrgAccountBalance is blank on validation. */
function c2bCallbackBody(
  state: DarajaState,
  payment: DarajaSimulatedC2BPayment,
  stage: 'validation' | 'confirmation',
): Record<string, string> {
  return {
    TransactionType: C2B_COMMANDS[payment.commandId] ?? 'Pay Bill',
    TransID: payment.transId,
    TransTime: String(compactDateTime(payment.at)),
    TransAmount: `${payment.amount}.00`,
    BusinessShortCode: payment.shortCode,
    BillRefNumber: payment.billRefNumber,
    InvoiceNumber: '',
    OrgAccountBalance: stage === 'validation' ? '' : decimalShillings(utilityCents(state, payment.shortCode)),
    ThirdPartyTransID: '',
    MSISDN: maskedMsisdn(payment.msisdn),
    FirstName: payment.firstName,
    MiddleName: '',
    LastName: '',
  };
}

/** As v2 sends it: `2547 ***** 126`. */
function maskedMsisdn(msisdn: string): string {
  return `${msisdn.slice(0, 4)} ***** ${msisdn.slice(-3)}`;
}

/** The simulator's C2B controls (server.ts spreads them into the simulator). */
export interface C2BControls {
  /** URLs registered, by shortcode. */
  c2bRegistrations: ReadonlyMap<string, DarajaC2BRegistration>;
  /** Every C2B payment, simulated or pushed, in arrival order. */
  c2bPayments: DarajaSimulatedC2BPayment[];
  /** Turns external validation on or off for a shortcode (Safaricom does it on request; off by default). */
  setC2BExternalValidation(shortCode: string, on: boolean): void;
  /** How long M-Pesa waits for a validation answer; DARAJA_C2B_VALIDATION_TIMEOUT_MS by default. */
  setC2BValidationTimeout(ms: number): void;
  /** A payer pays the shortcode now; resolves once validated and completed or cancelled (callbacks may follow). */
  pushC2BPayment(input: DarajaC2BPaymentInput): Promise<DarajaSimulatedC2BPayment>;
}

export function c2bControls(state: DarajaState): C2BControls {
  const c2b = c2bState(state);
  return {
    c2bRegistrations: c2b.registrations,
    c2bPayments: state.c2bPayments,
    setC2BExternalValidation(shortCode, on) {
      if (on) c2b.externalValidation.add(shortCode);
      else c2b.externalValidation.delete(shortCode);
    },
    setC2BValidationTimeout(ms) {
      c2b.validationTimeoutMs = ms;
    },
    pushC2BPayment: (input) => trackC2BPayment(state, input),
  };
}
