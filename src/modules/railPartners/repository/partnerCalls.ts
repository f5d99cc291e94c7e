/**
 * The HTTP requests sent to rail partners, one row each (rail_partner_calls): inserted `sent` before the
 * request leaves, completed once with its answer or failure. No body, header, token or personal data.
 */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { newestFirstLister, recordTable } from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import {
  type KeysetFilter,
  nullableDate,
  nullableNumber,
  nullableText,
  toDate,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { RailPartnerCallOperation } from '../partners/callDescriptions.ts';

export const RAIL_PARTNER_CALL_STATUSES = ['sent', 'answered', 'timeout', 'failed'] as const;
export type RailPartnerCallStatus = (typeof RAIL_PARTNER_CALL_STATUSES)[number];

/** A request as it leaves: what it is, for what, under which of our references. */
export interface SentPartnerCall {
  id: string;
  organizationId: string;
  railPartnerId: string;
  partner: string;
  operation: RailPartnerCallOperation;
  method: string;
  path: string;
  transferId: string | null;
  walletId: string | null;
  sweepId: string | null;
  collectionId: string | null;
  ourReference: string | null;
  createdAt: Date;
}

/** How a request ended: answered with a status, or timed out or failed without one. */
export interface PartnerCallEnd {
  status: Exclude<RailPartnerCallStatus, 'sent'>;
  httpStatus: number | null;
  partnerReference: string | null;
  partnerCode: string | null;
  failure: string | null;
  durationMs: number;
  answeredAt: Date;
}

export type RailPartnerCallRecord = SentPartnerCall & {
  status: RailPartnerCallStatus;
  httpStatus: number | null;
  partnerReference: string | null;
  partnerCode: string | null;
  failure: string | null;
  durationMs: number | null;
  answeredAt: Date | null;
};

const CALLS = recordTable<RailPartnerCallRecord>('rail_partner_calls', ID_PREFIXES.railPartnerCall, {
  id: String,
  organizationId: String,
  railPartnerId: String,
  partner: String,
  operation: stored,
  method: String,
  path: String,
  transferId: nullableText,
  walletId: nullableText,
  sweepId: nullableText,
  collectionId: nullableText,
  ourReference: nullableText,
  partnerReference: nullableText,
  status: stored,
  httpStatus: nullableNumber,
  partnerCode: nullableText,
  failure: nullableText,
  durationMs: nullableNumber,
  createdAt: toDate,
  answeredAt: nullableDate,
});

/** One statement, outside any transaction: the row exists before the request leaves. */
export async function insertSentPartnerCall(db: Queryable, call: SentPartnerCall): Promise<void> {
  await db.query(
    `INSERT INTO rail_partner_calls (id, organization_id, rail_partner_id, partner, operation, method, path,
       transfer_id, wallet_id, sweep_id, collection_id, our_reference, status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'sent', $13)`,
    [
      call.id,
      call.organizationId,
      call.railPartnerId,
      call.partner,
      call.operation,
      call.method,
      call.path,
      call.transferId,
      call.walletId,
      call.sweepId,
      call.collectionId,
      call.ourReference,
      call.createdAt,
    ],
  );
}

/** Completes a `sent` row once (a row already ended is left as it is). */
export async function endPartnerCall(db: Queryable, id: string, end: PartnerCallEnd): Promise<void> {
  await db.query(
    `UPDATE rail_partner_calls SET status = $2, http_status = $3, partner_reference = $4, partner_code = $5,
       failure = $6, duration_ms = $7, answered_at = $8
     WHERE id = $1 AND status = 'sent'`,
    [
      id,
      end.status,
      end.httpStatus,
      end.partnerReference,
      end.partnerCode,
      end.failure,
      end.durationMs,
      end.answeredAt,
    ],
  );
}

export type RailPartnerCallFilter = KeysetFilter & {
  railPartnerId?: string | undefined;
  transferId?: string | undefined;
  operation?: RailPartnerCallOperation | undefined;
  status?: RailPartnerCallStatus | undefined;
};

/** An organization's calls newest first, narrowed to a partner configuration, a transfer, an operation. */
export const listRailPartnerCalls = newestFirstLister(CALLS, (filter: RailPartnerCallFilter) => [
  ['rail_partner_id', filter.railPartnerId],
  ['transfer_id', filter.transferId],
  ['operation', filter.operation],
  ['status', filter.status],
]);
