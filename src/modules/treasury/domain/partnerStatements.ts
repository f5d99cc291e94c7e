/**
 * Partner settlement reports read into statement lines, pure: Safaricom's M-Pesa organization statement
 * (the org portal's CSV export) and MTN MoMo's transaction report (the partner portal's CSV export), each
 * row checked column by column. Amounts are decimal strings read into integer minor units; times are the
 * partner's local time, read as UTC; money in and money out are told apart as each format tells them.
 * Columns and their sources: docs/rails/mpesa-daraja.md and docs/rails/mtn-momo.md.
 */
import type { Currency } from '../../../domain/money.ts';
import type { Rail } from '../../../domain/transfers.ts';
import { amountOf, type Row, rowsOf, statusOf, utcDayOf } from './partnerStatementRows.ts';
import type {
  StatementDirection,
  StatementFault,
  StatementLine,
  StatementLineStatus,
} from './reconciliation.ts';

/** `mkoba_json`: our own lines (JSON, or CSV with our column names); the others are partners' exports. */
export const STATEMENT_FORMATS = [
  'mkoba_json',
  'mpesa_org_statement',
  'momo_transaction_report',
  'flutterwave_settlement',
] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];
export type PartnerStatementFormat = Exclude<StatementFormat, 'mkoba_json'>;

/** The mobile network whose movements each partner format reports (on the `mobile_money` rail), or null. */
export const NETWORK_OF_FORMAT: Record<PartnerStatementFormat, string | null> = {
  mpesa_org_statement: 'mpesa',
  momo_transaction_report: 'mtn',
  flutterwave_settlement: null,
};

/**
 * The one direction a partner's report lists, or null for both: Flutterwave's settlements are the charges
 * it collected (money in); its transfers (payouts) are not in them.
 */
export const DIRECTION_OF_FORMAT: Record<PartnerStatementFormat, StatementDirection | null> = {
  mpesa_org_statement: null,
  momo_transaction_report: null,
  flutterwave_settlement: 'inbound',
};

/**
 * The rails each partner's report covers, all in one file: M-Pesa's organization statement lists its B2C
 * payouts and collections (`mobile_money`) and its B2B payments to paybills and tills alike.
 */
export const RAILS_OF_FORMAT: Record<PartnerStatementFormat, readonly Rail[]> = {
  mpesa_org_statement: ['mobile_money', 'paybill', 'till'],
  momo_transaction_report: ['mobile_money'],
  flutterwave_settlement: ['bank'],
};

/** The M-Pesa organization statement's columns as the org portal names them. */
export const MPESA_STATEMENT_COLUMNS = [
  'Receipt No.',
  'Completion Time',
  'Initiation Time',
  'Details',
  'Transaction Status',
  'Paid In',
  'Withdrawn',
  'Balance',
  'Balance Confirmed',
  'Reason Type',
  'Other Party Info',
  'Linked Transaction ID',
  'A/C No.',
] as const;
const MPESA_REQUIRED = ['Receipt No.', 'Completion Time', 'Transaction Status', 'Paid In', 'Withdrawn'];
/** Safaricom Kenya's statements are in Kenyan shillings, in Nairobi time (UTC+3, no daylight saving). */
export const MPESA_STATEMENT_CURRENCY: Currency = 'KES';
export const MPESA_UTC_OFFSET_MINUTES = 180;

/** The MoMo transaction report's columns as the partner portal names them. */
export const MOMO_REPORT_COLUMNS = [
  'Id',
  'External Transaction Id',
  'Date',
  'Status',
  'Type',
  'From',
  'To',
  'Amount',
  'Currency',
  'Fee',
  'Balance',
] as const;
const MOMO_REQUIRED = ['Id', 'Date', 'Status', 'Amount', 'Currency'];
/** A MoMo report's local time, by the market its currency names (none of these keeps daylight saving). */
export const MOMO_UTC_OFFSET_MINUTES: Partial<Record<Currency, number>> = {
  UGX: 180,
  RWF: 120,
  GHS: 0,
  ZAR: 120,
  // MTN's sandbox reports in euros; its time is read as UTC.
  EUR: 0,
};

/**
 * Flutterwave's settlement, one row per transaction it settled: the fields GET /v3/settlements/{id} gives
 * each of its `transactions`, named as there, with the settlement's own `id` as `settlement_id`.
 */
export const FLUTTERWAVE_SETTLEMENT_COLUMNS = [
  'settlement_id',
  'id',
  'tx_ref',
  'flw_ref',
  'customer_email',
  'charged_amount',
  'app_fee',
  'merchant_fee',
  'stampduty_charge',
  'settlement_amount',
  'status',
  'payment_entity',
  'transaction_date',
  'currency',
] as const;
const FLUTTERWAVE_REQUIRED = ['id', 'charged_amount', 'status', 'transaction_date', 'currency'];
/** The fees Flutterwave takes from a settled charge, each its own field. */
const FLUTTERWAVE_FEE_COLUMNS = ['app_fee', 'merchant_fee', 'stampduty_charge'] as const;
/** The currencies of Flutterwave's settlements read here (its transaction dates are read as UTC days). */
const FLUTTERWAVE_CURRENCIES: ReadonlySet<string> = new Set([
  'NGN',
  'GHS',
  'KES',
  'UGX',
  'TZS',
  'RWF',
  'ZAR',
  'USD',
]);

const MPESA_STATUSES: Record<string, StatementLineStatus> = {
  completed: 'settled',
  attempted: 'failed',
  failed: 'failed',
  cancelled: 'failed',
  declined: 'failed',
  expired: 'failed',
};
const MOMO_STATUSES: Record<string, StatementLineStatus | 'not_final'> = {
  successful: 'settled',
  failed: 'failed',
  rejected: 'failed',
  timeout: 'failed',
  pending: 'not_final',
  ongoing: 'not_final',
};

/** An M-Pesa row as read, before its charges are folded into the movement they were charged on. */
interface MpesaEntry {
  line: StatementLine;
  /** The receipt a charge row names (Linked Transaction ID, else its own Receipt No.), or null. */
  chargeOf: string | null;
}

function mpesaEntry(row: Row): MpesaEntry | undefined {
  const receipt = row.cell('Receipt No.');
  if (receipt === '') row.fault('Receipt No.', 'missing', 'every row has a receipt number');
  const valueDate = utcDayOf(row, 'Completion Time', MPESA_UTC_OFFSET_MINUTES);
  const status = statusOf(row, 'Transaction Status', MPESA_STATUSES);
  const paidIn = amountOf(row, 'Paid In', MPESA_STATEMENT_CURRENCY);
  const withdrawn = amountOf(row, 'Withdrawn', MPESA_STATEMENT_CURRENCY);
  if (!paidIn || !withdrawn || !valueDate || !status || receipt === '') return undefined;
  if ((paidIn.minor === 0n) === (withdrawn.minor === 0n)) {
    row.fault('Paid In', 'invalid_value', 'exactly one of Paid In and Withdrawn holds the amount');
    return undefined;
  }
  const direction: StatementDirection = paidIn.minor > 0n ? 'inbound' : 'outbound';
  const isCharge = /charge/i.test(row.cell('Reason Type'));
  return {
    line: {
      line: row.index + 1,
      railReference: receipt,
      externalReference: null,
      direction,
      amountMinor: direction === 'inbound' ? paidIn.minor : withdrawn.minor,
      currency: MPESA_STATEMENT_CURRENCY,
      valueDate,
      status,
      feesMinor: 0n,
    },
    chargeOf: isCharge ? row.cell('Linked Transaction ID') || receipt : null,
  };
}

/** An M-Pesa organization statement's movements; a charge row becomes the fee of the movement it names. */
export function readMpesaOrgStatement(records: readonly (readonly string[])[]) {
  const faults: StatementFault[] = [];
  const rows = rowsOf(records, MPESA_STATEMENT_COLUMNS, MPESA_REQUIRED, faults);
  const entries = rows.flatMap((row) => mpesaEntry(row) ?? []);
  const movements = new Map(
    entries.filter((e) => e.chargeOf === null).map((e) => [e.line.railReference as string, e.line]),
  );
  const lines: StatementLine[] = [];
  for (const entry of entries) {
    const charged = entry.chargeOf === null ? undefined : movements.get(entry.chargeOf);
    if (charged && entry.line.direction === 'outbound') charged.feesMinor += entry.line.amountMinor;
    else lines.push(entry.line);
  }
  return { lines, faults };
}

function momoLine(row: Row): StatementLine | 'not_final' | undefined {
  const reference = row.cell('Id');
  if (reference === '') row.fault('Id', 'missing', 'every row has the financial transaction id');
  const currency = row.cell('Currency').toUpperCase();
  const offset = MOMO_UTC_OFFSET_MINUTES[currency as Currency];
  const status = statusOf(row, 'Status', MOMO_STATUSES);
  if (status === 'not_final') return status;
  const known = offset !== undefined;
  if (!known) row.fault('Currency', 'invalid_value', `'${currency}' is not a currency MoMo reports here`);
  const valueDate = utcDayOf(row, 'Date', offset ?? 0);
  if (!known || !status || !valueDate || reference === '') return undefined;
  const amount = amountOf(row, 'Amount', currency as Currency);
  const fee = amountOf(row, 'Fee', currency as Currency);
  if (!amount || !fee) return undefined;
  if (amount.minor === 0n) {
    row.fault('Amount', 'not_positive', 'the amount is not zero: negative for money out, positive for in');
    return undefined;
  }
  return {
    line: row.index + 1,
    railReference: reference,
    externalReference: row.cell('External Transaction Id') || null,
    direction: amount.negative ? 'outbound' : 'inbound',
    amountMinor: amount.minor,
    currency: currency as Currency,
    valueDate,
    status,
    feesMinor: fee.minor,
  };
}

/** A MoMo transaction report's movements; one still pending at MTN is not on the statement yet. */
export function readMomoTransactionReport(records: readonly (readonly string[])[]) {
  const faults: StatementFault[] = [];
  const rows = rowsOf(records, MOMO_REPORT_COLUMNS, MOMO_REQUIRED, faults);
  const lines = rows.flatMap((row) => {
    const line = momoLine(row);
    return line === undefined || line === 'not_final' ? [] : [line];
  });
  return { lines, faults };
}

const FLUTTERWAVE_STATUSES: Record<string, StatementLineStatus> = {
  successful: 'settled',
  failed: 'failed',
};

function flutterwaveLine(row: Row): StatementLine | undefined {
  const reference = row.cell('id');
  if (reference === '') row.fault('id', 'missing', 'every row has the transaction id');
  const currency = row.cell('currency').toUpperCase();
  const known = FLUTTERWAVE_CURRENCIES.has(currency);
  if (!known) row.fault('currency', 'invalid_value', `'${currency}' is not a settlement currency read here`);
  const status = statusOf(row, 'status', FLUTTERWAVE_STATUSES);
  const valueDate = utcDayOf(row, 'transaction_date', 0, true);
  if (!known || !status || !valueDate || reference === '') return undefined;
  const amount = amountOf(row, 'charged_amount', currency as Currency);
  const fees = FLUTTERWAVE_FEE_COLUMNS.map((column) => amountOf(row, column, currency as Currency));
  if (!amount || fees.some((fee) => fee === undefined)) return undefined;
  if (amount.minor === 0n || amount.negative) {
    row.fault('charged_amount', 'not_positive', 'a settled charge has a positive amount');
    return undefined;
  }
  return {
    line: row.index + 1,
    railReference: reference,
    externalReference: null,
    direction: 'inbound',
    amountMinor: amount.minor,
    currency: currency as Currency,
    valueDate,
    status,
    feesMinor: fees.reduce((sum, fee) => sum + (fee?.minor ?? 0n), 0n),
  };
}

/** A Flutterwave settlement's transactions: each a charge collected (money in), its fees summed. */
export function readFlutterwaveSettlement(records: readonly (readonly string[])[]) {
  const faults: StatementFault[] = [];
  const rows = rowsOf(records, FLUTTERWAVE_SETTLEMENT_COLUMNS, FLUTTERWAVE_REQUIRED, faults);
  const lines = rows.flatMap((row) => flutterwaveLine(row) ?? []);
  return { lines, faults };
}

export const PARTNER_STATEMENT_READERS: Record<
  PartnerStatementFormat,
  (records: readonly (readonly string[])[]) => { lines: StatementLine[]; faults: StatementFault[] }
> = {
  mpesa_org_statement: readMpesaOrgStatement,
  momo_transaction_report: readMomoTransactionReport,
  flutterwave_settlement: readFlutterwaveSettlement,
};
