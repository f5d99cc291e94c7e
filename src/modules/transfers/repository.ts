/**
 * Transfers' rows: inserted one at a time or in a batch, saved as they move, found by id or rail reference,
 * listed by keyset, and the due rail checks claimed and deferred by the rail worker.
 */
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Metadata } from '../../domain/metadata.ts';
import type { Transfer, TransferAuthorization } from '../../domain/transferRecord.ts';
import type { TransferStatus } from '../../domain/transfers.ts';
import { prepared } from '../../store/preparedStatements.ts';
import { organizationRecordFinder } from '../../store/repositories/records.ts';
import { column, computed, rowMapper, stored } from '../../store/repositories/rowMappers.ts';
import {
  feeDecisionFromRow,
  type KeysetFilter,
  newestFirstConditions,
  nullableDate,
  nullableText,
  toBigInt,
  toDate,
  toJsonObject,
} from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';

const COLUMNS = [
  'id',
  'organization_id',
  'direction',
  'source_wallet_id',
  'destination',
  'destination_wallet_id',
  'amount_minor',
  'currency',
  'rail',
  'network',
  'status',
  'status_reason',
  'failure_code',
  'ledger_state',
  'metadata',
  'rail_reference',
  'next_rail_check_at',
  'created_at',
  'updated_at',
  'processing_at',
  'settled_at',
  'failed_at',
  'canceled_at',
  'returned_at',
  'created_by',
  'authorization_decision',
  'approval_id',
  'travel_rule_evidence_id',
  'travel_rule_required',
  'fee_minor',
  'fee_schedule_version',
  'fee_rule',
  'partner_receipt',
] as const;

export const transferFromRow = rowMapper<Transfer>({
  id: String,
  organizationId: String,
  direction: stored,
  sourceWalletId: nullableText,
  destination: toJsonObject<Transfer['destination']>,
  destinationWalletId: nullableText,
  amountMinor: toBigInt,
  currency: stored,
  rail: stored,
  network: nullableText,
  status: stored,
  statusReason: nullableText,
  failureCode: nullableText,
  ledgerState: stored,
  metadata: toJsonObject<Metadata>,
  railReference: nullableText,
  nextRailCheckAt: nullableDate,
  createdAt: toDate,
  updatedAt: toDate,
  processingAt: nullableDate,
  settledAt: nullableDate,
  failedAt: nullableDate,
  canceledAt: nullableDate,
  returnedAt: nullableDate,
  createdBy: nullableText,
  authorization: column('authorization_decision', authorizationFromStored),
  approvalId: nullableText,
  travelRule: computed((row) =>
    row.travel_rule_evidence_id === null || row.travel_rule_evidence_id === undefined
      ? null
      : { evidenceId: String(row.travel_rule_evidence_id), required: row.travel_rule_required === true },
  ),
  fee: computed(feeDecisionFromRow),
  partnerReceipt: nullableText,
});

function authorizationFromStored(value: unknown): TransferAuthorization | null {
  if (value === null || value === undefined) return null;
  const stored = toJsonObject<{
    decision: TransferAuthorization['decision'];
    policy_version: number;
    rule: string;
  }>(value);
  return { decision: stored.decision, policyVersion: stored.policy_version, rule: stored.rule };
}

function authorizationToStored(a: TransferAuthorization | null): string | null {
  return a === null
    ? null
    : JSON.stringify({ decision: a.decision, policy_version: a.policyVersion, rule: a.rule });
}

/** The times a transfer's updates and status steps set, in the order both its insert and its save write them. */
function stepTimes(t: Transfer): unknown[] {
  return [t.updatedAt, t.processingAt, t.settledAt, t.failedAt, t.canceledAt, t.returnedAt];
}

function toParams(t: Transfer): unknown[] {
  return [
    t.id,
    t.organizationId,
    t.direction,
    t.sourceWalletId,
    JSON.stringify(t.destination),
    t.destinationWalletId,
    t.amountMinor.toString(),
    t.currency,
    t.rail,
    t.network,
    t.status,
    t.statusReason,
    t.failureCode,
    t.ledgerState,
    JSON.stringify(t.metadata),
    t.railReference,
    t.nextRailCheckAt,
    t.createdAt,
    ...stepTimes(t),
    t.createdBy,
    authorizationToStored(t.authorization),
    t.approvalId,
    t.travelRule?.evidenceId ?? null,
    t.travelRule ? t.travelRule.required : null,
    (t.fee?.feeMinor ?? 0n).toString(),
    t.fee?.scheduleVersion ?? null,
    t.fee?.rule ?? null,
    t.partnerReceipt,
  ];
}

const CASTS: Partial<Record<(typeof COLUMNS)[number], string>> = {
  destination: '::jsonb',
  metadata: '::jsonb',
  authorization_decision: '::jsonb',
  amount_minor: '::bigint',
  fee_minor: '::bigint',
  fee_schedule_version: '::int',
};
const PLACEHOLDERS = COLUMNS.map((c, i) => `$${i + 1}${CASTS[c] ?? ''}`).join(', ');

export async function insertTransfer(db: Queryable, transfer: Transfer): Promise<void> {
  await db.query(
    `INSERT INTO transfers (${COLUMNS.join(', ')}) VALUES (${PLACEHOLDERS})`,
    toParams(transfer),
  );
}

/** The array type each column travels as in a multi-row insert (jsonb goes as text and is cast back). */
const ARRAY_TYPES: Partial<Record<(typeof COLUMNS)[number], string>> = {
  amount_minor: 'bigint[]',
  next_rail_check_at: 'timestamptz[]',
  created_at: 'timestamptz[]',
  updated_at: 'timestamptz[]',
  processing_at: 'timestamptz[]',
  settled_at: 'timestamptz[]',
  failed_at: 'timestamptz[]',
  canceled_at: 'timestamptz[]',
  returned_at: 'timestamptz[]',
  travel_rule_required: 'boolean[]',
  fee_minor: 'bigint[]',
  fee_schedule_version: 'int[]',
};
const UNNEST_SELECT = `SELECT ${COLUMNS.map((c) => `v.${c}${CASTS[c] === '::jsonb' ? '::jsonb' : ''}`).join(', ')}
  FROM unnest(${COLUMNS.map((c, i) => `$${i + 1}::${ARRAY_TYPES[c] ?? 'text[]'}`).join(', ')}) AS v(${COLUMNS.join(', ')})`;

/** Inserts many transfers with one statement (the batch writer's). */
export async function insertTransfers(db: Queryable, transfers: readonly Transfer[]): Promise<void> {
  if (transfers.length === 0) return;
  const rows = transfers.map(toParams);
  await db.query(
    `INSERT INTO transfers (${COLUMNS.join(', ')}) ${UNNEST_SELECT}`,
    COLUMNS.map((_, column) =>
      rows.map((row) => {
        const value = row[column];
        return value instanceof Date ? value.toISOString() : value;
      }),
    ),
  );
}

/** Writes every mutable column of a transfer; callers obtain the new record from the domain transition. */
export async function saveTransfer(db: Queryable, t: Transfer): Promise<void> {
  await db.query(
    `UPDATE transfers SET status = $2, status_reason = $3, failure_code = $4, ledger_state = $5,
        rail_reference = $6, next_rail_check_at = $7, updated_at = $8, processing_at = $9, settled_at = $10,
        failed_at = $11, canceled_at = $12, returned_at = $13, approval_id = $14, partner_receipt = $15
      WHERE id = $1`,
    [
      t.id,
      t.status,
      t.statusReason,
      t.failureCode,
      t.ledgerState,
      t.railReference,
      t.nextRailCheckAt,
      ...stepTimes(t),
      t.approvalId,
      t.partnerReceipt,
    ],
  );
}

export const findTransfer = organizationRecordFinder({
  name: 'transfers',
  columns: COLUMNS.join(', '),
  fromRow: transferFromRow,
});

export interface TransferFilter extends KeysetFilter {
  status?: TransferStatus | undefined;
  walletId?: string | undefined;
}

/**
 * Newest first. Each filter has an index that yields its rows in id order, so a page reads about a page of
 * rows: (organization_id, id), (organization_id, status, id), and for a wallet, which may be either side,
 * the source and the destination indexes each give their newest ids (index-only when no other condition
 * needs the row) and only the page's rows are fetched.
 */
export async function listTransfers(
  db: Queryable,
  organizationId: string,
  filter: TransferFilter,
  rowsMax: number,
): Promise<Transfer[]> {
  const { conditions, params } = newestFirstConditions({
    prefix: ID_PREFIXES.transfer,
    organizationId,
    filter,
    equal: [['status', filter.status]],
  });
  params.push(rowsMax);
  const limit = `$${params.length}`;
  if (filter.walletId === undefined) {
    const rows = await db.query(
      `SELECT ${COLUMNS.join(', ')} FROM transfers WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT ${limit}`,
      params,
    );
    return rows.map(transferFromRow);
  }
  params.push(filter.walletId);
  const wallet = `$${params.length}`;
  const side = (column: string) =>
    `(SELECT id FROM transfers WHERE ${[...conditions, `${column} = ${wallet}`].join(' AND ')} ORDER BY id DESC LIMIT ${limit})`;
  const rows = await db.query(
    `SELECT ${COLUMNS.join(', ')} FROM transfers
      WHERE id IN (${side('source_wallet_id')} UNION ${side('destination_wallet_id')})
      ORDER BY id DESC LIMIT ${limit}`,
    params,
  );
  return rows.map(transferFromRow);
}

/**
 * Claims transfers whose rail check is due, skipping rows another worker holds (so any number of workers
 * can share the queue) and the ids in `excludedIds` (those this worker already took in its pass). The
 * caller's transaction keeps them locked until it commits.
 */
const CLAIM_DUE_RAIL_CHECKS_SQL = prepared(
  `SELECT ${COLUMNS.join(', ')} FROM transfers
    WHERE next_rail_check_at IS NOT NULL AND next_rail_check_at <= $1
      AND NOT (id = ANY($3::text[]))
    ORDER BY next_rail_check_at
    LIMIT $2
      FOR UPDATE SKIP LOCKED`,
);

export async function claimDueRailChecks(
  db: Queryable,
  now: Date,
  rowsMax: number,
  excludedIds: readonly string[] = [],
): Promise<Transfer[]> {
  const rows = await db.query(CLAIM_DUE_RAIL_CHECKS_SQL, [now, rowsMax, excludedIds]);
  return rows.map(transferFromRow);
}

/**
 * Pushes a queued transfer's next rail check to `until`, leaving it alone if it has left the queue. For a
 * transfer the worker could not claim or record: without it, it would be due again at once.
 */
export async function deferRailCheck(db: Queryable, id: string, until: Date): Promise<void> {
  await db.query(
    'UPDATE transfers SET next_rail_check_at = $2 WHERE id = $1 AND next_rail_check_at IS NOT NULL AND next_rail_check_at < $2',
    [id, until],
  );
}

/**
 * Gives a claimed transfer back to the rail queue, due at `now`, unless its lease (`leasedUntil`) has since
 * been replaced: another worker's claim or an answer recorded meanwhile is left as it is.
 */
export async function handBackRailCheck(
  db: Queryable,
  id: string,
  leasedUntil: Date | null,
  now: Date,
): Promise<void> {
  if (leasedUntil === null) return;
  await db.query('UPDATE transfers SET next_rail_check_at = $3 WHERE id = $1 AND next_rail_check_at = $2', [
    id,
    leasedUntil,
    now,
  ]);
}

/** The columns a transfer row is read with (for readers outside this file, such as exports). */
export const TRANSFER_COLUMNS = COLUMNS.join(', ');

/** The transfer a partner's reference names on a rail (served by the rail-reference index). */
export async function findTransferByRailReference(
  db: Queryable,
  organizationId: string,
  rail: string,
  railReference: string,
): Promise<string | undefined> {
  const [row] = await db.query(
    'SELECT id FROM transfers WHERE organization_id = $1 AND rail_reference = $2 AND rail = $3 LIMIT 1',
    [organizationId, railReference, rail],
  );
  return row ? String(row.id) : undefined;
}
