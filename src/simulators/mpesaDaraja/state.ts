/**
 * What a Daraja simulator is started with and keeps: its default credentials and timings, its options, the
 * records of what it received, sent and accepted, the state every API shares, and the answer an API gives
 * (Daraja's error body included).
 */
import type http from 'node:http';
import { SANDBOX_DELAYED_SETTLEMENT_MS } from '../../rails/sandbox.ts';
import type { DarajaSimulatedOutcome } from './behaviours.ts';
import { requestIdLike } from './formats.ts';
import { DARAJA_SIMULATOR_CERTIFICATE_PEM, encryptSecurityCredential } from './securityCredential.ts';

/** The sandbox initiator's password: what a SecurityCredential must decrypt to. */
const DEFAULT_INITIATOR_PASSWORD = 'sim-initiator-password';

export const DARAJA_SIMULATOR_DEFAULT_CREDENTIALS = {
  consumerKey: 'sim-consumer-key',
  consumerSecret: 'sim-consumer-secret',
  /** The B2C (bulk disbursement) shortcode: B2C PartyA and Transaction Status PartyA. */
  shortCode: '600996',
  /** The Lipa na M-Pesa (paybill) shortcode: STK BusinessShortCode. */
  stkShortCode: '174379',
  initiatorName: 'testapi',
  initiatorPassword: DEFAULT_INITIATOR_PASSWORD,
  /**
   * The initiator's password encrypted with the simulator's certificate, as a client sends it. Any valid
   * encryption of the password is accepted (the padding is random, so each process computes a new one).
   */
  securityCredential: encryptSecurityCredential(DEFAULT_INITIATOR_PASSWORD, DARAJA_SIMULATOR_CERTIFICATE_PEM),
  passkey: 'sim-passkey',
} as const;

/** Daraja's tokens live an hour; it answers `expires_in: "3599"`. */
export const DARAJA_TOKEN_LIFETIME_SECONDS = 3599;
/** A settling payment's result is POSTed this long after the request was accepted, unless told otherwise. */
export const DARAJA_SIMULATOR_CALLBACK_DELAY_MS = 0;
/** How late the "late callback" number's result arrives, unless told otherwise. */
export const DARAJA_SIMULATOR_LATE_CALLBACK_DELAY_MS = 30_000;
/** The simulator gives up POSTing a callback after this long; it does not retry (Daraja's retries are undocumented). */
export const DARAJA_SIMULATOR_CALLBACK_TIMEOUT_MS = 10_000;
/**
 * An STK prompt nobody answers ends this long after it was sent (the lock on the phone with it), with
 * ResultCode 1037, or 1019 for the expiring number. Assumed: Daraja's pages give no figure; integrators
 * report about a minute, and the adapter's first query (90 s) comes after it.
 */
export const DARAJA_STK_PROMPT_TIMEOUT_MS = 60_000;
/** Larger request bodies are refused as an invalid payload. */
export const DARAJA_SIMULATOR_MAX_BODY_BYTES = 64 * 1024;

export interface DarajaSimulatorOptions {
  port?: number;
  host?: string;
  consumerKey?: string;
  consumerSecret?: string;
  shortCode?: string;
  stkShortCode?: string;
  initiatorName?: string;
  /** The password a SecurityCredential must decrypt to (under the simulator's certificate). */
  initiatorPassword?: string;
  passkey?: string;
  tokenLifetimeSeconds?: number;
  callbackDelayMs?: number;
  lateCallbackDelayMs?: number;
  /** How long the delayed-settlement number takes; the sandbox's SANDBOX_DELAYED_SETTLEMENT_MS by default. */
  delayedSettlementMs?: number;
  /** Added before every answer (OAuth included). */
  latencyMs?: number;
  /** The simulator's clock (token expiry, prompt time-outs, the times it reports); the real one by default. */
  now?: () => Date;
}

export interface DarajaReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  /** The JSON body, when it parsed. */
  body: unknown;
  at: Date;
}

export interface DarajaCallbackDelivery {
  url: string;
  body: string;
  /** The receiver's HTTP status, or undefined when the POST failed (see `error`). */
  status?: number;
  error?: string;
  at: Date;
}

export interface DarajaSimulatedPayment {
  originatorConversationId: string;
  conversationId: string;
  receipt: string;
  /** The shortcode paying: its Utility Account is debited (accountBalance.ts). */
  partyA: string;
  partyB: string;
  amount: number;
  outcome: DarajaSimulatedOutcome;
  acceptedAt: Date;
  /** When M-Pesa finished with it; undefined while it is still being processed (or never will be). */
  completedAt?: Date;
  /** B2B paybill payments: the shortcode whose Utility Account is credited (b2b.ts). */
  creditsUtilityOf?: string;
}

export interface DarajaSimulatedPush {
  /** The paybill or till that asked: a phone's prompt lock is per organization shortcode. */
  businessShortCode: string;
  merchantRequestId: string;
  checkoutRequestId: string;
  receipt: string;
  phoneNumber: string;
  amount: number;
  accountReference: string;
  outcome: DarajaSimulatedOutcome;
  acceptedAt: Date;
  completedAt?: Date;
}

/** A payer's C2B payment to a paybill or till (c2b.ts). */
export interface DarajaSimulatedC2BPayment {
  transId: string;
  shortCode: string;
  commandId: string;
  amount: number;
  msisdn: string;
  billRefNumber: string;
  firstName: string;
  at: Date;
  /** `completed` credits the shortcode's Utility Account (accountBalance.ts); `cancelled` moved nothing. */
  status: 'validating' | 'completed' | 'cancelled';
  /** What decided it: `accepted`, the rejection code answered, or `response_type` when validation did not answer. */
  decidedBy?: string;
}

export const SUCCESS_DESC = 'The service request is processed successfully.';
export const ACCEPTED_DESC = 'Accept the service request successfully.';

export interface ScheduledCallback {
  url: string;
  /** Built when sent, so a body can name the moment the money moved. */
  body: () => string;
  timer: NodeJS.Timeout;
  /** Runs as the callback is sent: delivering a delayed result early completes its payment early. */
  onSend?: () => void;
}

export type DarajaConfig = ReturnType<typeof darajaConfig>;

/** The options over the defaults; an option given as undefined keeps its default. */
export function darajaConfig(options: DarajaSimulatorOptions) {
  return {
    ...DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
    tokenLifetimeSeconds: DARAJA_TOKEN_LIFETIME_SECONDS,
    callbackDelayMs: DARAJA_SIMULATOR_CALLBACK_DELAY_MS,
    lateCallbackDelayMs: DARAJA_SIMULATOR_LATE_CALLBACK_DELAY_MS,
    delayedSettlementMs: SANDBOX_DELAYED_SETTLEMENT_MS,
    latencyMs: 0,
    ...withoutUndefined(options),
  };
}

/** Everything one simulator keeps, shared by its APIs; the record arrays are the ones its controls expose. */
export interface DarajaState {
  config: DarajaConfig;
  now: () => Date;
  /** token → expiry (epoch ms) */
  tokens: Map<string, number>;
  scheduled: Set<ScheduledCallback>;
  inFlight: Set<Promise<void>>;
  hanging: Set<http.ServerResponse>;
  paymentsByOriginator: Map<string, DarajaSimulatedPayment>;
  pushesByCheckout: Map<string, DarajaSimulatedPush>;
  /** Pushes whose prompt may still be open: each holds its phone's lock until it ends or times out. */
  openPushes: Set<DarajaSimulatedPush>;
  failures: { remaining: number; status: number };
  closed: boolean;
  requests: DarajaReceivedRequest[];
  deliveries: DarajaCallbackDelivery[];
  payments: DarajaSimulatedPayment[];
  pushes: DarajaSimulatedPush[];
  c2bPayments: DarajaSimulatedC2BPayment[];
}

export function newDarajaState(options: DarajaSimulatorOptions): DarajaState {
  return {
    config: darajaConfig(options),
    now: options.now ?? (() => new Date()),
    tokens: new Map(),
    scheduled: new Set(),
    inFlight: new Set(),
    hanging: new Set(),
    paymentsByOriginator: new Map(),
    pushesByCheckout: new Map(),
    openPushes: new Set(),
    failures: { remaining: 0, status: 500 },
    closed: false,
    requests: [],
    deliveries: [],
    payments: [],
    pushes: [],
    c2bPayments: [],
  };
}

/** An API's answer: its HTTP status and JSON body. */
export class ApiAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    /** Set for an answer that is not JSON: the body is then written as the text it is. */
    readonly contentType?: string,
  ) {}
}

export function errorBody(errorCode: string, errorMessage: string) {
  return { requestId: requestIdLike(), errorCode, errorMessage };
}

/** Daraja's refusal of a missing or malformed request field. */
export function invalidField(field: string): ApiAnswer {
  return new ApiAnswer(400, errorBody('400.002.02', `Bad Request - Invalid ${field}`));
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
