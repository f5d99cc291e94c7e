/**
 * The row mappers repositories build from a description of their record (src/store/repositories/rowMappers.ts):
 * each field read from the column named after it unless it says otherwise, in the order described.
 */
import { describe, expect, it } from 'vitest';
import { ID_PREFIXES } from '../src/domain/ids.ts';
import {
  columnFinderBy,
  newestFirstListerBy,
  recordFinderBy,
  recordTable,
  rowTable,
} from '../src/store/repositories/records.ts';
import {
  type ColumnFields,
  column,
  columnRows,
  computed,
  computedFrom,
  rowMapper,
  stored,
  text,
} from '../src/store/repositories/rowMappers.ts';
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

/** The sample's fields that are each read from one column. */
const SAMPLE_COLUMN_FIELDS = {
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
} satisfies ColumnFields<Omit<Sample, 'both'>>;

const sampleFromRow = rowMapper<Sample>({
  ...SAMPLE_COLUMN_FIELDS,
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

describe('columnRows', () => {
  const { columns, fromRow } = columnRows<Omit<Sample, 'both'>>(SAMPLE_COLUMN_FIELDS);

  it('lists the columns its fields are read from, in their order, as a SELECT list', () => {
    expect(columns).toBe(
      'id, organization_id, amount_minor, content_sha256, status, currency, balance_date, note, settled_at, created_at',
    );
  });

  it('maps the row that list returns as rowMapper does', () => {
    const { both: _, ...withoutBoth } = sampleFromRow(row);
    expect(fromRow(row)).toEqual(withoutBoth);
  });

  it('gives a record table its columns and mapper from the one description', () => {
    const table = recordTable<{ id: string; walletId: string }>('members', ID_PREFIXES.member, {
      id: String,
      walletId: String,
    });
    expect(table).toMatchObject({ name: 'members', prefix: ID_PREFIXES.member, columns: 'id, wallet_id' });
    expect(table.fromRow({ id: 'mem_1', wallet_id: 'wal_1' })).toEqual({ id: 'mem_1', walletId: 'wal_1' });
  });

  it('lists the columns a computed field names, in its place', () => {
    const { columns, fromRow } = columnRows<{ id: string; both: string; note: string | null }>({
      id: String,
      both: computedFrom(['status', 'currency'], (r) => `${String(r.status)}/${String(r.currency)}`),
      note: nullableText,
    });
    expect(columns).toBe('id, status, currency, note');
    expect(fromRow(row)).toEqual({ id: 'x_1', both: 'open/KES', note: null });
  });
});

describe('newestFirstListerBy', () => {
  it('narrows by its key columns, in the order the keys are given, then its fixed conditions', async () => {
    const table = recordTable<{ id: string }>('members', ID_PREFIXES.member, { id: String });
    const list = newestFirstListerBy(table, ['organization_id', 'wallet_id'], ['deleted_at IS NULL']);
    const queries: { sql: string; params: unknown[] }[] = [];
    const db = {
      query: async (sql: string, params: unknown[] = []) => {
        queries.push({ sql, params });
        return [{ id: 'mem_1' }];
      },
    };
    const rows = await list(db as never, 'org_1', 'wal_1', { startingAfter: 'mem_9' }, 10);
    expect(rows).toEqual([{ id: 'mem_1' }]);
    expect(queries).toEqual([
      {
        sql: 'SELECT id FROM members WHERE organization_id = $1 AND wallet_id = $2 AND deleted_at IS NULL AND id < $3 ORDER BY id DESC LIMIT $4',
        params: ['org_1', 'wal_1', 'mem_9', 10],
      },
    ]);
  });
});

describe('columnFinderBy', () => {
  const findMark = columnFinderBy('custody_deposit_marks', 'read_after', toDate, 'config_id');
  const answering = (rows: Record<string, unknown>[], queries: unknown[][]) => ({
    query: async (sql: string, params: unknown[] = []) => {
      queries.push([sql, params]);
      return rows;
    },
  });

  it('reads the one column of the row its keys find, converted', async () => {
    const queries: unknown[][] = [];
    const db = answering([{ read_after: '2026-02-01T00:00:00.000Z' }], queries);
    expect(await findMark(db as never, 'cfg_1')).toEqual(new Date('2026-02-01T00:00:00.000Z'));
    expect(queries).toEqual([
      ['SELECT read_after FROM custody_deposit_marks WHERE config_id = $1', ['cfg_1']],
    ]);
  });

  it('answers undefined for no row and for a null value', async () => {
    expect(await findMark(answering([], []) as never, 'cfg_1')).toBeUndefined();
    expect(await findMark(answering([{ read_after: null }], []) as never, 'cfg_1')).toBeUndefined();
  });
});

describe('recordFinderBy', () => {
  it('locks the row it finds when the options after the keys ask for it', async () => {
    const find = recordFinderBy(
      rowTable<{ organizationId: string }>('settings', { organizationId: String }),
      'organization_id',
    );
    const queries: unknown[][] = [];
    const db = {
      query: async (sql: string, params: unknown[] = []) => {
        queries.push([sql, params]);
        return [{ organization_id: 'org_1' }];
      },
    };
    expect(await find(db as never, 'org_1')).toEqual({ organizationId: 'org_1' });
    await find(db as never, 'org_1', { forUpdate: true });
    expect(queries).toEqual([
      ['SELECT organization_id FROM settings WHERE organization_id = $1', ['org_1']],
      ['SELECT organization_id FROM settings WHERE organization_id = $1 FOR UPDATE', ['org_1']],
    ]);
  });
});
