/**
 * The simulator's settlements: GET /v3/settlements (one page, newest first, without transactions) and
 * GET /v3/settlements/{id} (with its `transactions`), with the fields Flutterwave's published samples show
 * (the official client's documentation/settlements.md). A settlement is made on demand (`settle`) from the
 * successful charges into virtual accounts not settled yet, in one currency.
 */
import { type Answer, type FlutterwaveState, failure, nextId, success, timestamp } from './state.ts';

/** One charge as a settlement lists it in `transactions`. */
export interface FlutterwaveSettlementTransaction {
  customer_email: string;
  flw_ref: string;
  tx_ref: string;
  id: number;
  charged_amount: number;
  app_fee: number;
  merchant_fee: number;
  stampduty_charge: number;
  settlement_amount: number;
  status: 'successful';
  payment_entity: string;
  transaction_date: string;
  currency: string;
  card_locale: string;
  rrn: string;
  subaccount_settlement: number;
}

/** A settlement as GET /v3/settlements lists it (GET /v3/settlements/{id} adds `transactions`). */
export interface FlutterwaveSettlement {
  id: number;
  account_id: number;
  merchant_name: string;
  merchant_email: string;
  settlement_account: string;
  bank_code: string;
  transaction_date: string;
  due_date: string;
  processed_date: string | null;
  status: 'completed';
  is_local: boolean;
  currency: string;
  gross_amount: number;
  app_fee: number;
  merchant_fee: number;
  chargeback: number;
  refund: number;
  stampduty_charge: number;
  net_amount: number;
  transaction_count: number;
  processor_ref: string | null;
  disburse_ref: string;
  disburse_message: string | null;
  channel: string;
  destination: 'account';
  fx_data: null;
  flag_message: null;
  meta: number[];
  refund_meta: null;
  chargeback_meta: null;
  source_bankcode: null;
  created_at: string;
}

export interface StoredSettlement {
  settlement: FlutterwaveSettlement;
  transactions: FlutterwaveSettlementTransaction[];
}

export interface SettleOptions {
  currency: string;
  /** Flutterwave's fee on each charge, in major units (0 unless given). */
  appFee?: number;
}

/** Major units as Flutterwave writes them: a JSON number, rounded to the cent (the simulator sums floats). */
const major = (value: number) => Math.round(value * 100) / 100;

/** Settles the successful charges of a currency not settled yet; throws when there is none. */
export function settle(state: FlutterwaveState, options: SettleOptions): StoredSettlement {
  const charges = [...state.charges.values()].filter(
    (charge) =>
      charge.currency === options.currency && charge.status === 'successful' && !state.settled.has(charge.id),
  );
  if (charges.length === 0) throw new Error(`no ${options.currency} charge to settle`);
  const fee = options.appFee ?? 0;
  const transactions = charges.map(
    (charge): FlutterwaveSettlementTransaction => ({
      customer_email: charge.customer.email,
      flw_ref: charge.flw_ref,
      tx_ref: charge.tx_ref,
      id: charge.id,
      charged_amount: charge.charged_amount,
      app_fee: fee,
      merchant_fee: 0,
      stampduty_charge: 0,
      settlement_amount: major(charge.charged_amount - fee),
      status: 'successful',
      payment_entity: charge.payment_type,
      transaction_date: charge.created_at.slice(0, 10),
      currency: charge.currency,
      card_locale: 'N/A',
      rrn: 'N/A',
      subaccount_settlement: 0,
    }),
  );
  const gross = major(transactions.reduce((sum, t) => sum + t.charged_amount, 0));
  const fees = major(transactions.reduce((sum, t) => sum + t.app_fee, 0));
  const id = nextId(state);
  const now = timestamp();
  const settlement: FlutterwaveSettlement = {
    id,
    account_id: 17321,
    merchant_name: 'Mkoba Simulated Merchant',
    merchant_email: 'merchant@example.com',
    settlement_account: '0031318432',
    bank_code: '063',
    transaction_date: now,
    due_date: now,
    processed_date: now,
    status: 'completed',
    is_local: true,
    currency: options.currency,
    gross_amount: gross,
    app_fee: fees,
    merchant_fee: 0,
    chargeback: 0,
    refund: 0,
    stampduty_charge: 0,
    net_amount: major(gross - fees),
    transaction_count: transactions.length,
    processor_ref: null,
    disburse_ref: `SIMULATED-${id}`,
    disburse_message: null,
    channel: 'web',
    destination: 'account',
    fx_data: null,
    flag_message: null,
    meta: transactions.map((t) => t.id),
    refund_meta: null,
    chargeback_meta: null,
    source_bankcode: null,
    created_at: now,
  };
  for (const charge of charges) state.settled.add(charge.id);
  const stored = { settlement, transactions };
  state.settlements.set(id, stored);
  return structuredClone(stored);
}

/** GET /v3/settlements: every settlement on one page, newest first. */
export function listSettlements(state: FlutterwaveState): Answer {
  const found = [...state.settlements.values()].map((stored) => stored.settlement).reverse();
  return {
    status: 200,
    body: {
      status: 'success',
      message: 'Settlements fetched',
      meta: {
        page_info: {
          total: found.length,
          current_page: 1,
          total_pages: found.length === 0 ? 0 : 1,
          page_size: found.length,
        },
      },
      data: structuredClone(found),
    },
  };
}

/** GET /v3/settlements/{id}: the settlement with its transactions (`meta` a JSON string, as the sample). */
export function readSettlement(state: FlutterwaveState, idText: string): Answer {
  const stored = /^\d+$/.test(idText) ? state.settlements.get(Number(idText)) : undefined;
  if (stored === undefined) return failure(404, 'Settlement not found');
  const { settlement, transactions } = structuredClone(stored);
  return success('Settlement fetched', {
    ...settlement,
    meta: JSON.stringify(settlement.meta),
    transactions,
  });
}
