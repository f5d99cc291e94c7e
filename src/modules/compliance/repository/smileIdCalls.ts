/**
 * The calls Mkoba made to Smile ID and the callbacks it received, one row each, for operators and
 * auditors: what, which job and verification, Smile ID's status and code, the outcome and duration. A call
 * is inserted `sent` before its request leaves and completed once with its outcome; a callback is inserted
 * whole. Never a request's or answer's body, names, ID numbers, signature or key.
 */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { byFields, newestFirstLister, recordTable } from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import {
  type KeysetFilter,
  nullableDate,
  nullableNumber,
  nullableText,
  toDate,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export const SMILE_ID_CALL_KINDS = ['submit', 'job_status', 'callback'] as const;
export type SmileIdCallKind = (typeof SMILE_ID_CALL_KINDS)[number];
/** `sent`: the request left and its outcome was never recorded (yet, or ever: the process died). */
export const SMILE_ID_CALL_OUTCOMES = ['sent', 'accepted', 'refused', 'timeout', 'error'] as const;
export type SmileIdCallOutcome = (typeof SMILE_ID_CALL_OUTCOMES)[number];

export interface SmileIdCallRecord {
  id: string;
  organizationId: string;
  kind: SmileIdCallKind;
  path: string | null;
  jobId: string | null;
  verificationId: string | null;
  httpStatus: number | null;
  resultCode: string | null;
  outcome: SmileIdCallOutcome;
  detail: string | null;
  durationMs: number | null;
  /** When the request was sent, or the callback received. */
  at: Date;
  /** When a call's answer (or failure) was recorded; null while `sent`, and for a callback. */
  answeredAt: Date | null;
}

const CALLS = recordTable<SmileIdCallRecord>(
  'verification_provider_calls',
  ID_PREFIXES.verificationProviderCall,
  {
    id: String,
    organizationId: String,
    kind: stored,
    path: nullableText,
    jobId: nullableText,
    verificationId: nullableText,
    httpStatus: nullableNumber,
    resultCode: nullableText,
    outcome: stored,
    detail: nullableText,
    durationMs: nullableNumber,
    at: toDate,
    answeredAt: nullableDate,
  },
);

/** A call as its request leaves, before Smile ID has answered. */
export type SentSmileIdCall = Pick<
  SmileIdCallRecord,
  'id' | 'organizationId' | 'kind' | 'path' | 'jobId' | 'verificationId' | 'at'
>;

/** How a call ended: its outcome, with what Smile ID answered and how long it took. */
export type SmileIdCallEnd = Pick<
  SmileIdCallRecord,
  'httpStatus' | 'resultCode' | 'detail' | 'durationMs'
> & {
  outcome: Exclude<SmileIdCallOutcome, 'sent'>;
  answeredAt: Date;
};

/** One statement, outside any transaction: the row exists before the request leaves. */
export async function insertSentSmileIdCall(db: Queryable, call: SentSmileIdCall): Promise<void> {
  await db.query(
    `INSERT INTO verification_provider_calls (provider, id, organization_id, kind, path, job_id, verification_id, outcome, at)
     VALUES ('smile_id', $1, $2, $3, $4, $5, $6, 'sent', $7)`,
    [call.id, call.organizationId, call.kind, call.path, call.jobId, call.verificationId, call.at],
  );
}

/** Completes a `sent` row once (a row already ended is left as it is). */
export async function endSmileIdCall(db: Queryable, id: string, end: SmileIdCallEnd): Promise<void> {
  await db.query(
    `UPDATE verification_provider_calls SET outcome = $2, http_status = $3, result_code = $4, detail = $5,
       duration_ms = $6, answered_at = $7
     WHERE id = $1 AND outcome = 'sent'`,
    [id, end.outcome, end.httpStatus, end.resultCode, end.detail, end.durationMs, end.answeredAt],
  );
}

/** A callback received, whole. */
export async function insertSmileIdCall(db: Queryable, call: SmileIdCallRecord): Promise<void> {
  await db.query(
    `INSERT INTO verification_provider_calls (provider, ${CALLS.columns})
     VALUES ('smile_id', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      call.id,
      call.organizationId,
      call.kind,
      call.path,
      call.jobId,
      call.verificationId,
      call.httpStatus,
      call.resultCode,
      call.outcome,
      call.detail,
      call.durationMs,
      call.at,
      call.answeredAt,
    ],
  );
}

export type SmileIdCallFilter = KeysetFilter & {
  verificationId?: string | undefined;
  kind?: SmileIdCallKind | undefined;
  outcome?: SmileIdCallOutcome | undefined;
};

/** An organization's calls and callbacks, newest first, narrowed to a verification, a kind, an outcome. */
export const listSmileIdCalls = newestFirstLister(
  CALLS,
  byFields<SmileIdCallFilter>('verificationId', 'kind', 'outcome'),
);
