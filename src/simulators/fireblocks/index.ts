/**
 * A stand-in for Fireblocks' REST API (vault accounts, their asset wallets and deposit addresses, and
 * transfers out of a vault), as a real HTTP server for tests and local development. It authenticates each
 * request as Fireblocks does (X-API-Key and a JWT signed RS256 per request), moves each transaction
 * through Fireblocks' statuses and announces every change by a webhook signed with its own key, published
 * as FIREBLOCKS_SIMULATOR_WEBHOOK_PUBLIC_KEY. Fireblocks' own SDK works against it with nothing changed but
 * the base URL. docs/rails/fireblocks.md lists every endpoint, field and error it follows, with sources.
 *
 * Files: server.ts (HTTP and controls), auth.ts (the JWT), vaults.ts, transactions.ts, transactionPages.ts (the APIs),
 * lifecycle.ts (statuses and webhooks), afterCompletion.ts (a completed transaction's status changed),
 * webhookSigning.ts (v1 and v2 signatures, the JWKS), assets.ts (asset ids and amounts), state.ts, webhookKey.ts.
 */
export { atomicAmount, decimalAmount, FIREBLOCKS_SIMULATOR_ASSETS } from './assets.ts';
export { FIREBLOCKS_AUTH_CODES } from './auth.ts';
export { type FireblocksSimulator, startFireblocksSimulator } from './server.ts';
export {
  FIREBLOCKS_SIMULATOR_CONFIRMATIONS,
  FIREBLOCKS_SIMULATOR_MAX_TOKEN_LIFETIME_SECONDS,
  FIREBLOCKS_SIMULATOR_STEP_MS,
  type FireblocksOutcome,
  type FireblocksSimulatorOptions,
  type FireblocksTransaction,
  type FireblocksTransactionStatus,
  type FireblocksWebhookDelivery,
} from './state.ts';
export {
  FIREBLOCKS_SIMULATOR_AMOUNTS,
  FIREBLOCKS_SIMULATOR_CODES,
  type IncomingDeposit,
} from './transactions.ts';
export { FIREBLOCKS_SIMULATOR_WEBHOOK_PUBLIC_KEY } from './webhookKey.ts';
export {
  FIREBLOCKS_SIMULATOR_JWKS_PATH,
  type FireblocksSimulatorWebhookSignatures,
  signWebhookBody,
  webhookJws,
} from './webhookSigning.ts';
