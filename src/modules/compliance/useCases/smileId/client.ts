/**
 * Calls to Smile ID's v1 API, only through the outbound address guard (`guardedFetch` under the deployment's
 * policy): an async lookup (`/async_id_verification`, `/async_business_verification`) and `/job_status`,
 * each signed (src/domain/smileIdSignature.ts) and bounded in time. An answer that is not Smile ID's
 * (a 5xx, a time-out, a /job_status answer whose signature does not confirm) throws, and the worker tries
 * again later. Every call goes through the organization's circuit breaker and rate limit (guard.ts), and
 * each one sent is recorded (calls.ts).
 */
import type { Deps } from '../../../../app/deps.ts';
import { jsonObjectOf } from '../../../../domain/json.ts';
import type { OutboundAddressPolicy } from '../../../../domain/outboundAddresses.ts';
import { outboundPolicyFor } from '../../../../domain/outboundAddresses.ts';
import { smileIdSignatureMatches, smileIdSigned } from '../../../../domain/smileIdSignature.ts';
import { guardedFetch, type OutboundFetch } from '../../../../outbound/guard.ts';
import { recordedFetch } from '../../../../outbound/recordedFetch.ts';
import type { SmileIdConfig, SmileIdJobRecord } from '../../repository/smileId.ts';
import {
  jobStatusVerdict,
  type SmileIdCallSent,
  smileIdCallRecord,
  smileIdCode,
  submitVerdict,
} from './calls.ts';
import { guardedSmileIdCall, SmileIdUnavailableError } from './guard.ts';
import { SMILE_ID_JOB_TYPES, type SmileIdLookup } from './mapping.ts';

export { SmileIdUnavailableError };

/** How long one call to Smile ID may take. */
export const SMILE_ID_REQUEST_TIMEOUT_MS = 15_000;
/** What Mkoba sends as `source_sdk` and `source_sdk_version` (Smile ID asks REST callers for these). */
const SOURCE_SDK = { source_sdk: 'rest_api', source_sdk_version: '1.0.0' } as const;
/** Smile ID's error code for a job_id it has already (the job exists: poll it). */
export const JOB_EXISTS_CODE = '2215';

export type SubmitAnswer =
  | { kind: 'accepted'; smileJobId: string | null }
  | { kind: 'exists' }
  | { kind: 'refused'; code: string; error: string };

export type JobStatusAnswer =
  | { complete: false; known?: boolean }
  | { complete: true; result: Record<string, unknown> };

const fetches = new Map<OutboundAddressPolicy, OutboundFetch>();

/** One guarded fetch per policy per process, so its keep-alive connections are reused. */
function fetchFor(deps: Deps): OutboundFetch {
  const policy = outboundPolicyFor(deps.environment);
  let fetch = fetches.get(policy);
  if (fetch === undefined) {
    fetch = guardedFetch(policy);
    fetches.set(policy, fetch);
  }
  return fetch;
}

/** A POST through the organization's circuit breaker and rate limit (guard.ts); only sent calls are recorded. */
function post(
  deps: Deps,
  config: SmileIdConfig,
  body: Record<string, unknown>,
  call: SmileIdCallSent,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return guardedSmileIdCall(deps, config, () => recordedPost(deps, config, body, call));
}

/** The POST, recorded `sent` before it leaves and completed with its outcome (calls.ts). */
async function recordedPost(
  deps: Deps,
  config: SmileIdConfig,
  body: Record<string, unknown>,
  call: SmileIdCallSent,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const fetch = recordedFetch(fetchFor(deps), () => smileIdCallRecord(deps, config.organizationId, call));
  let response: Response;
  try {
    response = await fetch(`${config.settings.base_url}${call.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(SMILE_ID_REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new SmileIdUnavailableError(`Smile ID did not answer ${call.path}: ${String(error)}`, {
      cause: error,
    });
  }
  const parsed = jsonObjectOf(await response.text());
  if (response.status >= 500 || parsed === undefined) {
    throw new SmileIdUnavailableError(`Smile ID answered ${call.path} with ${response.status}`, {
      cause: { httpStatus: response.status },
    });
  }
  return { status: response.status, body: parsed };
}

/** What every request to Smile ID opens with: the organization's partner id, signed now with its key. */
function signedPartnerFields(deps: Deps, config: SmileIdConfig, apiKey: string): Record<string, unknown> {
  const { partner_id } = config.settings;
  return { partner_id, ...smileIdSigned(partner_id, apiKey, deps.now()) };
}

/** Sends a verification as an async job; its result comes to `callbackUrl` (and to /job_status). */
export async function submitSmileIdJob(
  deps: Deps,
  config: SmileIdConfig,
  apiKey: string,
  job: SmileIdJobRecord,
  lookup: SmileIdLookup,
  callbackUrl: string,
): Promise<SubmitAnswer> {
  const path = lookup.product === 'kyc' ? '/async_id_verification' : '/async_business_verification';
  const answer = await post(
    deps,
    config,
    {
      ...signedPartnerFields(deps, config, apiKey),
      ...SOURCE_SDK,
      ...lookup.idInfo,
      partner_params: {
        user_id: job.userId,
        job_id: job.jobId,
        job_type: SMILE_ID_JOB_TYPES[lookup.product],
      },
      callback_url: callbackUrl,
    },
    { kind: 'submit', path, job, judge: submitVerdict },
  );
  if (answer.status === 200 && answer.body.success === true) {
    const smileJobId = answer.body.smile_job_id;
    return { kind: 'accepted', smileJobId: typeof smileJobId === 'string' ? smileJobId : null };
  }
  const code = String(answer.body.code ?? answer.status);
  if (code === JOB_EXISTS_CODE) return { kind: 'exists' };
  return { kind: 'refused', code, error: String(answer.body.error ?? '') };
}

/** Whether an answer's `signature` confirms over its `timestamp` with the organization's key. */
function signedBy(partnerId: string, apiKey: string) {
  return ({ timestamp, signature }: Record<string, unknown>) =>
    typeof timestamp === 'string' &&
    typeof signature === 'string' &&
    smileIdSignatureMatches(partnerId, apiKey, timestamp, signature);
}

/** The job's status; throws when Smile ID is unavailable or its answer's signature does not confirm. */
export async function fetchSmileIdJobStatus(
  deps: Deps,
  config: SmileIdConfig,
  apiKey: string,
  job: SmileIdJobRecord,
): Promise<JobStatusAnswer> {
  const { partner_id } = config.settings;
  const answer = await post(
    deps,
    config,
    {
      ...signedPartnerFields(deps, config, apiKey),
      user_id: job.userId,
      job_id: job.jobId,
      history: false,
      image_links: false,
    },
    {
      kind: 'job_status',
      path: '/job_status',
      job,
      judge: (status, body) => jobStatusVerdict(status, body, signedBy(partner_id, apiKey)),
    },
  );
  // Smile ID refuses (4xx, with its code) a job it does not know: never sent, or not accepted.
  if (answer.status >= 400 && answer.status < 500 && smileIdCode(answer.body.code) !== null) {
    return { complete: false, known: false };
  }
  if (answer.status !== 200 || !signedBy(partner_id, apiKey)(answer.body)) {
    throw new SmileIdUnavailableError(`Smile ID's job status for ${job.jobId} could not be confirmed`);
  }
  const result = answer.body.result;
  if (answer.body.job_complete !== true || typeof result !== 'object' || result === null)
    return { complete: false };
  return { complete: true, result: result as Record<string, unknown> };
}
