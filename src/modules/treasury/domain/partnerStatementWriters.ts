/**
 * The sandbox's statements written in the partners' own export formats, pure: each line of a sandbox
 * statement (sandboxStatements.ts) as a row of the M-Pesa organization statement, of the MoMo transaction
 * report or of a Flutterwave settlement, with the columns, signs, statuses and local times the readers (partnerStatements.ts) take, so what
 * the sandbox produces is what a partner's portal would let an operator download.
 */
import type { Currency } from '../../../domain/money.ts';
import {
  FLUTTERWAVE_SETTLEMENT_COLUMNS,
  MOMO_REPORT_COLUMNS,
  MOMO_UTC_OFFSET_MINUTES,
  MPESA_STATEMENT_COLUMNS,
  MPESA_UTC_OFFSET_MINUTES,
  type PartnerStatementFormat,
} from './partnerStatements.ts';
import type { SandboxStatementLine } from './sandboxStatements.ts';

/** The hour (UTC) a sandbox movement is written at on its value date: the same date in every partner's zone. */
const SANDBOX_MOVEMENT_HOUR_UTC = 9;

/** `YYYY-MM-DD HH:mm:ss` in a zone `offsetMinutes` from UTC, of the sandbox's hour on a UTC day. */
function localTime(day: string, offsetMinutes: number): string {
  const at = Date.parse(`${day}T00:00:00Z`) + (SANDBOX_MOVEMENT_HOUR_UTC * 60 + offsetMinutes) * 60_000;
  return new Date(at).toISOString().slice(0, 19).replace('T', ' ');
}

/** A decimal string with thousands separators, as the portals print money. */
function withThousands(amount: string): string {
  const [whole = '0', fraction] = amount.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

const isZero = (amount: string) => /^0+(\.0+)?$/.test(amount);

/** A row in `columns`' order from the cells named. */
function rowOf(columns: readonly string[], cells: Record<string, string>): string[] {
  return columns.map((c) => cells[c] ?? '');
}

/** Safaricom's org portal export: money in under Paid In, out under Withdrawn (negative), a charge a row of its own. */
function mpesaRecords(lines: readonly SandboxStatementLine[]): string[][] {
  const records: string[][] = [[...MPESA_STATEMENT_COLUMNS]];
  lines.forEach((l, i) => {
    const receipt = l.rail_reference ?? `SIMNOREF${i + 1}`;
    const time = localTime(l.value_date, MPESA_UTC_OFFSET_MINUTES);
    const inbound = l.direction === 'inbound';
    const common = {
      'Completion Time': time,
      'Initiation Time': time,
      'Transaction Status': l.status === 'settled' ? 'Completed' : 'Failed',
    };
    records.push(
      rowOf(MPESA_STATEMENT_COLUMNS, {
        ...common,
        'Receipt No.': receipt,
        Details: inbound ? 'Customer Payment' : 'Business Payment',
        'Paid In': inbound ? withThousands(l.amount) : '',
        Withdrawn: inbound ? '' : `-${withThousands(l.amount)}`,
        'Reason Type': inbound ? 'Customer Payment' : 'Business Payment',
        'A/C No.': inbound ? (l.external_reference ?? '') : '',
      }),
    );
    if (isZero(l.fees)) return;
    records.push(
      rowOf(MPESA_STATEMENT_COLUMNS, {
        ...common,
        'Receipt No.': receipt,
        Details: 'Business Payment Charge',
        Withdrawn: `-${withThousands(l.fees)}`,
        'Reason Type': 'Business Payment Charge',
        'Linked Transaction ID': receipt,
      }),
    );
  });
  return records;
}

/** MTN's partner portal export: money out a negative Amount, the fee its own column, our id as External. */
function momoRecords(lines: readonly SandboxStatementLine[]): string[][] {
  const records: string[][] = [[...MOMO_REPORT_COLUMNS]];
  lines.forEach((l, i) => {
    const inbound = l.direction === 'inbound';
    records.push(
      rowOf(MOMO_REPORT_COLUMNS, {
        Id: l.rail_reference ?? `simnoref_${i + 1}`,
        'External Transaction Id': l.external_reference ?? '',
        Date: localTime(l.value_date, MOMO_UTC_OFFSET_MINUTES[l.currency as Currency] ?? 0),
        Status: l.status === 'settled' ? 'SUCCESSFUL' : 'FAILED',
        Type: inbound ? 'REQUEST_TO_PAY' : 'TRANSFER',
        Amount: inbound ? l.amount : `-${l.amount}`,
        Currency: l.currency,
        Fee: l.fees,
      }),
    );
  });
  return records;
}

/** Flutterwave's settlement: one row per charge settled (money in), its fee as `app_fee`, the day alone. */
function flutterwaveRecords(lines: readonly SandboxStatementLine[]): string[][] {
  const records: string[][] = [[...FLUTTERWAVE_SETTLEMENT_COLUMNS]];
  lines.forEach((l, i) => {
    records.push(
      rowOf(FLUTTERWAVE_SETTLEMENT_COLUMNS, {
        settlement_id: 'SIMULATED',
        id: l.rail_reference ?? `${i + 1}`,
        tx_ref: l.external_reference ?? '',
        charged_amount: l.amount,
        app_fee: l.fees,
        merchant_fee: '0',
        stampduty_charge: '0',
        status: l.status === 'settled' ? 'successful' : 'failed',
        payment_entity: 'bank_transfer',
        transaction_date: l.value_date,
        currency: l.currency,
      }),
    );
  });
  return records;
}

export const PARTNER_STATEMENT_WRITERS: Record<
  PartnerStatementFormat,
  (lines: readonly SandboxStatementLine[]) => string[][]
> = {
  mpesa_org_statement: mpesaRecords,
  momo_transaction_report: momoRecords,
  flutterwave_settlement: flutterwaveRecords,
};
