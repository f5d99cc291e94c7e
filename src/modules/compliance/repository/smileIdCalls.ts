/**
 * The calls Mkoba made to Smile ID and the callbacks it received, one row each, for operators and
 * auditors: what, which job and verification, Smile ID's status and code, the outcome and duration.
 * Never a request's or answer's body, names, ID numbers, signature or key.
 */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { newestFirstLister, type RecordTable } from '../../../store/repositories/records.ts';
import { rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import { type KeysetFilter, nullableNumber, nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export const SMILE_ID_CALL_KINDS = ['submit', 'job_status', 'callback'] as const;
export type SmileIdCallKind = (typeof SMILE_ID_CALL_KINDS)[number];
export const SMILE_ID_CALL_OUTCOMES = ['accepted', 'refused', 'timeout', 'error'] as const;
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
  at: Date;
}

const COLUMNS =
  'id, organization_id, kind, path, job_id, verification_id, http_status, result_code, outcome, detail, duration_ms, at';

const CALLS: RecordTable<SmileIdCallRecord> = {
  name: 'verification_provider_calls',
  columns: COLUMNS,
  prefix: ID_PREFIXES.verificationProviderCall,
  fromRow: rowMapper<SmileIdCallRecord>({
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
  }),
};

export async function insertSmileIdCall(db: Queryable, call: SmileIdCallRecord): Promise<void> {
  await db.query(
    `INSERT INTO verification_provider_calls (provider, ${COLUMNS})
     VALUES ('smile_id', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
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
    ],
  );
}

export type SmileIdCallFilter = KeysetFilter & {
  verificationId?: string | undefined;
  kind?: SmileIdCallKind | undefined;
  outcome?: SmileIdCallOutcome | undefined;
};

/** An organization's calls and callbacks, newest first, narrowed to a verification, a kind, an outcome. */
export const listSmileIdCalls = newestFirstLister(CALLS, (filter: SmileIdCallFilter) => [
  ['verification_id', filter.verificationId],
  ['kind', filter.kind],
  ['outcome', filter.outcome],
]);
