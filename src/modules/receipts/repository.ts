/**
 * Receipts' rows: issued once per transfer, found by their public code; and the transfer's final entry they
 * name.
 */
import { rowMapper } from '../../store/repositories/rowMappers.ts';
import { toDate } from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';

export interface ReceiptRow {
  code: string;
  organizationId: string;
  transferId: string;
  entryId: string;
  issuedAt: Date;
}

const fromRow = rowMapper<ReceiptRow>({
  code: String,
  organizationId: String,
  transferId: String,
  entryId: String,
  issuedAt: toDate,
});

/** Issues a receipt, or returns the one the transfer already has (one per transfer, whoever asks first). */
export async function issueReceiptRow(db: Queryable, receipt: ReceiptRow): Promise<ReceiptRow> {
  await db.query(
    `INSERT INTO receipts (code, organization_id, transfer_id, entry_id, issued_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (transfer_id) DO NOTHING`,
    [receipt.code, receipt.organizationId, receipt.transferId, receipt.entryId, receipt.issuedAt],
  );
  const [row] = await db.query('SELECT * FROM receipts WHERE transfer_id = $1', [receipt.transferId]);
  if (!row) throw new Error(`receipt of ${receipt.transferId} neither inserted nor found`);
  return fromRow(row);
}

export async function findReceiptByCode(db: Queryable, code: string): Promise<ReceiptRow | undefined> {
  const [row] = await db.query('SELECT * FROM receipts WHERE code = $1', [code]);
  return row && fromRow(row);
}

/** The entry that made a transfer final: the post of its hold, or its direct entry. */
export async function findFinalEntryId(db: Queryable, transferId: string): Promise<string | undefined> {
  const [row] = await db.query(
    `SELECT id FROM journal_entries WHERE transfer_id = $1 AND kind IN ('post', 'direct') ORDER BY id LIMIT 1`,
    [transferId],
  );
  return row ? String(row.id) : undefined;
}
