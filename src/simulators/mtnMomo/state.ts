/**
 * What a MoMo simulator is started with and keeps: its timings and options, the records of what it received
 * and sent, the requests it holds (as GET answers them), the state every product shares, and MTN's
 * platform error bodies.
 */
import { SANDBOX_DELAYED_SETTLEMENT_MS } from '../../rails/sandbox.ts';
import { newSimulatorWork, type SimulatorReceivedRequest, type SimulatorWork } from '../shared.ts';
import { currenciesOf, MOMO_SIMULATOR_DEFAULT_ENVIRONMENT } from './environments.ts';

export type MomoProduct = 'collection' | 'disbursement';
export type MomoStatus = 'PENDING' | 'SUCCESSFUL' | 'FAILED';

/** MTN's access tokens live one hour. */
export const MOMO_SIMULATOR_TOKEN_LIFETIME_SECONDS = 3_600;
/** How long an accepted request stays PENDING before it is final (numbers that settle or fail). */
export const MOMO_SIMULATOR_PROCESSING_MS = 50;
/** How long after its request is final the late-callback number's callback is sent. */
export const MOMO_SIMULATOR_LATE_CALLBACK_DELAY_MS = 2_000;
/** MTN's platform gives a callback 2 seconds to be answered. */
export const MOMO_SIMULATOR_CALLBACK_TIMEOUT_MS = 2_000;
/** Each product account's available balance unless given, in major units of its currency. */
export const MOMO_SIMULATOR_DEFAULT_BALANCE = '1000000';
/**
 * How MTN's callback page says a callback nobody answers is sent again: 20 more times a second apart, then
 * ("short block") 30 times 2 minutes apart. After that MTN retries hourly "until it is automatically
 * unblocked", which the simulator does not keep up: it stops.
 */
export const MOMO_SIMULATOR_CALLBACK_RETRIES: MomoCallbackRetries = {
  quickCount: 20,
  quickIntervalMs: 1_000,
  shortBlockCount: 30,
  shortBlockIntervalMs: 120_000,
};
/** How long waitForCallbacks and whenIdle wait unless told otherwise. */
export const MOMO_SIMULATOR_WAIT_TIMEOUT_MS = 5_000;

export interface MomoSimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** The API user (a UUID) and API key that POST /{product}/token/ accepts. */
  apiUser?: string;
  apiKey?: string;
  collectionSubscriptionKey?: string;
  disbursementSubscriptionKey?: string;
  /**
   * The X-Target-Environment the simulator answers to: `mtnuganda` unless given; MTN's sandbox is `sandbox`
   * (EUR only).
   */
  targetEnvironment?: string;
  /** When set, an X-Callback-Url on another host is refused, as MTN refuses one off the registered host. */
  providerCallbackHost?: string;
  /**
   * The currencies taken, others refused with MTN's INVALID_CURRENCY; the target environment's own currency
   * (MOMO_ENVIRONMENT_CURRENCIES) unless given.
   */
  currencies?: readonly string[];
  /** Each product account's available balance (a decimal string, as MTN answers it); MOMO_SIMULATOR_DEFAULT_BALANCE. */
  balances?: Partial<Record<MomoProduct, string>>;
  tokenLifetimeSeconds?: number;
  processingMs?: number;
  /** How long the settle-after-a-delay number stays PENDING; the sandbox rail's delay unless given. */
  delayedSettlementMs?: number;
  lateCallbackDelayMs?: number;
  /**
   * MTN's callback page says to accept both PUT and POST on the callback listener, and its API reference
   * names POST for some operations and PUT for others without naming one for transfer and requesttopay;
   * PUT unless given.
   */
  callbackMethod?: 'PUT' | 'POST';
  /**
   * How a callback that gets no answer (no HTTP response within 2 s) is sent again:
   * MOMO_SIMULATOR_CALLBACK_RETRIES unless given; false sends each once, as MTN's other callback page says.
   */
  callbackRetries?: MomoCallbackRetries | false;
  /** Delay before every answer. */
  latencyMs?: number;
}

/** The retries of a callback that got no answer: `quickCount` at `quickIntervalMs`, then the short block's. */
export interface MomoCallbackRetries {
  quickCount: number;
  quickIntervalMs: number;
  shortBlockCount: number;
  shortBlockIntervalMs: number;
}

export type MomoReceivedRequest = SimulatorReceivedRequest;

export interface MomoCallbackDelivery {
  product: MomoProduct;
  referenceId: string;
  externalId: string;
  url: string;
  method: 'PUT' | 'POST';
  body: string;
  /** 0 for the first delivery, then each retry's number. */
  attempt: number;
  /** The receiver's status, or undefined when the delivery did not get an answer (see error). */
  status?: number;
  error?: string;
  at: number;
}

/** A request as GET answers it (and as its callback carries it). */
export interface MomoResource {
  amount: string;
  currency: string;
  financialTransactionId?: string;
  externalId: string;
  payer?: { partyIdType: string; partyId: string };
  payee?: { partyIdType: string; partyId: string };
  payerMessage?: string;
  payeeNote?: string;
  status: MomoStatus;
  /** MTN's reason code when FAILED, as its live platform sends it (a string). */
  reason?: string;
}

/** What the simulator accepts, for building an adapter's configuration. */
export interface MomoCredentials {
  apiUser: string;
  apiKey: string;
  collectionSubscriptionKey: string;
  disbursementSubscriptionKey: string;
  targetEnvironment: string;
}

/** The error bodies MTN's platform answers a 500 and a 503 with. */
export const ERROR_BODY_OF_STATUS: Record<500 | 503, { code: string; message: string }> = {
  500: { code: 'INTERNAL_PROCESSING_ERROR', message: 'An internal error occurred while processing.' },
  503: { code: 'SERVICE_UNAVAILABLE', message: 'Service unavailable, try again later.' },
};

export interface StoredRequest {
  product: MomoProduct;
  referenceId: string;
  resource: MomoResource;
  callbackUrl?: string;
}

export type Answer = { status: number; body?: unknown };

/** A product's API (collection's request-to-pay, disbursement's transfer): its routes and its party. */
export interface MomoProductApi {
  product: MomoProduct;
  /** The party its request names: the payer of a request-to-pay, the payee of a transfer. */
  partyKey: 'payer' | 'payee';
  /** MTN's reason for a party number it cannot use. */
  partyNotFound: string;
  routes: MomoRoute[];
}

/** A path and method an API answers, and what it does there. */
export interface MomoRoute {
  pattern: RegExp;
  method: string;
  action: 'token' | 'create' | 'read' | 'balance' | 'active';
}

/**
 * A product's API over its one resource: created by POST /{product}/v1_0/{resource}, read by GET
 * /{product}/v1_0/{resource}/{X-Reference-Id} (the product and the reference are the path's parameters).
 */
export function productApi(
  product: MomoProduct,
  resource: string,
  party: Pick<MomoProductApi, 'partyKey' | 'partyNotFound'>,
): MomoProductApi {
  return {
    product,
    ...party,
    routes: [
      { pattern: new RegExp(`^/(${product})/v1_0/${resource}$`), method: 'POST', action: 'create' },
      { pattern: new RegExp(`^/(${product})/v1_0/${resource}/([^/]+)$`), method: 'GET', action: 'read' },
    ],
  };
}

export type MomoConfig = ReturnType<typeof momoConfig>;

/** The options over the defaults: timings, callback method, and the host and currencies MTN would check. */
export function momoConfig(options: MomoSimulatorOptions, targetEnvironment: string) {
  return {
    tokenLifetimeSeconds: options.tokenLifetimeSeconds ?? MOMO_SIMULATOR_TOKEN_LIFETIME_SECONDS,
    processingMs: options.processingMs ?? MOMO_SIMULATOR_PROCESSING_MS,
    delayedSettlementMs: options.delayedSettlementMs ?? SANDBOX_DELAYED_SETTLEMENT_MS,
    lateCallbackDelayMs: options.lateCallbackDelayMs ?? MOMO_SIMULATOR_LATE_CALLBACK_DELAY_MS,
    callbackMethod: options.callbackMethod ?? 'PUT',
    callbackRetries: options.callbackRetries ?? MOMO_SIMULATOR_CALLBACK_RETRIES,
    latencyMs: options.latencyMs ?? 0,
    providerCallbackHost: options.providerCallbackHost,
    currencies: currenciesOf(targetEnvironment, options.currencies),
  };
}

/**
 * Everything one simulator keeps, shared by its products; the record arrays are the ones it exposes. Its
 * scheduled work is the finalizations and callbacks in flight: the simulator is idle when none are left.
 */
export interface MomoState extends SimulatorWork {
  credentials: MomoCredentials;
  subscriptionKeys: Record<MomoProduct, string>;
  config: MomoConfig;
  requests: MomoReceivedRequest[];
  callbacks: MomoCallbackDelivery[];
  stored: Map<string, StoredRequest>;
  /** Each product account's available balance, and the currency it is held in (the environment's). */
  balances: Record<MomoProduct, string>;
  balanceCurrency: string;
  /** Each token: its product, the API user it was issued to, and when it expires (epoch ms). */
  tokens: Map<string, { product: MomoProduct; apiUser: string; expiresAt: number }>;
  /** API users made through the provisioning API, by id: the callback host they registered, their key. */
  apiUsers: Map<string, { providerCallbackHost: string; apiKey?: string }>;
  failures: Array<500 | 503>;
  financialTransactionSequence: number;
}

export function newMomoState(options: MomoSimulatorOptions): MomoState {
  const credentials = {
    apiUser: options.apiUser ?? '6f1c8a0e-3b7d-4c2a-9e5f-0a1b2c3d4e5f',
    apiKey: options.apiKey ?? 'momo-simulator-api-key',
    collectionSubscriptionKey: options.collectionSubscriptionKey ?? 'momo-simulator-collection-key',
    disbursementSubscriptionKey: options.disbursementSubscriptionKey ?? 'momo-simulator-disbursement-key',
    targetEnvironment: options.targetEnvironment ?? MOMO_SIMULATOR_DEFAULT_ENVIRONMENT,
  };
  const config = momoConfig(options, credentials.targetEnvironment);
  return {
    credentials,
    subscriptionKeys: {
      collection: credentials.collectionSubscriptionKey,
      disbursement: credentials.disbursementSubscriptionKey,
    },
    config,
    balances: {
      collection: options.balances?.collection ?? MOMO_SIMULATOR_DEFAULT_BALANCE,
      disbursement: options.balances?.disbursement ?? MOMO_SIMULATOR_DEFAULT_BALANCE,
    },
    balanceCurrency: config.currencies?.[0] ?? 'EUR',
    requests: [],
    callbacks: [],
    stored: new Map(),
    tokens: new Map(),
    apiUsers: new Map(),
    failures: [],
    ...newSimulatorWork(),
    financialTransactionSequence: 0,
  };
}

export const keyOf = (product: MomoProduct, referenceId: string) => `${product}:${referenceId}`;

/** A request's body in the order MTN's reference shows its fields. */
export function presented(resource: MomoResource): MomoResource {
  const { amount, currency, financialTransactionId, externalId, payer, payee, payerMessage, payeeNote } =
    resource;
  return {
    amount,
    currency,
    ...(financialTransactionId === undefined ? {} : { financialTransactionId }),
    externalId,
    ...(payer === undefined ? {} : { payer }),
    ...(payee === undefined ? {} : { payee }),
    ...(payerMessage === undefined ? {} : { payerMessage }),
    ...(payeeNote === undefined ? {} : { payeeNote }),
    status: resource.status,
    ...(resource.reason === undefined ? {} : { reason: resource.reason }),
  };
}
