/**
 * Evidence's rows: appended under the organization's chain head (locked), listed per organization or per
 * subject, and the organizations with a chain, for `mkoba evidence verify`.
 */
import type {
  ChainHead,
  EvidenceActor,
  EvidenceKind,
  EvidenceRecord,
  StoredEvidence,
} from '../../domain/evidence.ts';
import { EVIDENCE_GENESIS_HASH } from '../../domain/evidence.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { lockingStage } from '../lockOrder.ts';
import type { Queryable } from '../store.ts';
import { lockedCounterRows } from './counterRows.ts';
import { organizationRecordFinder, recordFinderBy, rowTable } from './records.ts';
import { columnRows, stored } from './rowMappers.ts';
import { createdAtConditions, int8AsNumber, type KeysetFilter, nullableText, toDate } from './rows.ts';

const { columns: COLUMNS, fromRow: storedFromRow } = columnRows<StoredEvidence>({
  id: String,
  organizationId: String,
  sequence: int8AsNumber,
  kind: stored,
  transferId: nullableText,
  customerId: nullableText,
  walletId: nullableText,
  createdAt: toDate,
  previousHash: String,
  payload: String,
  hash: String,
});

/** Each organization's chain head: one row, its last record's sequence and hash. */
const CHAIN_HEADS = rowTable<ChainHead>('evidence_chain_heads', { sequence: int8AsNumber, hash: String });

/** A record with its actor and data read back from the payload that was hashed. */
export function evidenceFromRow(row: Record<string, unknown>): EvidenceRecord {
  const stored = storedFromRow(row);
  const parsed = JSON.parse(stored.payload) as {
    actor: string;
    actor_member?: string;
    data: EvidenceRecord['data'];
  };
  const actor: EvidenceActor =
    parsed.actor === 'system'
      ? { type: 'system' }
      : parsed.actor.startsWith(`${ID_PREFIXES.consoleSession}_`) && parsed.actor_member !== undefined
        ? { type: 'console_session', id: parsed.actor, member: parsed.actor_member }
        : {
            type: 'api_key',
            id: parsed.actor,
            ...(parsed.actor_member === undefined ? {} : { member: parsed.actor_member }),
          };
  return { ...stored, actor, data: parsed.data };
}

/**
 * Takes the organization's chain head for the rest of the transaction (creating it at genesis), so that
 * appends to one chain queue one behind the other (`lockedCounterRows`).
 */
export async function lockChainHead(db: Queryable, organizationId: string): Promise<ChainHead> {
  lockingStage(db, 'evidence_chain');
  const [row] = await lockedCounterRows(
    db,
    `INSERT INTO evidence_chain_heads (organization_id, sequence, hash) VALUES ($1, 0, $2)
     ON CONFLICT (organization_id) DO UPDATE SET organization_id = excluded.organization_id WHERE false`,
    `SELECT ${CHAIN_HEADS.columns} FROM evidence_chain_heads WHERE organization_id = $1`,
    [organizationId, EVIDENCE_GENESIS_HASH],
    [organizationId],
  );
  if (!row) throw new Error('the evidence chain head was not returned');
  return CHAIN_HEADS.fromRow(row);
}

/** Several organizations' heads, locked in the order given (callers sort the ids, so locks never cross). */
export async function lockChainHeads(
  db: Queryable,
  organizationIds: readonly string[],
): Promise<Map<string, ChainHead>> {
  const heads = await Promise.all(organizationIds.map((id) => lockChainHead(db, id)));
  return new Map(organizationIds.map((id, i) => [id, heads[i] as ChainHead]));
}

/**
 * Inserts a chained run of one organization's records and moves its head to the last of them. The payloads
 * travel as one JSON array of strings (`json_array_elements_text` gives each back to the letter, as the hash
 * needs), not as elements of a text array, whose literal would escape every quote of every payload again.
 */
export async function insertEvidence(db: Queryable, records: readonly EvidenceRecord[]): Promise<void> {
  const last = records.at(-1);
  if (!last) return;
  const column = <T>(pick: (r: EvidenceRecord) => T) => records.map(pick);
  await db.query(
    `INSERT INTO evidence_records (${COLUMNS})
     SELECT * FROM ROWS FROM (unnest($1::text[]), unnest($2::text[]), unnest($3::bigint[]), unnest($4::text[]),
                              unnest($5::text[]), unnest($6::text[]), unnest($7::text[]),
                              unnest($8::timestamptz[]), unnest($9::text[]), json_array_elements_text($10::json),
                              unnest($11::text[]))`,
    [
      column((r) => r.id),
      column((r) => r.organizationId),
      column((r) => String(r.sequence)),
      column((r) => r.kind),
      column((r) => r.transferId),
      column((r) => r.customerId),
      column((r) => r.walletId),
      column((r) => r.createdAt.toISOString()),
      column((r) => r.previousHash),
      JSON.stringify(column((r) => r.payload)),
      column((r) => r.hash),
    ],
  );
  await db.query('UPDATE evidence_chain_heads SET sequence = $2, hash = $3 WHERE organization_id = $1', [
    last.organizationId,
    String(last.sequence),
    last.hash,
  ]);
}

export type EvidenceSubject = 'transfer' | 'customer' | 'wallet';

/** The organization's records, newest first, optionally of one kind. */
export async function listOrganizationEvidence(
  db: Queryable,
  organizationId: string,
  filter: KeysetFilter & { kind?: EvidenceKind | undefined },
  rowsMax: number,
): Promise<EvidenceRecord[]> {
  const params: unknown[] = [organizationId];
  const conditions = ['organization_id = $1'];
  if (filter.kind !== undefined) {
    params.push(filter.kind);
    conditions.push(`kind = $${params.length}`);
  }
  return pageOfEvidence(db, params, conditions, filter, rowsMax);
}

async function pageOfEvidence(
  db: Queryable,
  params: unknown[],
  conditions: string[],
  filter: KeysetFilter,
  rowsMax: number,
): Promise<EvidenceRecord[]> {
  if (filter.startingAfter !== undefined) {
    params.push(filter.startingAfter);
    conditions.push(
      `sequence < (SELECT sequence FROM evidence_records WHERE organization_id = $1 AND id = $${params.length})`,
    );
  }
  conditions.push(...createdAtConditions(filter, params));
  params.push(rowsMax);
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM evidence_records WHERE ${conditions.join(' AND ')}
      ORDER BY sequence DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(evidenceFromRow);
}

const SUBJECT_COLUMN: Record<EvidenceSubject, string> = {
  transfer: 'transfer_id',
  customer: 'customer_id',
  wallet: 'wallet_id',
};

/** A resource's records, newest first (by place in the chain), a page at a time. */
export async function listEvidenceOf(
  db: Queryable,
  organizationId: string,
  subject: EvidenceSubject,
  subjectId: string,
  filter: KeysetFilter,
  rowsMax: number,
): Promise<EvidenceRecord[]> {
  const column = SUBJECT_COLUMN[subject];
  return pageOfEvidence(
    db,
    [organizationId, subjectId],
    ['organization_id = $1', `${column} = $2`],
    filter,
    rowsMax,
  );
}

/** Organizations that have a chain (a head or any record), in id order. */
export async function listChainOrganizations(db: Queryable): Promise<string[]> {
  const rows = await db.query(
    `SELECT organization_id FROM evidence_chain_heads
     UNION SELECT DISTINCT organization_id FROM evidence_records ORDER BY organization_id`,
  );
  return rows.map((r) => String(r.organization_id));
}

/** The chain's stored head: what its last record should be. */
export const findChainHead = recordFinderBy(CHAIN_HEADS, 'organization_id');

/** One organization's records after a place in its chain, in chain order, for verification. */
export async function readChain(
  db: Queryable,
  organizationId: string,
  afterSequence: number,
  rowsMax: number,
): Promise<StoredEvidence[]> {
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM evidence_records WHERE organization_id = $1 AND sequence > $2
      ORDER BY sequence LIMIT $3`,
    [organizationId, String(afterSequence), rowsMax],
  );
  return rows.map(storedFromRow);
}

/** One record by id, in the organization's chain. */
export const findEvidenceRecord = organizationRecordFinder({
  name: 'evidence_records',
  columns: COLUMNS,
  fromRow: evidenceFromRow,
});

/** The columns an evidence record is read with (for readers outside this file, such as exports). */
export const EVIDENCE_COLUMNS = COLUMNS;
