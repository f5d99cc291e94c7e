/**
 * The statement matcher as a pure function: by reference, then by amount and date within the named
 * tolerances, then one line covering several transfers; one-to-one; every difference a finding.
 */
import { describe, expect, it } from 'vitest';
import {
  type MatchCandidate,
  matchStatement,
  RECONCILIATION_DATE_TOLERANCE_DAYS,
  RECONCILIATION_GROUP_TRANSFERS_MAX,
  type StatementLine,
} from '../src/modules/treasury/domain/reconciliation.ts';

const DAY = '2026-11-20';
const dayPlus = (n: number) =>
  new Date(Date.parse(`${DAY}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

let lineNumber = 0;
function line(fields: Partial<StatementLine>): StatementLine {
  lineNumber += 1;
  return {
    line: lineNumber,
    railReference: null,
    externalReference: null,
    direction: 'outbound',
    amountMinor: 1_000n,
    currency: 'KES',
    valueDate: DAY,
    status: 'settled',
    feesMinor: 0n,
    ...fields,
  };
}

function transfer(id: string, fields: Partial<MatchCandidate> = {}): MatchCandidate {
  return {
    id,
    railReference: `ref_${id}`,
    partnerReceipt: null,
    direction: 'outbound',
    collectionId: null,
    amountMinor: 1_000n,
    currency: 'KES',
    status: 'settled',
    day: DAY,
    ...fields,
  };
}

const kinds = (findings: { kind: string }[]) => findings.map((f) => f.kind);

describe('matchStatement', () => {
  it('pairs by the rail reference first, even when another transfer has the same amount and date', () => {
    const [result] = matchStatement(
      [line({ railReference: 'ref_b' })],
      [transfer('a', { railReference: null }), transfer('b')],
    );
    expect(result).toMatchObject({ transferIds: ['b'], findings: [{ kind: 'matched' }] });
  });

  it('pairs by the partner receipt a line whose reference is the receipt (an M-Pesa statement), not the request id', () => {
    const [result] = matchStatement(
      [line({ railReference: 'SKC82PACB8' })],
      [transfer('a'), transfer('b', { railReference: 'AG_20261206_0001', partnerReceipt: 'SKC82PACB8' })],
    );
    expect(result).toMatchObject({ transferIds: ['b'], findings: [{ kind: 'matched' }] });
  });

  it('pairs a line without a reference by currency, exact amount and the nearest day within the tolerance', () => {
    const candidates = [
      transfer('far', { railReference: null, day: dayPlus(2) }),
      transfer('near', { railReference: null, day: dayPlus(1) }),
      transfer('usd', { railReference: null, currency: 'USD' }),
      transfer('more', { railReference: null, amountMinor: 1_001n }),
    ];
    const [result] = matchStatement([line({})], candidates);
    expect(result?.transferIds).toEqual(['near']);
    const [outside] = matchStatement(
      [line({})],
      [transfer('late', { railReference: null, day: dayPlus(RECONCILIATION_DATE_TOLERANCE_DAYS + 1) })],
    );
    expect(outside).toMatchObject({ transferIds: [], findings: [{ kind: 'unmatched_line' }] });
  });

  it('pairs each transfer with one line at most: a repeated line is unmatched', () => {
    const results = matchStatement(
      [line({ railReference: 'ref_a' }), line({ railReference: 'ref_a' })],
      [transfer('a')],
    );
    expect(results.map((r) => r.transferIds)).toEqual([['a'], []]);
    expect(kinds(results[1]?.findings ?? [])).toEqual(['unmatched_line']);
  });

  it('matches a line covering several transfers whose amounts sum to it, up to the group bound', () => {
    const candidates = [
      transfer('x', { railReference: null, amountMinor: 700n }),
      transfer('y', { railReference: null, amountMinor: 500n }),
      transfer('z', { railReference: null, amountMinor: 300n }),
    ];
    const [result] = matchStatement([line({ amountMinor: 1_000n })], candidates);
    expect(result?.transferIds.sort()).toEqual(['x', 'z']);
    expect(kinds(result?.findings ?? [])).toEqual(['matched']);
    const many = Array.from({ length: RECONCILIATION_GROUP_TRANSFERS_MAX + 1 }, (_, i) =>
      transfer(`t${i}`, { railReference: null, amountMinor: 100n }),
    );
    const [tooMany] = matchStatement(
      [line({ amountMinor: BigInt(100 * (RECONCILIATION_GROUP_TRANSFERS_MAX + 1)) })],
      many,
    );
    expect(tooMany?.transferIds).toEqual([]);
  });

  it('reports each difference of a paired line: amount, fee and status', () => {
    const [amount] = matchStatement([line({ railReference: 'ref_a', amountMinor: 1_001n })], [transfer('a')]);
    expect(amount?.findings).toEqual([
      {
        kind: 'amount_mismatch',
        details: { statement_amount_minor: '1001', ledger_amount_minor: '1000' },
      },
    ]);
    const [fee] = matchStatement([line({ railReference: 'ref_a', feesMinor: 25n })], [transfer('a')]);
    expect(fee?.findings).toEqual([{ kind: 'fee_mismatch', details: { fees_minor: '25' } }]);
    const [failedSettled] = matchStatement(
      [line({ railReference: 'ref_a', status: 'failed' })],
      [transfer('a')],
    );
    expect(kinds(failedSettled?.findings ?? [])).toEqual(['status_mismatch']);
    const [settledFailed] = matchStatement(
      [line({ railReference: 'ref_a' })],
      [transfer('a', { status: 'failed' })],
    );
    expect(kinds(settledFailed?.findings ?? [])).toEqual(['status_mismatch']);
  });

  it('a processing transfer agrees with either status: the statement decides it', () => {
    for (const status of ['settled', 'failed'] as const) {
      const [result] = matchStatement(
        [line({ railReference: 'ref_p', status })],
        [transfer('p', { status: 'processing' })],
      );
      expect(kinds(result?.findings ?? [])).toEqual(['matched']);
    }
  });
});
