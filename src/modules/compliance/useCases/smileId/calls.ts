/**
 * Each call sent to Smile ID and each callback received, recorded one by one (verification_provider_calls)
 * for operators and auditors: its kind, job and verification, Smile ID's HTTP status and code, the outcome
 * (accepted, refused, timeout, error) and how long it took. Only codes and statuses are kept: never a body,
 * a name, an ID number, Smile ID's error text (it may echo what was sent), a signature or the key. A call
 * is recorded after its answer, on its own: a process that dies in between loses that row, not the job.
 */
import type { Deps } from '../../../../app/deps.ts';
import { type Page, type PageRequest, toPage } from '../../../../domain/pagination.ts';
import { BlockedAddressError } from '../../../../outbound/guard.ts';
import type { Queryable } from '../../../../store/store.ts';
import type { SmileIdJobRecord } from '../../repository/smileId.ts';
import {
  insertSmileIdCall,
  listSmileIdCalls,
  type SmileIdCallFilter,
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
  outcome: SmileIdCallOutcome;
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

/** A call that got no answer Smile ID gave: timed out, blocked by the address guard, a 5xx, or no connection. */
export function unavailability(error: unknown): AnswerVerdict & { httpStatus: number | null } {
  const cause = (error as { cause?: unknown }).cause;
  const httpStatus = (cause as { httpStatus?: unknown } | undefined)?.httpStatus;
  if (typeof httpStatus === 'number') return { outcome: 'error', httpStatus, detail: 'unavailable' };
  // Only the call's own time-out aborts it (the request rejects with an AbortError caused by it).
  const name = (cause as { name?: unknown } | undefined)?.name;
  if (name === 'TimeoutError' || name === 'AbortError')
    return { outcome: 'timeout', httpStatus: null, detail: 'timeout' };
  if (cause instanceof BlockedAddressError) {
    return { outcome: 'error', httpStatus: null, detail: 'blocked_address' };
  }
  return { outcome: 'error', httpStatus: null, detail: 'no_connection' };
}

export interface CallToRecord extends AnswerVerdict {
  kind: SmileIdCallKind;
  path?: string | null;
  job: Pick<SmileIdJobRecord, 'jobId' | 'verificationId'> | null;
  jobId?: string | null;
  httpStatus?: number | null;
  durationMs?: number | null;
}

/** Records one call or callback, in `db` (the callback's transaction) or on its own. */
export async function recordSmileIdCall(
  deps: Deps,
  organizationId: string,
  call: CallToRecord,
  db: Queryable = deps.store,
): Promise<void> {
  const record: SmileIdCallRecord = {
    id: deps.newId('verificationProviderCall'),
    organizationId,
    kind: call.kind,
    path: call.path ?? null,
    jobId: call.job?.jobId ?? call.jobId ?? null,
    verificationId: call.job?.verificationId ?? null,
    httpStatus: call.httpStatus ?? null,
    resultCode: call.resultCode ?? null,
    outcome: call.outcome,
    detail: call.detail ?? null,
    durationMs: call.durationMs ?? null,
    at: deps.now(),
  };
  await insertSmileIdCall(db, record);
}

/** The organization's calls and callbacks, newest first, a page at a time. */
export async function listOrganizationSmileIdCalls(
  deps: Deps,
  organizationId: string,
  request: PageRequest & Omit<SmileIdCallFilter, keyof PageRequest>,
): Promise<Page<SmileIdCallRecord>> {
  return toPage(
    await listSmileIdCalls(deps.store, organizationId, request, request.limit + 1),
    request.limit,
  );
}
