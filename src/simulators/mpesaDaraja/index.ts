/**
 * A Safaricom Daraja (M-Pesa) partner simulator: a real HTTP server that speaks the OAuth, B2C, B2B, M-Pesa
 * Express (STK push and its query), Transaction Status, Account Balance, C2B (Register URL, simulate) and
 * Reversal APIs with Daraja's field names, result codes and error bodies, and POSTs the asynchronous results
 * to the callback URLs a request names.
 *
 * Outcomes are chosen by the payee's (B2C PartyB) or payer's (STK PhoneNumber) number:
 * DARAJA_SIMULATOR_PHONE_BEHAVIOURS. The sandbox's magic numbers (SANDBOX_PHONE_BEHAVIOURS) give the same
 * outcomes here, so the sandbox can later run through the Daraja adapter.
 *
 * Where Daraja's behaviour is documented, this follows it, including where it is inconvenient:
 *  - A repeated B2C OriginatorConversationID is refused (HTTP 500, `500.002.1001` "Duplicate
 *    OriginatorConversationID") and makes no second payment; Daraja does not replay the first answer.
 *  - M-Pesa Express has no idempotency key: every accepted push is a new CheckoutRequestID and a new prompt.
 *    The only guard is M-Pesa's own: a push to a phone that already has a prompt open is refused (HTTP 500,
 *    `500.001.1001` "Unable to lock subscriber, ...").
 * Where it is not documented (marked "assumed"), the choice is the one the adapter must survive.
 *
 * One file per API: oauth.ts, b2c.ts, b2b.ts, express.ts (STK push and query), transactionStatus.ts, accountBalance.ts,
 * c2b.ts (Register URL, simulate, validation and confirmation), reversal.ts; shared:
 * resultApis.ts (what the result APIs share), securityCredential.ts (the certificate it publishes and the initiator check), state.ts (options, records, answers), validation.ts, callbacks.ts, formats.ts (ids and times),
 * behaviours.ts (the magic numbers), tls.ts (its HTTPS mode's certificate); server.ts wires them into the HTTP server.
 */
export { ACCOUNT_BALANCE_PATH, DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS } from './accountBalance.ts';
export { B2B_PATH } from './b2b.ts';
export {
  DARAJA_SIMULATOR_PHONE_BEHAVIOURS,
  type DarajaPhoneBehaviour,
  type DarajaSimulatedOutcome,
} from './behaviours.ts';
export {
  C2B_BILL_REF_MAX_CHARS,
  C2B_REGISTER_PATHS,
  C2B_SIMULATE_PATHS,
  type C2BConfirmationDelivery,
  DARAJA_C2B_VALIDATION_TIMEOUT_MS,
  type DarajaC2BPaymentInput,
  type DarajaC2BRegistration,
} from './c2b.ts';
export { REVERSAL_PATH } from './reversal.ts';
export {
  DARAJA_SIMULATOR_CERTIFICATE_PATH,
  DARAJA_SIMULATOR_CERTIFICATE_PEM,
  encryptSecurityCredential,
} from './securityCredential.ts';
export { type DarajaSimulator, type DarajaSimulatorStartOptions, startDarajaSimulator } from './server.ts';
export {
  DARAJA_SIMULATOR_CALLBACK_DELAY_MS,
  DARAJA_SIMULATOR_CALLBACK_TIMEOUT_MS,
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  DARAJA_SIMULATOR_LATE_CALLBACK_DELAY_MS,
  DARAJA_SIMULATOR_MAX_BODY_BYTES,
  DARAJA_STK_PROMPT_TIMEOUT_MS,
  DARAJA_TOKEN_LIFETIME_SECONDS,
  type DarajaCallbackDelivery,
  type DarajaReceivedRequest,
  type DarajaSimulatedC2BPayment,
  type DarajaSimulatedPayment,
  type DarajaSimulatedPush,
  type DarajaSimulatorOptions,
} from './state.ts';
export {
  DARAJA_SANDBOX_HOST,
  DARAJA_SIMULATOR_TLS_CERTIFICATE_PEM,
} from './tls.ts';
export { B2B_ACCOUNT_REFERENCE_MAX_CHARS } from './validation.ts';
