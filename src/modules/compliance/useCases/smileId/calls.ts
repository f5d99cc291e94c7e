/**
 * Each call sent to Smile ID and each callback received, recorded one by one (verification_provider_calls)
 * for operators and auditors: its kind, job and verification, Smile ID's HTTP status and code, the outcome
 * (accepted, refused, timeout, error) and how long it took. Only codes and statuses are kept: never a body,
 * a name, an ID number, Smile ID's error text (it may echo what was sent), a signature or the key. A call is
 * recorded as rail partners' are, through the outbound calls' one recorder (src/outbound/recordedFetch.ts):
 * `sent` in its own statement before the request leaves, then completed with its outcome, so a process
 * killed in between leaves the row `sent`.
 */
import type { Deps } from '../../../../app/deps.ts';
import { listPage } from '../../../../app/reads.ts';
import type { OutboundCallEnd, OutboundCallRecord } from '../../../../outbound/recordedFetch.ts';
import type { Queryable } from '../../../../store/store.ts';
import type { SmileIdJobRecord } from '../../repository/smileId.ts';
import {
  endSmileIdCall,
  insertSentSmileIdCall,
  insertSmileIdCall,
  listSmileIdCalls,
  type SmileIdCallKind,
  type SmileIdCallOutcome,
  type SmileIdCallRecord,
} from '../../repository/smileIdCalls.ts';

export {
  SMILE_ID_CALL_KINDS,
  SMILE_ID_CALL_OUTCOMES,
  type SmileIdCallKind,
  type SmileIdCallOutcome,
  type SmileIdCallRecord,
} from '../../repository/smileIdCalls.ts';

/** Smile ID's codes are four digits; anything else in their place is not kept. */
const CODE_PATTERN = /^\d{4}$/;

export interface AnswerVerdict {
  outcome: Exclude<SmileIdCallOutcome, 'sent'>;
  resultCode?: string | null;
  detail?: string | null;
}

/** A code as Smile ID gives it, or null when the value is not one (so no other text is ever kept). */
export function smileIdCode(value: unknown): string | null {
  const text = typeof value === 'number' ? String(value) : value;
  return typeof text === 'string' && CODE_PATTERN.test(text) ? text : null;
}

/** An async submission's answer: `{success: true}` accepted, otherwise refused with Smile ID's code. */
export function submitVerdict(status: number, body: Record<string, unknown>): AnswerVerdict {
  if (status === 200 && body.success === true) return { outcome: 'accepted' };
  return { outcome: 'refused', resultCode: smileIdCode(body.code) };
}

/** A /job_status answer: accepted once its signature confirms (the job's result code when complete). */
export function jobStatusVerdict(
  status: number,
  body: Record<string, unknown>,
  signed: (body: Record<string, unknown>) => boolean,
): AnswerVerdict {
  if (status !== 200) return { outcome: 'refused', resultCode: smileIdCode(body.code) };
  if (!signed(body)) return { outcome: 'error', detail: 'bad_signature' };
  const result = body.result as Record<string, unknown> | undefined;
  return {
    outcome: 'accepted',
    resultCode: body.job_complete === true ? smileIdCode(result?.ResultCode) : null,
    detail: body.job_complete === true ? 'complete' : 'in_progress',
  };
}

/**
 * What a call's end is recorded as: no answer (timed out, blocked by the address guard, no connection), an
 * answer that is not Smile ID's (a 5xx, no JSON: unavailable), or Smile ID's answer as `judge` reads it.
 */
export function smileIdCallEnding(
  end: OutboundCallEnd,
  judge: (status: number, body: Record<string, unknown>) => AnswerVerdict,
): AnswerVerdict & { httpStatus: number | null } {
  if (!end.answered) {
    return {
      outcome: end.failure === 'timeout' ? 'timeout' : 'error',
      httpStatus: null,
      detail: end.failure,
    };
  }
  if (end.status >= 500 || end.body === undefined) {
    return { outcome: 'error', httpStatus: end.status, detail: 'unavailable' };
  }
  return { httpStatus: end.status, ...judge(end.status, end.body) };
}

/** A call sent to Smile ID: what it is (its kind and path), about which job, and how its answer is read. */
export interface SmileIdCallSent {
  kind: 'submit' | 'job_status';
  path: string;
  job: Pick<SmileIdJobRecord, 'jobId' | 'verificationId'>;
  judge: (status: number, body: Record<string, unknown>) => AnswerVerdict;
}

/** The call's row for the outbound recorder: inserted `sent`, then completed once with its outcome. */
export function smileIdCallRecord(
  deps: Deps,
  organizationId: string,
  call: SmileIdCallSent,
): OutboundCallRecord {
  const id = deps.newId('verificationProviderCall');
  return {
    id,
    sent: () =>
      insertSentSmileIdCall(deps.store, {
        id,
        organizationId,
        kind: call.kind,
        path: call.path,
        jobId: call.job.jobId,
        verificationId: call.job.verificationId,
        at: deps.now(),
      }),
    ended: (end) => {
      const verdict = smileIdCallEnding(end, call.judge);
      return endSmileIdCall(deps.store, id, {
        outcome: verdict.outcome,
        httpStatus: verdict.httpStatus,
        resultCode: verdict.resultCode ?? null,
        detail: verdict.detail ?? null,
        durationMs: end.durationMs,
        answeredAt: deps.now(),
      });
    },
  };
}

export interface CallToRecord extends AnswerVerdict {
  kind: SmileIdCallKind;
  job: Pick<SmileIdJobRecord, 'jobId' | 'verificationId'> | null;
  jobId?: string | null;
  httpStatus?: number | null;
}

/** Records a callback received, whole, in `db` (the callback's transaction). */
export async function recordSmileIdCallback(
  deps: Deps,
  organizationId: string,
  call: CallToRecord,
  db: Queryable = deps.store,
): Promise<void> {
  const record: SmileIdCallRecord = {
    id: deps.newId('verificationProviderCall'),
    organizationId,
    kind: call.kind,
    path: null,
    jobId: call.job?.jobId ?? call.jobId ?? null,
    verificationId: call.job?.verificationId ?? null,
    httpStatus: call.httpStatus ?? null,
    resultCode: call.resultCode ?? null,
    outcome: call.outcome,
    detail: call.detail ?? null,
    durationMs: null,
    at: deps.now(),
    answeredAt: null,
  };
  await insertSmileIdCall(db, record);
}

/** The organization's calls and callbacks, newest first, a page at a time. */
export const listOrganizationSmileIdCalls = listPage(listSmileIdCalls);
