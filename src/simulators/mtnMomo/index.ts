/**
 * A stand-in for MTN's MoMo Open API, collection and disbursement products, as a real HTTP server for
 * tests and local development. It speaks MTN's paths, headers, bodies and statuses (see
 * docs/rails/mtn-momo.md for what was checked against MTN's published documentation and what is
 * assumed), and decides each request's fate by the payer's or payee's number (MOMO_SIMULATOR_NUMBERS).
 *
 * Like MTN's platform: a POST is answered 202 with no body and the request stays PENDING until it is
 * final; the final result is sent once to the request's X-Callback-Url, with the body GET answers.
 * Everything is kept in memory, per simulator; nothing is persisted.
 *
 * One file per product API: token.ts, collection.ts (request-to-pay), disbursement.ts (transfer); shared:
 * requests.ts (create and read), validation.ts, callbacks.ts (outcomes and callbacks), state.ts (options,
 * records, state), numbers.ts (the magic numbers); server.ts wires them into the HTTP server.
 */
export {
  MOMO_SANDBOX_ACCOUNT_HOLDERS,
  MOMO_SANDBOX_NUMBERS,
  MOMO_SIMULATOR_NUMBERS,
  type MomoSimulatorBehaviour,
  type MomoSimulatorNumber,
} from './numbers.ts';
export { type MomoSimulator, startMomoSimulator } from './server.ts';
export {
  MOMO_SIMULATOR_CALLBACK_RETRIES,
  MOMO_SIMULATOR_CALLBACK_TIMEOUT_MS,
  MOMO_SIMULATOR_LATE_CALLBACK_DELAY_MS,
  MOMO_SIMULATOR_PROCESSING_MS,
  MOMO_SIMULATOR_TOKEN_LIFETIME_SECONDS,
  MOMO_SIMULATOR_WAIT_TIMEOUT_MS,
  type MomoCallbackDelivery,
  type MomoCallbackRetries,
  type MomoProduct,
  type MomoReceivedRequest,
  type MomoResource,
  type MomoSimulatorOptions,
  type MomoStatus,
} from './state.ts';
export { MOMO_NOTE_MAX_CHARS } from './validation.ts';
