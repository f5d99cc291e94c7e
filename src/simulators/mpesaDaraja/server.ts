/**
 * The Daraja simulator's HTTP server: reads and records each request, routes it to its API (OAuth, B2C, B2B,
 * M-Pesa Express, Transaction Status, Account Balance, Reversal) after the checks every M-Pesa API shares (method, forced failures,
 * access token, JSON body; C2B in c2b.ts), and writes the answer, or leaves it hanging; it also publishes the simulator's
 * certificate (securityCredential.ts). Speaks HTTPS when started with `tls` (tls.ts). Also the simulator's controls.
 */
import type http from 'node:http';
import { jsonObjectOf } from '../../domain/json.ts';
import {
  callbacksIdle,
  cancelScheduled,
  deliverScheduledNow,
  type ScheduledCallbackControls,
} from '../scheduledCallbacks.ts';
import { closeServer, listenSimulator, onBodyRead } from '../shared.ts';
import { ACCOUNT_BALANCE_PATH, accountBalanceQuery } from './accountBalance.ts';
import { B2B_PATH, b2bPaymentRequest } from './b2b.ts';
import { B2C_PATHS, b2cPaymentRequest } from './b2c.ts';
import {
  C2B_REGISTER_PATHS,
  C2B_SIMULATE_PATHS,
  type C2BControls,
  c2bControls,
  registerC2BUrls,
  simulateC2BPayment,
} from './c2b.ts';
import { send } from './callbacks.ts';
import { STK_PUSH_PATH, STK_QUERY_PATH, stkPush, stkQuery } from './express.ts';
import { generateToken, OAUTH_PATH, tokenRefusal } from './oauth.ts';
import { REVERSAL_PATH, reversalRequest } from './reversal.ts';
import { DARAJA_SIMULATOR_CERTIFICATE_PATH, DARAJA_SIMULATOR_CERTIFICATE_PEM } from './securityCredential.ts';
import {
  ApiAnswer,
  DARAJA_SIMULATOR_MAX_BODY_BYTES,
  type DarajaCallbackDelivery,
  type DarajaReceivedRequest,
  type DarajaSimulatedPayment,
  type DarajaSimulatedPush,
  type DarajaSimulatorOptions,
  type DarajaState,
  errorBody,
  newDarajaState,
} from './state.ts';
import { DARAJA_SIMULATOR_TLS_CERTIFICATE_PEM, DARAJA_SIMULATOR_TLS_PRIVATE_KEY_PEM } from './tls.ts';
import { TRANSACTION_STATUS_PATH, transactionStatusQuery } from './transactionStatus.ts';

/** The simulator's certificate is served as PEM text. */
const CERTIFICATE_CONTENT_TYPE = 'application/x-pem-file';

export interface DarajaSimulatorStartOptions extends DarajaSimulatorOptions {
  /** Speak HTTPS under the simulator's certificate for Safaricom's hosts (tls.ts) instead of HTTP. */
  tls?: boolean;
}

export interface DarajaSimulator extends C2BControls, ScheduledCallbackControls {
  /** The base URL, without a trailing slash (`https://…` when started with `tls`): the adapter's `baseUrl`. */
  url: string;
  /** Every request received, OAuth included, in arrival order. */
  requests: DarajaReceivedRequest[];
  /** Every callback POSTed, with the receiver's answer. */
  deliveries: DarajaCallbackDelivery[];
  /** B2C and B2B requests M-Pesa accepted for processing (one per OriginatorConversationID). */
  payments: DarajaSimulatedPayment[];
  /** STK pushes sent to payers' phones. */
  pushes: DarajaSimulatedPush[];
  /** Makes every token issued so far invalid, as an hour passing would. */
  expireTokens(): void;
  /** The next `count` calls to the M-Pesa APIs (not OAuth) answer `status` with Daraja's error body. */
  failNext(count: number, status: number): void;
  /** Delay before every answer from now on. */
  setLatency(ms: number): void;
  /**
   * POSTs every scheduled callback now (late and delayed ones too), or only those whose URL `only` accepts,
   * and waits for all deliveries to finish.
   */
  deliverPendingCallbacks(only?: (url: string) => boolean): Promise<void>;
}

export async function startDarajaSimulator(
  options: DarajaSimulatorStartOptions = {},
): Promise<DarajaSimulator> {
  const state = newDarajaState(options);
  const simulator = simulatorControls(state);
  const tls = { cert: DARAJA_SIMULATOR_TLS_CERTIFICATE_PEM, key: DARAJA_SIMULATOR_TLS_PRIVATE_KEY_PEM };
  const { server, url } = await listenSimulator((request, response) => receive(state, request, response), {
    port: options.port,
    host: options.host,
    tls: options.tls ? tls : undefined,
  });
  simulator.url = url;
  simulator.close = async () => {
    cancelScheduled(state);
    for (const response of state.hanging) response.destroy();
    await simulator.idle();
    await closeServer(server);
  };
  return simulator;
}

/** The simulator as its user sees it, over the state its APIs share (`url` and `close` are set once listening). */
function simulatorControls(state: DarajaState): DarajaSimulator {
  const simulator: DarajaSimulator = {
    ...c2bControls(state),
    url: '',
    requests: state.requests,
    deliveries: state.deliveries,
    payments: state.payments,
    pushes: state.pushes,
    expireTokens() {
      state.tokens.clear();
    },
    failNext(count, status) {
      state.failures = { remaining: count, status };
    },
    setLatency(ms) {
      state.config.latencyMs = ms;
    },
    async deliverPendingCallbacks(only) {
      await deliverScheduledNow(
        state,
        (callback) => send(state, callback),
        only && ((callback) => only(callback.url)),
      );
    },
    async idle() {
      await callbacksIdle(state);
    },
    close: async () => {},
  };
  return simulator;
}

/** Reads a request's body (past the limit it is dropped), records the request, then answers it. */
function receive(state: DarajaState, request: http.IncomingMessage, response: http.ServerResponse): void {
  onBodyRead(request, DARAJA_SIMULATOR_MAX_BODY_BYTES, (rawBody, tooLarge) => {
    const url = new URL(request.url ?? '/', 'http://simulator');
    state.requests.push({
      method: request.method ?? 'GET',
      path: url.pathname,
      headers: request.headers,
      rawBody,
      body: jsonObjectOf(rawBody),
      at: new Date(),
    });
    void respond(state, request, response, tooLarge, rawBody).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify(errorBody('500.003.1001', String(error))));
    });
  });
}

/** After the simulator's latency, writes the routed answer, or keeps the response open for one that hangs. */
async function respond(
  state: DarajaState,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  tooLarge: boolean,
  rawBody: string,
): Promise<void> {
  const { config, hanging } = state;
  if (config.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, config.latencyMs));
  const answer = tooLarge
    ? new ApiAnswer(400, errorBody('400.002.05', 'Invalid Request Payload'))
    : await route(state, request, rawBody);
  if (answer === 'hang') {
    hanging.add(response);
    response.on('close', () => hanging.delete(response));
    return;
  }
  const text = answer.contentType === undefined ? JSON.stringify(answer.body) : String(answer.body);
  response.writeHead(answer.status, {
    'content-type': answer.contentType ?? 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

async function route(
  state: DarajaState,
  request: http.IncomingMessage,
  rawBody: string,
): Promise<ApiAnswer | 'hang'> {
  const url = new URL(request.url ?? '/', 'http://simulator');
  const path = url.pathname;
  const method = request.method ?? 'GET';
  if (path === DARAJA_SIMULATOR_CERTIFICATE_PATH && method === 'GET') {
    return new ApiAnswer(200, DARAJA_SIMULATOR_CERTIFICATE_PEM, CERTIFICATE_CONTENT_TYPE);
  }
  if (path === OAUTH_PATH) {
    if (method !== 'GET') return new ApiAnswer(405, errorBody('405.001', `${method} Method Not Allowed`));
    return generateToken(state, request, url.searchParams);
  }
  const express = path === STK_PUSH_PATH || path === STK_QUERY_PATH;
  const resultApi =
    B2C_PATHS.has(path) ||
    path === B2B_PATH ||
    path === TRANSACTION_STATUS_PATH ||
    path === ACCOUNT_BALANCE_PATH ||
    C2B_REGISTER_PATHS.has(path) ||
    C2B_SIMULATE_PATHS.has(path) ||
    path === REVERSAL_PATH;
  if (!express && !resultApi) {
    return new ApiAnswer(404, errorBody('404.001.01', 'Resource not found'));
  }
  if (method !== 'POST') return new ApiAnswer(405, errorBody('405.001', `${method} Method Not Allowed`));
  if (state.failures.remaining > 0) {
    state.failures.remaining -= 1;
    return new ApiAnswer(state.failures.status, errorBody('500.003.1001', 'Internal Server Error'));
  }
  const tokenProblem = tokenRefusal(state, request, express ? 'express' : 'result_apis');
  if (tokenProblem) return tokenProblem;
  const body = jsonObjectOf(rawBody);
  if (!body) return new ApiAnswer(400, errorBody('400.002.05', 'Invalid Request Payload'));
  if (B2C_PATHS.has(path)) return b2cPaymentRequest(state, path, body);
  if (path === B2B_PATH) return b2bPaymentRequest(state, body);
  if (path === TRANSACTION_STATUS_PATH) return transactionStatusQuery(state, body);
  if (path === ACCOUNT_BALANCE_PATH) return accountBalanceQuery(state, body);
  if (C2B_REGISTER_PATHS.has(path)) return registerC2BUrls(state, body);
  if (C2B_SIMULATE_PATHS.has(path)) return simulateC2BPayment(state, body);
  if (path === REVERSAL_PATH) return reversalRequest(state, body);
  if (path === STK_PUSH_PATH) return stkPush(state, body);
  return stkQuery(state, body);
}
