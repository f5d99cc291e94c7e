/**
 * The Flutterwave simulator's HTTP server: records each request, answers forced failures, checks the
 * secret key (`Authorization: Bearer …`), routes to the v3 endpoint, and writes Flutterwave's JSON
 * envelope. Also the simulator's controls (outcomes, webhooks again, deposits into virtual accounts,
 * settlements).
 */
import type http from 'node:http';
import { jsonObjectOf } from '../../domain/json.ts';
import { type SimulatorWorkControls, waitForRecords, workControls } from '../controls.ts';
import { answerJson, listenSimulator } from '../shared.ts';
import {
  createVirtualAccount,
  listBanks,
  payIntoVirtualAccount,
  readVirtualAccount,
  resolveAccount,
  type SimulatedBankDeposit,
  verifyTransaction,
} from './collections.ts';
import {
  listSettlements,
  readSettlement,
  type SettleOptions,
  type StoredSettlement,
  settle,
} from './settlements.ts';
import {
  type Answer,
  FLUTTERWAVE_SIMULATOR_MAX_BODY_BYTES,
  FLUTTERWAVE_SIMULATOR_WAIT_TIMEOUT_MS,
  type FlutterwaveCharge,
  type FlutterwaveReceivedRequest,
  type FlutterwaveSimulatorOptions,
  type FlutterwaveState,
  type FlutterwaveTransfer,
  type FlutterwaveVirtualAccount,
  type FlutterwaveWebhookDelivery,
  failure,
  newFlutterwaveState,
} from './state.ts';
import { createTransfer, listTransfers, readTransfer, transferCompleted } from './transfers.ts';
import { sendWebhook } from './webhooks.ts';

export interface FlutterwaveSimulator extends SimulatorWorkControls<500 | 502 | 503> {
  /** The base URL, without the `/v3` (as the official client takes it, with a trailing slash added). */
  url: string;
  credentials: { secretKey: string; publicKey: string; secretHash: string };
  readonly requests: readonly FlutterwaveReceivedRequest[];
  readonly webhooks: readonly FlutterwaveWebhookDelivery[];
  transfer(id: number): FlutterwaveTransfer | undefined;
  transfers(): FlutterwaveTransfer[];
  virtualAccounts(): FlutterwaveVirtualAccount[];
  /** A bank transfer into a virtual account number: sends `charge.completed` to the dashboard URL. */
  payIntoVirtualAccount(deposit: SimulatedBankDeposit): Promise<FlutterwaveCharge>;
  /** What GET /v3/transactions/{id}/verify answers about a charge from now on (a webhook that lied). */
  amendCharge(id: number, changes: Partial<Pick<FlutterwaveCharge, 'amount' | 'currency' | 'status'>>): void;
  /** Settles the successful charges of a currency not settled yet (GET /v3/settlements then lists it). */
  settle(options: SettleOptions): StoredSettlement;
  /** Sends a final transfer's `transfer.completed` again (Flutterwave may send one more than once). */
  resendTransferWebhook(id: number): Promise<void>;
  /** From now on webhooks are recorded but never delivered (true), or delivered again (false). */
  loseWebhooks(lost: boolean): void;
  /** Where webhooks without a `callback_url` go (the dashboard setting). */
  setWebhookUrl(url: string | undefined): void;
  waitForWebhooks(filter?: {
    id?: number;
    count?: number;
    timeoutMs?: number;
  }): Promise<FlutterwaveWebhookDelivery[]>;
}

interface Route {
  method: string;
  pattern: RegExp;
  answer: (
    state: FlutterwaveState,
    params: string[],
    fields: Record<string, unknown>,
    query: URLSearchParams,
  ) => Answer;
}

const ROUTES: Route[] = [
  {
    method: 'POST',
    pattern: /^\/v3\/transfers$/,
    answer: (state, _, fields) => createTransfer(state, fields),
  },
  {
    method: 'GET',
    pattern: /^\/v3\/transfers$/,
    answer: (state, _, __, query) => listTransfers(state, query),
  },
  {
    method: 'GET',
    pattern: /^\/v3\/transfers\/([^/]+)$/,
    answer: (state, [id]) => readTransfer(state, id ?? ''),
  },
  { method: 'POST', pattern: /^\/v3\/accounts\/resolve$/, answer: (_, __, fields) => resolveAccount(fields) },
  { method: 'GET', pattern: /^\/v3\/banks\/([^/]+)$/, answer: (_, [country]) => listBanks(country ?? '') },
  {
    method: 'POST',
    pattern: /^\/v3\/virtual-account-numbers$/,
    answer: (state, _, fields) => createVirtualAccount(state, fields),
  },
  {
    method: 'GET',
    pattern: /^\/v3\/virtual-account-numbers\/([^/]+)$/,
    answer: (state, [orderRef]) => readVirtualAccount(state, orderRef ?? ''),
  },
  { method: 'GET', pattern: /^\/v3\/settlements$/, answer: (state) => listSettlements(state) },
  {
    method: 'GET',
    pattern: /^\/v3\/settlements\/([^/]+)$/,
    answer: (state, [id]) => readSettlement(state, id ?? ''),
  },
  {
    method: 'GET',
    pattern: /^\/v3\/transactions\/([^/]+)\/verify$/,
    answer: (state, [id]) => verifyTransaction(state, id ?? ''),
  },
];

export async function startFlutterwaveSimulator(
  options: FlutterwaveSimulatorOptions = {},
): Promise<FlutterwaveSimulator> {
  const state = newFlutterwaveState(options);
  const { server, url } = await listenSimulator(
    (request, response) => receive(state, request, response),
    options,
  );
  return controls(state, server, url);
}

function controls(state: FlutterwaveState, server: http.Server, url: string): FlutterwaveSimulator {
  return {
    ...workControls(state, server, FLUTTERWAVE_SIMULATOR_WAIT_TIMEOUT_MS),
    url,
    credentials: state.credentials,
    requests: state.requests,
    webhooks: state.webhooks,
    transfer: (id) => structuredClone(state.transfers.get(id)?.transfer),
    transfers: () => [...state.transfers.values()].map((stored) => structuredClone(stored.transfer)),
    virtualAccounts: () =>
      [...state.virtualAccounts.values()].map((stored) => structuredClone(stored.account)),
    payIntoVirtualAccount: (deposit) => payIntoVirtualAccount(state, deposit),
    settle: (options) => settle(state, options),
    amendCharge: (id, changes) => {
      const charge = state.charges.get(id);
      if (charge === undefined) throw new Error(`no charge ${id}`);
      state.charges.set(id, { ...charge, ...changes });
    },
    resendTransferWebhook: async (id) => {
      const stored = state.transfers.get(id);
      if (stored === undefined) throw new Error(`no transfer ${id}`);
      await sendWebhook(state, transferCompleted(stored));
    },
    loseWebhooks: (lost) => {
      state.config.webhooksLost = lost;
    },
    setWebhookUrl: (webhookUrl) => {
      state.config.webhookUrl = webhookUrl;
    },
    waitForWebhooks: ({ id, count = 1, timeoutMs = FLUTTERWAVE_SIMULATOR_WAIT_TIMEOUT_MS } = {}) =>
      waitForRecords(
        state,
        state.webhooks,
        (delivery) => id === undefined || delivery.id === id,
        count,
        timeoutMs,
        `${count} webhook(s)${id === undefined ? '' : ` about ${id}`}`,
      ),
  };
}

function receive(
  state: FlutterwaveState,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  return answerJson(state.requests, request, response, {
    maxBytes: FLUTTERWAVE_SIMULATOR_MAX_BODY_BYTES,
    latencyMs: () => state.config.latencyMs,
    tooLarge: failure(413, 'Request body too large'),
    answer: (record) => answer(state, record.method, record.path, request.headers.authorization, record.body),
  });
}

function answer(
  state: FlutterwaveState,
  method: string,
  path: string,
  authorization: string | undefined,
  text: string,
): Answer {
  const forced = state.failures.shift();
  if (forced !== undefined) return failure(forced, 'Service temporarily unavailable, please try again');
  // The official client joins its base URL and some paths with two slashes; the platform accepts that.
  const url = new URL(path.replace(/^\/+/, '/'), 'http://simulator.invalid');
  const pathname = url.pathname.replace(/\/{2,}/g, '/');
  const onPath = ROUTES.filter((candidate) => candidate.pattern.test(pathname));
  if (onPath.length === 0) return failure(404, 'Not found');
  if (authorization !== `Bearer ${state.credentials.secretKey}`) {
    return failure(401, 'Invalid authorization key');
  }
  const route = onPath.find((candidate) => candidate.method === method);
  if (route === undefined) return failure(405, 'Method not allowed');
  let fields: Record<string, unknown> = {};
  if (method === 'POST') {
    // An empty body is an empty object.
    const parsed = jsonObjectOf(text === '' ? '{}' : text);
    if (parsed === undefined) return failure(400, 'Invalid JSON body');
    fields = parsed;
  }
  const params = (route.pattern.exec(pathname) ?? []).slice(1).map((param) => safeDecode(param ?? ''));
  return route.answer(state, params, fields, url.searchParams);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
