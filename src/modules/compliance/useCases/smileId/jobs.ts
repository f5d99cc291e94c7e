/**
 * Verifications sent to Smile ID as jobs. A submission (or one cleared by screening) is queued in the
 * transaction that records it; the worker sends it after that commits (never holding a transaction over a
 * call to Smile ID), then polls /job_status for a job whose callback has not come. A result, by callback
 * or by polling, is applied once: the job row is locked and marked decided in the transaction that
 * decides the verification, so a repeated, late or out-of-order result changes nothing twice.
 */
import type { Deps } from '../../../../app/deps.ts';
import { SMILE_ID_LEASE_MS_DEFAULT } from '../../../../config/smileId.ts';
import type { Queryable } from '../../../../store/store.ts';
import {
  findSmileIdConfig,
  leaseDueSmileIdJobs,
  lockSmileIdJob,
  type SmileIdConfig,
  type SmileIdJobRecord,
  saveSmileIdJob,
} from '../../repository/smileId.ts';
import { findVerification } from '../../repository/verifications.ts';
import { decideVerificationByProvider } from '../verifications.ts';
import { fetchSmileIdJobStatus, SmileIdUnavailableError, submitSmileIdJob } from './client.ts';
import { openSmileIdApiKey, smileIdCallbackUrl } from './config.ts';
import { outcomeOfResultCode, smileIdLookupOf } from './mapping.ts';

/** Jobs one worker pass takes at most. */
export const SMILE_ID_WORKER_BATCH_ROWS = 50;
/** How long a leased job is left to the worker that took it before another may (MKOBA_SMILE_ID_LEASE_MS). */
export const SMILE_ID_LEASE_MS = SMILE_ID_LEASE_MS_DEFAULT;
/** After a job is accepted, how long its callback has before the worker polls /job_status. */
export const SMILE_ID_POLL_AFTER_MS = 5 * 60_000;
/** Between polls of a job still in progress, and after Smile ID was unavailable. */
export const SMILE_ID_RETRY_AFTER_MS = 60_000;
/** Who is recorded as having decided a verification Smile ID's result decided. */
export const SMILE_ID_DECIDER = 'smile_id';

export type AppliedResult = 'applied' | 'duplicate' | 'unknown_job' | 'undecided' | 'withdrawn';

/**
 * Applies a job's result once, in the caller's transaction: the job is locked; a decided one changes
 * nothing; otherwise its result code is recorded and, where it decides, the verification is decided as
 * `smile_id` (an operator's earlier decision stands).
 */
export async function applySmileIdResult(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  jobId: string,
  result: Record<string, unknown>,
): Promise<AppliedResult> {
  const job = await lockSmileIdJob(tx, organizationId, jobId);
  if (job === undefined) return 'unknown_job';
  if (job.state === 'decided') return 'duplicate';
  // The configuration was removed while the job was in flight: an operator decides (removal.ts).
  if (job.state === 'withdrawn') return 'withdrawn';
  const resultCode = String(result.ResultCode ?? '');
  const outcome = outcomeOfResultCode(resultCode, job.product);
  const smileJobId = typeof result.SmileJobID === 'string' ? result.SmileJobID : job.smileJobId;
  await saveSmileIdJob(tx, {
    ...job,
    state: 'decided',
    smileJobId,
    resultCode,
    nextAttemptAt: null,
    updatedAt: deps.now(),
  });
  if (outcome === undefined) return 'undecided';
  await decideVerificationByProvider(tx, deps, organizationId, job.verificationId, outcome, {
    name: SMILE_ID_DECIDER,
    resultCode,
  });
  return 'applied';
}

/**
 * One pass: sends queued jobs and polls those whose callback is late, each leased for `leaseMs`; returns
 * how many it handled.
 */
export async function runSmileIdJobsOnce(
  deps: Deps,
  now: Date = deps.now(),
  leaseMs: number = SMILE_ID_LEASE_MS,
): Promise<number> {
  const due = await deps.store.transaction((tx) =>
    leaseDueSmileIdJobs(tx, now, new Date(now.getTime() + leaseMs), SMILE_ID_WORKER_BATCH_ROWS),
  );
  for (const job of due) {
    const config = await findSmileIdConfig(deps.store, job.organizationId);
    if (config === undefined) continue;
    try {
      if (job.state === 'submitting') await submitJob(deps, config, job, now);
      else await pollJob(deps, config, job, now);
    } catch (error) {
      if (!(error instanceof SmileIdUnavailableError)) throw error;
      await deps.store.transaction((tx) =>
        reschedule(tx, deps, job, new Date(now.getTime() + SMILE_ID_RETRY_AFTER_MS)),
      );
    }
  }
  return due.length;
}

/** Moves a job's next attempt, unless it was decided meanwhile (a callback came). */
async function reschedule(
  tx: Queryable,
  deps: Deps,
  job: SmileIdJobRecord,
  at: Date,
  change: Partial<SmileIdJobRecord> = {},
) {
  const current = await lockSmileIdJob(tx, job.organizationId, job.jobId);
  if (current === undefined || current.state === 'decided' || current.state === 'withdrawn') return;
  await saveSmileIdJob(tx, { ...current, ...change, nextAttemptAt: at, updatedAt: deps.now() });
}

async function submitJob(deps: Deps, config: SmileIdConfig, job: SmileIdJobRecord, now: Date): Promise<void> {
  const verification = await findVerification(deps.store, job.organizationId, job.verificationId);
  const lookup = verification === undefined ? undefined : smileIdLookupOf(verification.submission);
  const callbackUrl = smileIdCallbackUrl(deps, config);
  if (lookup === undefined || callbackUrl === null) {
    // Nothing Smile ID can look up, or nowhere for it to answer: an operator decides.
    await deps.store.transaction((tx) =>
      reschedule(tx, deps, job, now, { state: 'refused', nextAttemptAt: null }),
    );
    return;
  }
  const apiKey = openSmileIdApiKey(deps, config);
  const pollAt = new Date(now.getTime() + SMILE_ID_POLL_AFTER_MS);
  if (job.attempts > 1) {
    // An earlier attempt may have reached Smile ID, its answer never recorded (the process died, or the
    // answer was lost): the job_id is ours, so ask before sending it again. Smile ID refusing a repeated
    // job_id (2215) is the second guard.
    const status = await fetchSmileIdJobStatus(deps, config, apiKey, job);
    if (status.complete || status.known !== false) {
      await deps.store.transaction(async (tx) => {
        if (status.complete) await applySmileIdResult(tx, deps, job.organizationId, job.jobId, status.result);
        else await reschedule(tx, deps, job, pollAt, { state: 'submitted' });
      });
      return;
    }
  }
  const answer = await submitSmileIdJob(deps, config, apiKey, job, lookup, callbackUrl);
  await deps.store.transaction(async (tx) => {
    if (answer.kind === 'refused') {
      const current = await lockSmileIdJob(tx, job.organizationId, job.jobId);
      if (current?.state !== 'submitting') return;
      await saveSmileIdJob(tx, {
        ...current,
        state: 'refused',
        resultCode: answer.code,
        nextAttemptAt: null,
        updatedAt: deps.now(),
      });
      return;
    }
    // Accepted, or accepted before (2215: this job_id exists): the callback or a poll brings the result.
    const smileJobId = answer.kind === 'accepted' ? answer.smileJobId : null;
    await reschedule(tx, deps, job, pollAt, { state: 'submitted', ...(smileJobId ? { smileJobId } : {}) });
  });
}

async function pollJob(deps: Deps, config: SmileIdConfig, job: SmileIdJobRecord, now: Date): Promise<void> {
  const status = await fetchSmileIdJobStatus(deps, config, openSmileIdApiKey(deps, config), job);
  await deps.store.transaction(async (tx) => {
    if (status.complete) await applySmileIdResult(tx, deps, job.organizationId, job.jobId, status.result);
    else await reschedule(tx, deps, job, new Date(now.getTime() + SMILE_ID_RETRY_AFTER_MS));
  });
}
