/**
 * The partner statement readers and writers as pure functions: every column rule of the M-Pesa
 * organization statement and the MoMo transaction report (statuses, signs, separators, local times to UTC,
 * charges, faults with row and column), and what the sandbox writes read back as it was written.
 */
import { describe, expect, it } from 'vitest';
import {
  readMomoTransactionReport,
  readMpesaOrgStatement,
} from '../src/modules/treasury/domain/partnerStatements.ts';
import { PARTNER_STATEMENT_WRITERS } from '../src/modules/treasury/domain/partnerStatementWriters.ts';
import type { SandboxStatementLine } from '../src/modules/treasury/domain/sandboxStatements.ts';

const MPESA_HEADER = [
  'Receipt No.',
  'Completion Time',
  'Transaction Status',
  'Paid In',
  'Withdrawn',
  'Reason Type',
  'Linked Transaction ID',
];
const mpesa = (...rows: string[][]) => readMpesaOrgStatement([MPESA_HEADER, ...rows]);
const MOMO_HEADER = ['Id', 'External Transaction Id', 'Date', 'Status', 'Amount', 'Currency', 'Fee'];
const momo = (...rows: string[][]) => readMomoTransactionReport([MOMO_HEADER, ...rows]);
const faultsOf = (r: { faults: { row: number; param: string; code: string }[] }) =>
  r.faults.map((f) => [f.row, f.param, f.code]);

/** Rows read after the header, each refused with exactly the fault named beside it (its column, its code). */
function expectEachRefused(
  read: (...rows: string[][]) => ReturnType<typeof readMomoTransactionReport>,
  cases: [row: string[], column: string, code: string][],
) {
  const result = read(...cases.map(([row]) => row));
  expect(result.lines).toEqual([]);
  expect(faultsOf(result)).toEqual(cases.map(([, column, code], i) => [i + 1, `lines.${i}.${column}`, code]));
}

describe('the M-Pesa organization statement', () => {
  it('reads money in and out, in minor units, on the UTC day of a Nairobi time', () => {
    const { lines, faults } = readMpesaOrgStatement([
      ['Organization Name', 'Mkoba'],
      ['receipt no', ' COMPLETION TIME ', 'transaction status', 'paid in', 'withdrawn'],
      ['QA1', '2026-12-06 02:30:00', 'Completed', '1,999.50', ''],
      ['QA2', '2026-12-06T12:00', 'Completed', '', '-1,250.00'],
      ['QA3', '2026-12-06 03:00:00', 'Completed', '', '7.00'],
      ['', '', '', '', ''],
    ]);
    expect(faults).toEqual([]);
    expect(lines.map((l) => [l.line, l.railReference, l.direction, l.amountMinor, l.valueDate])).toEqual([
      [1, 'QA1', 'inbound', 199_950n, '2026-12-05'],
      [2, 'QA2', 'outbound', 125_000n, '2026-12-06'],
      [3, 'QA3', 'outbound', 700n, '2026-12-06'],
    ]);
    expect(lines.every((l) => l.currency === 'KES' && l.externalReference === null)).toBe(true);
  });

  it('reads every status it knows, and refuses any other', () => {
    const statuses = ['Completed', 'Attempted', 'Cancelled', 'Declined', 'Failed', 'Expired', 'Pending'];
    const result = mpesa(...statuses.map((s, i) => [`QS${i}`, '2026-12-06 12:00:00', s, '1.00', '', '', '']));
    expect(result.lines.map((l) => l.status)).toEqual([
      'settled',
      'failed',
      'failed',
      'failed',
      'failed',
      'failed',
    ]);
    expect(faultsOf(result)).toEqual([[7, 'lines.6.Transaction Status', 'invalid_value']]);
  });

  it('folds a charge into the fee of the movement it names; a charge naming nothing is a line', () => {
    /** A completed withdrawal at noon: its receipt, amount, reason and linked receipt. */
    const withdrawal = (receipt: string, amount: string, reason: string, linked = '') => [
      receipt,
      '2026-12-06 12:00:00',
      'Completed',
      '',
      amount,
      reason,
      linked,
    ];
    const { lines, faults } = mpesa(
      withdrawal('QC1', '-100.00', 'Business Payment'),
      withdrawal('QC9', '-0.50', 'Business Payment Charge', 'QC1'),
      withdrawal('QC2', '-50.00', 'Business Payment'),
      withdrawal('QC2', '-0.25', 'B2C Payment Charge'),
      withdrawal('QC7', '-0.75', 'Business Payment Charge', 'QCX'),
    );
    expect(faults).toEqual([]);
    expect(lines.map((l) => [l.railReference, l.amountMinor, l.feesMinor])).toEqual([
      ['QC1', 10_000n, 50n],
      ['QC2', 5_000n, 25n],
      ['QC7', 75n, 0n],
    ]);
  });

  it('names the row and column of every fault', () => {
    const at = '2026-12-06 12:00:00';
    expectEachRefused(mpesa, [
      [['', at, 'Completed', '1.00', ''], 'Receipt No.', 'missing'],
      [['QF2', '2026-02-30 12:00:00', 'Completed', '1.00', ''], 'Completion Time', 'invalid_format'],
      [['QF3', '06-12-2026 12:00', 'Completed', '1.00', ''], 'Completion Time', 'invalid_format'],
      [['QF4', at, 'Completed', '1.005', ''], 'Paid In', 'too_precise'],
      [['QF5', at, 'Completed', '1.00', '-1.00'], 'Paid In', 'invalid_value'],
      [['QF6', at, 'Completed', '', ''], 'Paid In', 'invalid_value'],
      [['QF7', at, 'Completed', '1,00.00', ''], 'Paid In', 'invalid_format'],
    ]);
    const header = readMpesaOrgStatement([['Receipt No.', 'Completion Time', 'Paid In']]);
    expect(faultsOf(header)).toEqual([
      [0, 'header.Transaction Status', 'missing'],
      [0, 'header.Withdrawn', 'missing'],
    ]);
    expect(faultsOf(readMpesaOrgStatement([['Date', 'Amount']]))[0]).toEqual([
      0,
      'header.Receipt No.',
      'missing',
    ]);
  });
});

describe('the MoMo transaction report', () => {
  it('reads the sign as the direction, our echoed id, the fee, and the market time', () => {
    const { lines, faults } = momo(
      ['9001', 'tr_1', '2026-12-06 02:00:00', 'SUCCESSFUL', '-15,000', 'UGX', '250'],
      ['9002', '', '2026-12-06 02:00:00', 'SUCCESSFUL', '12.50', 'GHS', ''],
      ['9003', 'col_1', '2026-12-06T01:00:00+03:00', 'SUCCESSFUL', '7000', 'RWF', '0'],
      ['9004', '', '2026-12-06 01:00:00', 'SUCCESSFUL', '-3', 'EUR', ''],
      ['9005', '', '2026-12-06 01:30:00', 'SUCCESSFUL', '100', 'ZAR', ''],
    );
    expect(faults).toEqual([]);
    expect(
      lines.map((l) => [
        l.railReference,
        l.externalReference,
        l.direction,
        l.amountMinor,
        l.feesMinor,
        l.valueDate,
      ]),
    ).toEqual([
      ['9001', 'tr_1', 'outbound', 15_000n, 250n, '2026-12-05'],
      ['9002', null, 'inbound', 1_250n, 0n, '2026-12-06'],
      ['9003', 'col_1', 'inbound', 7_000n, 0n, '2026-12-05'],
      ['9004', null, 'outbound', 300n, 0n, '2026-12-06'],
      ['9005', null, 'inbound', 10_000n, 0n, '2026-12-05'],
    ]);
  });

  it('reads every status it knows, leaves out what is not final, and refuses any other', () => {
    const statuses = ['SUCCESSFUL', 'FAILED', 'REJECTED', 'TIMEOUT', 'PENDING', 'ONGOING', 'CREATED'];
    const result = momo(...statuses.map((s, i) => [`90${i}`, '', '2026-12-06 12:00:00', s, '-1', 'UGX', '']));
    expect(result.lines.map((l) => [l.railReference, l.status])).toEqual([
      ['900', 'settled'],
      ['901', 'failed'],
      ['902', 'failed'],
      ['903', 'failed'],
    ]);
    expect(faultsOf(result)).toEqual([[7, 'lines.6.Status', 'invalid_value']]);
  });

  it('names the row and column of every fault', () => {
    const at = '2026-12-06 12:00:00';
    expectEachRefused(momo, [
      [['', '', at, 'SUCCESSFUL', '-1', 'UGX', ''], 'Id', 'missing'],
      [['9102', '', at, 'SUCCESSFUL', '-1', 'KES', ''], 'Currency', 'invalid_value'],
      [['9103', '', '2026-13-06 12:00:00', 'SUCCESSFUL', '-1', 'UGX', ''], 'Date', 'invalid_format'],
      [['9104', '', at, 'SUCCESSFUL', '0', 'UGX', ''], 'Amount', 'not_positive'],
      [['9105', '', at, 'SUCCESSFUL', '-1', 'UGX', 'x'], 'Fee', 'invalid_format'],
    ]);
  });
});

describe('what the sandbox writes', () => {
  const lines: SandboxStatementLine[] = [
    {
      rail_reference: 'sim_tr_1',
      direction: 'outbound',
      external_reference: 'tr_1',
      amount: '1250.00',
      currency: 'KES',
      value_date: '2026-12-06',
      status: 'settled',
      fees: '1.00',
    },
    {
      rail_reference: null,
      direction: 'inbound',
      external_reference: null,
      amount: '25.00',
      currency: 'KES',
      value_date: '2026-12-06',
      status: 'failed',
      fees: '0.00',
    },
  ];

  it('is read back as written, in either partner format', () => {
    const fromMpesa = readMpesaOrgStatement(PARTNER_STATEMENT_WRITERS.mpesa_org_statement(lines));
    expect(fromMpesa.faults).toEqual([]);
    expect(
      fromMpesa.lines.map((l) => [l.railReference, l.direction, l.amountMinor, l.feesMinor, l.status]),
    ).toEqual([
      ['sim_tr_1', 'outbound', 125_000n, 100n, 'settled'],
      ['SIMNOREF2', 'inbound', 2_500n, 0n, 'failed'],
    ]);
    const ugx = lines.map((l) => ({
      ...l,
      currency: 'UGX',
      amount: '1250',
      fees: l.fees === '0.00' ? '0' : '1',
    }));
    const fromMomo = readMomoTransactionReport(PARTNER_STATEMENT_WRITERS.momo_transaction_report(ugx));
    expect(fromMomo.faults).toEqual([]);
    expect(
      fromMomo.lines.map((l) => [
        l.railReference,
        l.externalReference,
        l.direction,
        l.amountMinor,
        l.valueDate,
      ]),
    ).toEqual([
      ['sim_tr_1', 'tr_1', 'outbound', 1_250n, '2026-12-06'],
      ['simnoref_2', null, 'inbound', 1_250n, '2026-12-06'],
    ]);
  });
});
