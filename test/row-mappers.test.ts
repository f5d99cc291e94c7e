/**
 * The row mappers repositories build from a description of their record (src/store/repositories/rowMappers.ts):
 * each field read from the column named after it unless it says otherwise, in the order described.
 */
import { describe, expect, it } from 'vitest';
import { column, computed, rowMapper, stored, text } from '../src/store/repositories/rowMappers.ts';
import {
  feeDecisionFromRow,
  nullableDate,
  nullableText,
  toBigInt,
  toDate,
} from '../src/store/repositories/rows.ts';

interface Sample {
  id: string;
  organizationId: string;
  amountMinor: bigint;
  contentSha256: string;
  status: 'open' | 'closed';
  currency: 'KES' | 'UGX';
  date: string;
  note: string | null;
  settledAt: Date | null;
  createdAt: Date;
  both: string;
}

const sampleFromRow = rowMapper<Sample>({
  id: String,
  organizationId: String,
  amountMinor: toBigInt,
  contentSha256: String,
  status: stored,
  currency: text,
  date: column('balance_date', String),
  note: nullableText,
  settledAt: nullableDate,
  createdAt: toDate,
  both: computed((row) => `${String(row.id)}/${String(row.status)}`),
});

const row = {
  id: 'x_1',
  organization_id: 'org_1',
  amount_minor: '1500',
  content_sha256: 'abc',
  status: 'open',
  currency: 'KES',
  balance_date: '2026-01-31',
  note: null,
  settled_at: null,
  created_at: '2026-02-01T00:00:00.000Z',
};

describe('rowMapper', () => {
  it('reads each field from its snake_case column, or the column or row it names, with its converter', () => {
    expect(sampleFromRow(row)).toEqual({
      id: 'x_1',
      organizationId: 'org_1',
      amountMinor: 1500n,
      contentSha256: 'abc',
      status: 'open',
      currency: 'KES',
      date: '2026-01-31',
      note: null,
      settledAt: null,
      createdAt: new Date('2026-02-01T00:00:00.000Z'),
      both: 'x_1/open',
    });
  });

  it('builds the record with its fields in the order described', () => {
    expect(Object.keys(sampleFromRow(row))).toEqual([
      'id',
      'organizationId',
      'amountMinor',
      'contentSha256',
      'status',
      'currency',
      'date',
      'note',
      'settledAt',
      'createdAt',
      'both',
    ]);
  });

  it('reads a fee decision only where a schedule version is stored', () => {
    expect(feeDecisionFromRow({ fee_schedule_version: null })).toBeNull();
    expect(feeDecisionFromRow({ fee_minor: '25', fee_schedule_version: 3, fee_rule: null })).toEqual({
      feeMinor: 25n,
      scheduleVersion: 3,
      rule: null,
    });
  });
});
