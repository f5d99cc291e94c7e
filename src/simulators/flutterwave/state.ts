/**
 * The Flutterwave simulator's options, records and in-memory state: transfers, virtual account numbers,
 * bank-transfer charges into them, their settlements, every request received and every webhook delivery. Also the answer
 * and error-body shapes every v3 endpoint shares (`{status, message, data}`).
 */

import { newSimulatorWork, type SimulatorListenOptions, type SimulatorWork } from '../shared.ts';
import type { StoredSettlement } from './settlements.ts';

/** How long a NEW transfer takes to reach its final status, unless the options say otherwise. */
export const FLUTTERWAVE_SIMULATOR_PROCESSING_MS = 20;
/** How long a webhook delivery waits for the receiver's answer. */
export const FLUTTERWAVE_SIMULATOR_WEBHOOK_TIMEOUT_MS = 5_000;
/** How many times a webhook nobody answers 200 is sent again (Flutterwave retries failed webhooks when enabled). */
export const FLUTTERWAVE_SIMULATOR_WEBHOOK_RETRIES = 2;
/** The pause between two attempts at one webhook. */
export const FLUTTERWAVE_SIMULATOR_WEBHOOK_RETRY_INTERVAL_MS = 50;
/** How long the controls' waits last before they give up. */
export const FLUTTERWAVE_SIMULATOR_WAIT_TIMEOUT_MS = 10_000;
/** The largest request body the simulator reads. */
export const FLUTTERWAVE_SIMULATOR_MAX_BODY_BYTES = 64 * 1024;

export interface FlutterwaveSimulatorOptions {
  host?: string;
  port?: number;
  /** The secret key every call must carry as `Authorization: Bearer …`. */
  secretKey?: string;
  /** The public key (only the official client asks for one; the API never checks it). */
  publicKey?: string;
  /** The secret hash "configured on the dashboard": sent as `verif-hash` and used to sign webhooks. */
  secretHash?: string;
  /** The dashboard's webhook URL: where a transfer without `callback_url` and every charge are reported. */
  webhookUrl?: string;
  processingMs?: number;
  webhookRetries?: number;
  /** Test-only: runs once each answer has been written out (see SimulatorListenOptions). */
  afterAnswer?: SimulatorListenOptions['afterAnswer'];
}

export type FlutterwaveTransferStatus = 'NEW' | 'PENDING' | 'SUCCESSFUL' | 'FAILED';

/** A transfer as GET /v3/transfers/{id} answers it. */
export interface FlutterwaveTransfer {
  id: number;
  account_number: string;
  bank_code: string;
  full_name: string;
  created_at: string;
  currency: string;
  debit_currency: string;
  amount: number;
  fee: number;
  status: FlutterwaveTransferStatus;
  reference: string;
  meta: unknown;
  narration: string;
  complete_message: string;
  requires_approval: number;
  is_approved: number;
  bank_name: string;
}

/** A virtual account number as POST/GET /v3/virtual-account-numbers answer it. */
export interface FlutterwaveVirtualAccount {
  response_code: string;
  response_message: string;
  flw_ref: string;
  order_ref: string;
  account_number: string;
  account_status: 'active';
  frequency: number | string;
  bank_name: string;
  created_at: string;
  expiry_date: string;
  note: string;
  amount: string | null;
}

/** A bank transfer into a virtual account: the `data` of its `charge.completed` webhook. */
export interface FlutterwaveCharge {
  id: number;
  tx_ref: string;
  flw_ref: string;
  device_fingerprint: string;
  amount: number;
  currency: string;
  charged_amount: number;
  app_fee: number;
  merchant_fee: number;
  processor_response: string;
  auth_model: string;
  ip: string;
  narration: string;
  status: 'successful' | 'failed' | 'pending';
  payment_type: 'bank_transfer';
  created_at: string;
  account_id: number;
  customer: { id: number; name: string; phone_number: string | null; email: string; created_at: string };
}

export interface FlutterwaveReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  status: number;
  at: number;
}

export interface FlutterwaveWebhookDelivery {
  event: 'transfer.completed' | 'charge.completed';
  /** The transfer's or charge's id. */
  id: number;
  url: string;
  headers: Record<string, string>;
  body: string;
  attempt: number;
  status?: number;
  error?: string;
  at: number;
}

export interface StoredTransfer {
  transfer: FlutterwaveTransfer;
  /** Where its `transfer.completed` goes: the request's callback_url, else the dashboard's URL. */
  webhookUrl: string | undefined;
}

export interface StoredVirtualAccount {
  account: FlutterwaveVirtualAccount;
  email: string;
  txRef: string;
  currency: string;
  firstname: string;
  lastname: string;
}

export interface FlutterwaveState extends SimulatorWork {
  credentials: { secretKey: string; publicKey: string; secretHash: string };
  config: {
    processingMs: number;
    webhookRetries: number;
    latencyMs: number;
    webhookUrl: string | undefined;
    /** Webhooks are recorded but never reach the receiver (a missing callback, for polling to recover). */
    webhooksLost: boolean;
  };
  requests: FlutterwaveReceivedRequest[];
  webhooks: FlutterwaveWebhookDelivery[];
  transfers: Map<number, StoredTransfer>;
  virtualAccounts: Map<string, StoredVirtualAccount>;
  charges: Map<number, FlutterwaveCharge>;
  /** Settlements by id (settlements.ts), and the charges already in one. */
  settlements: Map<number, StoredSettlement>;
  settled: Set<number>;
  failures: number[];
  sequence: number;
}

export interface Answer {
  status: number;
  body: unknown;
}

export function newFlutterwaveState(options: FlutterwaveSimulatorOptions): FlutterwaveState {
  return {
    credentials: {
      secretKey: options.secretKey ?? 'FLWSECK_TEST-simulator0000000000000000-X',
      publicKey: options.publicKey ?? 'FLWPUBK_TEST-simulator0000000000000000-X',
      secretHash: options.secretHash ?? 'simulator-secret-hash',
    },
    config: {
      processingMs: options.processingMs ?? FLUTTERWAVE_SIMULATOR_PROCESSING_MS,
      webhookRetries: options.webhookRetries ?? FLUTTERWAVE_SIMULATOR_WEBHOOK_RETRIES,
      latencyMs: 0,
      webhookUrl: options.webhookUrl,
      webhooksLost: false,
    },
    requests: [],
    webhooks: [],
    transfers: new Map(),
    virtualAccounts: new Map(),
    charges: new Map(),
    settlements: new Map(),
    settled: new Set(),
    failures: [],
    sequence: 0,
    ...newSimulatorWork(),
  };
}

/** The next id the simulator hands out (transfers, charges, customers share one sequence). */
export function nextId(state: FlutterwaveState): number {
  state.sequence += 1;
  return 190_000 + state.sequence;
}

/** Flutterwave's success envelope. */
export function success(message: string, data: unknown, status = 200): Answer {
  return { status, body: { status: 'success', message, data } };
}

/** Flutterwave's error envelope: `{status: "error", message, data: null}`. */
export function failure(status: number, message: string): Answer {
  return { status, body: { status: 'error', message, data: null } };
}

/** Flutterwave's timestamps: ISO 8601 with milliseconds, UTC. */
export function timestamp(at = new Date()): string {
  return at.toISOString();
}
