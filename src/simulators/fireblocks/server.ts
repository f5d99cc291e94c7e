/**
 * The Fireblocks simulator's HTTP server: reads and records each request, authenticates it as Fireblocks
 * does (X-API-Key and a signed JWT per request), routes it to the vault or transactions API, and writes
 * the answer; its JWKS (v2's webhook keys) is served unauthenticated at Fireblocks' path. Also the
 * simulator's controls: funding a vault, announcing an incoming deposit, forcing failures, rotating the
 * webhook key, taking the JWKS down, changing a completed transaction's status, waiting for webhooks and
 * statuses.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type http from 'node:http';
import { jsonObjectOf } from '../../domain/json.ts';
import { type SimulatorWorkControls, waitForRecords, workControls } from '../controls.ts';
import { answerJson, decodedOrUndefined, listenSimulator, waitFor } from '../shared.ts';
import { changeCompletedStatus } from './afterCompletion.ts';
import { atomicAmount, checkedNetworkFee, FIREBLOCKS_SIMULATOR_ASSETS } from './assets.ts';
import { authenticate } from './auth.ts';
import {
  type Answer,
  FIREBLOCKS_SIMULATOR_BODY_MAX_BYTES,
  FIREBLOCKS_SIMULATOR_WAIT_TIMEOUT_MS,
  type FireblocksReceivedRequest,
  type FireblocksSimulatorOptions,
  type FireblocksState,
  type FireblocksTransaction,
  type FireblocksTransactionStatus,
  type FireblocksWebhookDelivery,
  fireblocksError,
  newFireblocksState,
} from './state.ts';
import { listTransactions } from './transactionPages.ts';
import {
  announceDeposit,
  createTransaction,
  type IncomingDeposit,
  readTransaction,
  readTransactionByExternalTxId,
} from './transactions.ts';
import {
  addAddress,
  createVaultAccount,
  createVaultAsset,
  findVault,
  listAddresses,
  listVaultsPaged,
  presentVault,
  readVault,
  readVaultAsset,
} from './vaults.ts';
import { FIREBLOCKS_SIMULATOR_WEBHOOK_PUBLIC_KEY } from './webhookKey.ts';
import {
  FIREBLOCKS_SIMULATOR_JWKS_PATH,
  type FireblocksSimulatorWebhookSignatures,
  jwksAnswer,
  rotateWebhookKey,
} from './webhookSigning.ts';

export interface FireblocksSimulator extends SimulatorWorkControls<500 | 503> {
  /** The base URL an SDK is given: the server's origin with Fireblocks' `/v1`. */
  baseUrl: string;
  /** The default API user (when no apiUsers were given): its API key and PEM private key. */
  credentials: { apiKey: string; secretKey: string };
  /** The PEM public key v1 webhooks are verified with, published as Fireblocks publishes its own. */
  webhookPublicKey: string;
  /** Where v2's keys are published (the simulator's origin with Fireblocks' `/.well-known/jwks.json`). */
  jwksUrl: string;
  /** How many times the JWKS was asked for. */
  readonly jwksRequests: number;
  setWebhookSignatures(signatures: FireblocksSimulatorWebhookSignatures): void;
  /** Adds a v2 key and signs with it from now on (the earlier ones stay published); returns its kid. */
  rotateWebhookKey(): string;
  /** false: the JWKS answers 503 until set true again. */
  setJwksAvailable(available: boolean): void;
  /**
   * Changes a COMPLETED transaction's status (a reorganisation, a correction: afterCompletion.ts) and
   * announces it by webhook; GET answers it from then on.
   */
  changeCompletedStatus(
    id: string,
    status: FireblocksTransactionStatus,
    subStatus: string,
  ): FireblocksTransaction;
  readonly requests: readonly FireblocksReceivedRequest[];
  readonly webhooks: readonly FireblocksWebhookDelivery[];
  setWebhookUrl(url: string | undefined): void;
  registerApiUser(apiKey: string, publicKeyPem: string): void;
  /** Sets a vault's asset wallet balance (a decimal string), as funding it on chain would. */
  setBalance(vaultAccountId: string, assetId: string, amount: string): void;
  /** An incoming deposit to a vault address, announced by webhook and credited once COMPLETED. */
  deposit(deposit: IncomingDeposit): FireblocksTransaction;
  transaction(id: string): FireblocksTransaction | undefined;
  /**
   * The network fee outgoing transactions created from now on pay (a decimal in the fee asset's units), in the
   * native coin; test-only `paidIn: 'asset'` makes the transferred asset itself pay it, out of the source wallet.
   */
  setNetworkFee(fee: string, paidIn?: 'native' | 'asset'): void;
  waitForStatus(
    id: string,
    status: FireblocksTransactionStatus,
    timeoutMs?: number,
  ): Promise<FireblocksTransaction>;
  waitForWebhooks(filter?: {
    transactionId?: string;
    count?: number;
    timeoutMs?: number;
  }): Promise<FireblocksWebhookDelivery[]>;
}

export async function startFireblocksSimulator(
  options: FireblocksSimulatorOptions = {},
): Promise<FireblocksSimulator> {
  let credentials = { apiKey: '', secretKey: '' };
  let apiUsers = options.apiUsers;
  if (apiUsers === undefined) {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    credentials = {
      apiKey: randomUUID(),
      secretKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    apiUsers = { [credentials.apiKey]: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString() };
  }
  const state = newFireblocksState(options, apiUsers);
  const { server, url } = await listenSimulator(
    (request, response) => receive(state, request, response),
    options,
  );
  server.keepAliveTimeout = FIREBLOCKS_SIMULATOR_KEEP_ALIVE_MS;
  return controls(state, server, url, credentials);
}

/**
 * How long an idle kept-alive connection stays open: longer than a client's own idle close (the outbound
 * guard's 4 s), as a public API's is, so a client never writes into a connection the server is closing.
 */
const FIREBLOCKS_SIMULATOR_KEEP_ALIVE_MS = 65_000;

function controls(
  state: FireblocksState,
  server: http.Server,
  origin: string,
  credentials: FireblocksSimulator['credentials'],
): FireblocksSimulator {
  return {
    ...workControls(state, server, FIREBLOCKS_SIMULATOR_WAIT_TIMEOUT_MS),
    baseUrl: `${origin}/v1`,
    credentials,
    webhookPublicKey: FIREBLOCKS_SIMULATOR_WEBHOOK_PUBLIC_KEY,
    jwksUrl: `${origin}${FIREBLOCKS_SIMULATOR_JWKS_PATH}`,
    get jwksRequests() {
      return state.signing.jwksRequests;
    },
    setWebhookSignatures: (signatures) => {
      state.signing.signatures = signatures;
    },
    rotateWebhookKey: () => rotateWebhookKey(state.signing),
    setJwksAvailable: (available) => {
      state.signing.jwksAvailable = available;
    },
    changeCompletedStatus: (id, status, subStatus) => changeCompletedStatus(state, id, status, subStatus),
    requests: state.requests,
    webhooks: state.webhooks,
    setWebhookUrl: (url) => {
      state.config.webhookUrl = url;
    },
    registerApiUser: (apiKey, publicKeyPem) => {
      state.apiUsers.set(apiKey, publicKeyPem);
    },
    setBalance: (vaultAccountId, assetId, amount) => {
      const wallet = findVault(state, vaultAccountId)?.assets.get(assetId);
      const units = atomicAmount(amount, FIREBLOCKS_SIMULATOR_ASSETS[assetId]?.decimals ?? 0);
      if (!wallet || units === undefined)
        throw new Error('setBalance: no such asset wallet, or a bad amount');
      wallet.totalUnits = units;
    },
    deposit: (deposit) => announceDeposit(state, deposit),
    transaction: (id) => {
      const stored = state.transactions.get(id);
      return stored ? structuredClone(stored.transaction) : undefined;
    },
    setNetworkFee: (fee, paidIn = 'native') => {
      state.config.networkFee = checkedNetworkFee(fee);
      state.config.feePaidIn = paidIn;
    },
    waitForStatus: (id, status, timeoutMs = FIREBLOCKS_SIMULATOR_WAIT_TIMEOUT_MS) =>
      waitFor(
        state,
        () => {
          const transaction = state.transactions.get(id)?.transaction;
          return transaction?.status === status ? structuredClone(transaction) : undefined;
        },
        timeoutMs,
        `transaction ${id} to be ${status}`,
      ),
    waitForWebhooks: ({ transactionId, count = 1, timeoutMs = FIREBLOCKS_SIMULATOR_WAIT_TIMEOUT_MS } = {}) =>
      waitForRecords(
        state,
        state.webhooks,
        (delivery) => transactionId === undefined || delivery.transactionId === transactionId,
        count,
        timeoutMs,
        `${count} webhook(s)`,
      ),
  };
}

function receive(
  state: FireblocksState,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  return answerJson(state.requests, request, response, {
    maxBytes: FIREBLOCKS_SIMULATOR_BODY_MAX_BYTES,
    latencyMs: () => state.config.latencyMs ?? 0,
    tooLarge: fireblocksError(413, 413, 'Request body too large'),
    answer: (record) => answer(state, record),
  });
}

const ROUTES: Array<{ method: string; pattern: RegExp; handle: Handler }> = [];
type Handler = (
  state: FireblocksState,
  params: string[],
  body: Record<string, unknown>,
  context: Context,
) => Answer;
interface Context {
  query: URLSearchParams;
  apiKey: string;
}

function route(method: string, pattern: RegExp, handle: Handler): void {
  ROUTES.push({ method, pattern, handle });
}

route('POST', /^\/v1\/vault\/accounts$/, (state, _params, body) => createVaultAccount(state, body));
route('GET', /^\/v1\/vault\/accounts$/, (state) => ({ status: 200, body: state.vaults.map(presentVault) }));
route('GET', /^\/v1\/vault\/accounts_paged$/, (state, _params, _body, { query }) =>
  listVaultsPaged(state, query),
);
route('GET', /^\/v1\/vault\/accounts\/([^/]+)$/, (state, [id = '']) => readVault(state, id));
route('POST', /^\/v1\/vault\/accounts\/([^/]+)\/([^/]+)$/, (state, [id = '', asset = '']) =>
  createVaultAsset(state, id, asset),
);
route('GET', /^\/v1\/vault\/accounts\/([^/]+)\/([^/]+)$/, (state, [id = '', asset = '']) =>
  readVaultAsset(state, id, asset),
);
route('GET', /^\/v1\/vault\/accounts\/([^/]+)\/([^/]+)\/addresses$/, (state, [id = '', asset = '']) =>
  listAddresses(state, id, asset),
);
route(
  'GET',
  /^\/v1\/vault\/accounts\/([^/]+)\/([^/]+)\/addresses_paginated$/,
  (state, [id = '', asset = ''], _body, { query }) => listAddresses(state, id, asset, query),
);
route('POST', /^\/v1\/vault\/accounts\/([^/]+)\/([^/]+)\/addresses$/, (state, [id = '', asset = ''], body) =>
  addAddress(state, id, asset, body),
);
route('POST', /^\/v1\/transactions$/, (state, _params, body, { apiKey }) =>
  createTransaction(state, body, apiKey),
);
route('GET', /^\/v1\/transactions$/, (state, _params, _body, { query }) => listTransactions(state, query));
route('GET', /^\/v1\/transactions\/external_tx_id\/([^/]+)$/, (state, [externalTxId = '']) =>
  readTransactionByExternalTxId(state, externalTxId),
);
route('GET', /^\/v1\/transactions\/([^/]+)$/, (state, [id = '']) => readTransaction(state, id));

const NOT_FOUND: Answer = fireblocksError(404, 404, 'Not found');
const UNAVAILABLE: Answer = fireblocksError(503, 503, 'Service unavailable');

function answer(state: FireblocksState, record: FireblocksReceivedRequest): Answer {
  const failure = state.failures.shift();
  if (failure !== undefined) return { ...UNAVAILABLE, status: failure };
  const url = new URL(record.path, 'http://simulator.invalid');
  // Published for anyone, as Fireblocks' keys.fireblocks.io is: no API key, no token.
  if (record.method === 'GET' && url.pathname === FIREBLOCKS_SIMULATOR_JWKS_PATH)
    return jwksAnswer(state.signing);
  const found = ROUTES.map((candidate) => ({ candidate, match: candidate.pattern.exec(url.pathname) })).find(
    ({ candidate, match }) => match !== null && candidate.method === record.method,
  );
  if (!found?.match) return NOT_FOUND;
  const refusal = authenticate(
    state,
    record.path,
    record.headers,
    record.body,
    Math.floor(Date.now() / 1000),
  );
  if (refusal) return refusal;
  let body: Record<string, unknown> = {};
  if (record.method === 'POST' && record.body !== '') {
    const parsed = jsonObjectOf(record.body);
    if (parsed === undefined) return fireblocksError(400, 1400, 'The request body is not a JSON object');
    body = parsed;
  }
  const params = found.match.slice(1).map((param) => decodedOrUndefined(param ?? ''));
  // A malformed escape (`%zz`) names no resource.
  if (params.some((param) => param === undefined)) return NOT_FOUND;
  const apiKey = String(record.headers['x-api-key']);
  const handle = () =>
    found.candidate.handle(state, params as string[], body, { query: url.searchParams, apiKey });
  return record.method === 'POST'
    ? idempotently(state, apiKey, record.headers['idempotency-key'], handle)
    : handle();
}

/** Fireblocks' "API Idempotency" page: keys of at most 40 characters, answers replayed for 24 hours. */
const IDEMPOTENCY_KEY_MAX_CHARS = 40;
const IDEMPOTENCY_KEY_RETENTION_MS = 24 * 60 * 60 * 1_000;

/**
 * A POST with an Idempotency-Key: the first answer under the key is stored and every later request with
 * it (from the same API user, for 24 hours) gets that answer, the operation not run again.
 */
function idempotently(
  state: FireblocksState,
  apiKey: string,
  header: string | string[] | undefined,
  handle: () => Answer,
): Answer {
  if (header === undefined) return handle();
  const key = Array.isArray(header) ? header.join(',') : header;
  if (key === '' || key.length > IDEMPOTENCY_KEY_MAX_CHARS) {
    return fireblocksError(400, 1400, `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_CHARS} characters`);
  }
  const stored = state.idempotent.get(`${apiKey}\u0000${key}`);
  if (stored && Date.now() - stored.at < IDEMPOTENCY_KEY_RETENTION_MS) return stored.answer;
  const answered = handle();
  state.idempotent.set(`${apiKey}\u0000${key}`, { answer: answered, at: Date.now() });
  return answered;
}
