/**
 * A stand-in for Flutterwave's v3 API (transfers, bank account resolution, banks, virtual account numbers,
 * transaction verification, settlements and the `transfer.completed` / `charge.completed` webhooks), as a real HTTP
 * server for tests and local development. docs/rails/flutterwave.md lists every endpoint, field and error
 * it implements, the page each follows, and each deliberate difference. The official Node client
 * (`flutterwave-node-v3`) works against it unmodified, given the simulator's URL as its third argument.
 *
 * A transfer's fate is decided by its account number (FLUTTERWAVE_SIMULATOR_ACCOUNTS). Everything is kept
 * in memory, per simulator.
 *
 * Files: state.ts (options, records, envelopes), accounts.ts (magic accounts, banks), transfers.ts,
 * mobileMoney.ts (mobile-money transfers' operators, fields and magic wallet numbers),
 * collections.ts (virtual accounts, deposits, resolve, banks), settlements.ts, webhooks.ts (signing, delivery,
 * verification), server.ts (HTTP and controls).
 */
export {
  FLUTTERWAVE_SIMULATOR_ACCOUNTS,
  FLUTTERWAVE_SIMULATOR_BANKS,
  type FlutterwaveAccountBehaviour,
  type FlutterwaveBank,
  type FlutterwaveSimulatorAccount,
} from './accounts.ts';
export type { SimulatedBankDeposit } from './collections.ts';
export {
  FLUTTERWAVE_MOBILE_MONEY_OPERATORS,
  FLUTTERWAVE_SIMULATOR_WALLET_ENDINGS,
} from './mobileMoney.ts';
export { type FlutterwaveSimulator, startFlutterwaveSimulator } from './server.ts';
export type {
  FlutterwaveSettlement,
  FlutterwaveSettlementTransaction,
  SettleOptions,
  StoredSettlement,
} from './settlements.ts';
export {
  FLUTTERWAVE_SIMULATOR_PROCESSING_MS,
  FLUTTERWAVE_SIMULATOR_WAIT_TIMEOUT_MS,
  FLUTTERWAVE_SIMULATOR_WEBHOOK_RETRIES,
  type FlutterwaveCharge,
  type FlutterwaveReceivedRequest,
  type FlutterwaveSimulatorOptions,
  type FlutterwaveTransfer,
  type FlutterwaveTransferStatus,
  type FlutterwaveVirtualAccount,
  type FlutterwaveWebhookDelivery,
} from './state.ts';
export { flutterwaveSignature, verifyFlutterwaveWebhook } from './webhooks.ts';
