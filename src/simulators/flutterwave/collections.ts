/**
 * The simulator's money-in and look-up endpoints: virtual account numbers (POST and GET
 * /v3/virtual-account-numbers), a bank transfer into one (the `payIntoVirtualAccount` control, reported by
 * `charge.completed`), GET /v3/transactions/{id}/verify for such a charge, and the bank helpers:
 * POST /v3/accounts/resolve and GET /v3/banks/{country}.
 */
import { randomBytes } from 'node:crypto';
import { accountOf, FLUTTERWAVE_SIMULATOR_BANKS } from './accounts.ts';
import {
  type Answer,
  type FlutterwaveCharge,
  type FlutterwaveState,
  type FlutterwaveVirtualAccount,
  failure,
  nextId,
  type StoredVirtualAccount,
  success,
  timestamp,
} from './state.ts';
import { positiveAmount } from './transfers.ts';
import { sendWebhook } from './webhooks.ts';

/** The bank virtual account numbers are issued at. */
const VIRTUAL_ACCOUNT_BANK_NAME = 'WEMA BANK';
/** A dynamic (temporary) account expires an hour after it is created. */
const DYNAMIC_ACCOUNT_LIFETIME_MS = 60 * 60 * 1000;
const BVN_PATTERN = /^\d{11}$/;

type Fields = Record<string, unknown>;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

/** POST /v3/virtual-account-numbers: a permanent account needs a BVN; a temporary one an amount. */
export function createVirtualAccount(state: FlutterwaveState, fields: Fields): Answer {
  const email = text(fields.email);
  if (email === undefined) return failure(400, 'email is required');
  const permanent = fields.is_permanent === true || fields.is_permanent === 'true';
  const bvn = text(fields.bvn);
  if (permanent && (bvn === undefined || !BVN_PATTERN.test(bvn))) {
    return failure(400, 'BVN is required for static account number');
  }
  const amount = permanent ? undefined : positiveAmount(fields.amount);
  if (!permanent && amount === undefined) return failure(400, 'amount is required for a dynamic account');
  const txRef = text(fields.tx_ref) ?? `simulated-tx-${nextId(state)}`;
  const repeated = [...state.virtualAccounts.values()].find((stored) => stored.txRef === txRef);
  if (repeated !== undefined) return success('Virtual account created', structuredClone(repeated.account));
  const now = new Date();
  const account: FlutterwaveVirtualAccount = {
    response_code: '02',
    response_message: 'Transaction in progress',
    flw_ref: `FLW-${randomBytes(16).toString('hex')}`,
    order_ref: `URF_${Date.now()}_${nextId(state)}`,
    account_number: `78${String(nextId(state)).padStart(8, '0')}`,
    account_status: 'active',
    frequency: permanent ? 'N/A' : 1,
    bank_name: VIRTUAL_ACCOUNT_BANK_NAME,
    created_at: timestamp(now),
    expiry_date: permanent ? 'N/A' : timestamp(new Date(now.getTime() + DYNAMIC_ACCOUNT_LIFETIME_MS)),
    note: `Please make a bank transfer to ${text(fields.narration) ?? email}`,
    amount: amount === undefined ? null : amount.toFixed(2),
  };
  state.virtualAccounts.set(account.order_ref, {
    account,
    email,
    txRef,
    currency: text(fields.currency) ?? 'NGN',
    firstname: text(fields.firstname) ?? '',
    lastname: text(fields.lastname) ?? '',
  });
  return success('Virtual account created', structuredClone(account));
}

/** GET /v3/virtual-account-numbers/{order_ref}. */
export function readVirtualAccount(state: FlutterwaveState, orderRef: string): Answer {
  const stored = state.virtualAccounts.get(orderRef);
  if (stored === undefined) return failure(404, 'Virtual account not found');
  return success('Virtual account fetched', structuredClone(stored.account));
}

export interface SimulatedBankDeposit {
  accountNumber: string;
  /** Major units, as Flutterwave reports amounts. */
  amount: number;
  payerName?: string;
}

/** A bank transfer into a virtual account: recorded as a charge and reported by `charge.completed`. */
export async function payIntoVirtualAccount(
  state: FlutterwaveState,
  deposit: SimulatedBankDeposit,
): Promise<FlutterwaveCharge> {
  const stored = [...state.virtualAccounts.values()].find(
    (candidate) => candidate.account.account_number === deposit.accountNumber,
  );
  if (stored === undefined) throw new Error(`no virtual account number ${deposit.accountNumber}`);
  const charge = chargeInto(state, stored, deposit);
  state.charges.set(charge.id, charge);
  await sendWebhook(state, {
    event: 'charge.completed',
    id: charge.id,
    url: state.config.webhookUrl,
    payload: { event: 'charge.completed', 'event.type': 'BANK_TRANSFER_TRANSACTION', data: charge },
  });
  return structuredClone(charge);
}

function chargeInto(
  state: FlutterwaveState,
  stored: StoredVirtualAccount,
  deposit: SimulatedBankDeposit,
): FlutterwaveCharge {
  const id = nextId(state);
  const now = timestamp();
  return {
    id,
    tx_ref: stored.txRef,
    flw_ref: `${stored.account.account_number}-${id}`,
    device_fingerprint: 'N/A',
    amount: deposit.amount,
    currency: stored.currency,
    charged_amount: deposit.amount,
    app_fee: 0,
    merchant_fee: 0,
    processor_response: 'success',
    auth_model: 'AUTH',
    ip: '::ffff:127.0.0.1',
    narration: deposit.payerName ?? 'Bank transfer',
    status: 'successful',
    payment_type: 'bank_transfer',
    created_at: now,
    account_id: 17321,
    customer: {
      id: nextId(state),
      name: `${stored.firstname} ${stored.lastname}`.trim() || 'Anonymous customer',
      phone_number: null,
      email: stored.email,
      created_at: now,
    },
  };
}

/** GET /v3/transactions/{id}/verify, for the charges made into virtual accounts. */
export function verifyTransaction(state: FlutterwaveState, idText: string): Answer {
  const charge = /^\d+$/.test(idText) ? state.charges.get(Number(idText)) : undefined;
  if (charge === undefined) return failure(400, 'No transaction was found for this id');
  return success('Transaction fetched successfully', structuredClone(charge));
}

/** POST /v3/accounts/resolve. */
export function resolveAccount(fields: Fields): Answer {
  const accountNumber = text(fields.account_number);
  const accountBank = text(fields.account_bank);
  if (accountNumber === undefined || accountBank === undefined) {
    return failure(400, 'account_number and account_bank are required');
  }
  const name = accountOf(accountNumber)?.accountName;
  if (name === undefined) {
    return failure(400, 'Sorry, that account number is invalid, please check and try again');
  }
  return success('Account details fetched', { account_number: accountNumber, account_name: name });
}

/** GET /v3/banks/{country}. */
export function listBanks(country: string): Answer {
  const banks = FLUTTERWAVE_SIMULATOR_BANKS[country.toUpperCase()];
  if (banks === undefined) return failure(400, 'Invalid country code passed');
  return success('Banks fetched successfully', structuredClone(banks));
}
