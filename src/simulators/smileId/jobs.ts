/**
 * Smile ID's v1 lookups as jobs: Enhanced/Basic KYC (`/v1/id_verification`, `/v1/async_id_verification`,
 * job_type 5) and Business Verification (`/v1/business_verification`, `/v1/async_business_verification`,
 * job_type 7), each checked field by field, decided by the ID number (behaviours.ts) and kept so
 * `/v1/job_status` can answer it; and `/v1/job_status` itself.
 */
import { behaviourOf } from './behaviours.ts';
import { scheduleCallbacks, signedResult } from './callbacks.ts';
import {
  idNumberFormat,
  SMILE_ID_KYB_ID_TYPES,
  SMILE_ID_KYC_ID_TYPES,
  SMILE_ID_NIGERIA_BUSINESS_TYPES,
} from './idTypes.ts';
import { kybResult, kycResult, SMILE_ID_RESULT_CODES } from './results.ts';
import { signedNow } from './signature.ts';
import {
  errorAnswer,
  SMILE_ID_ERRORS,
  SMILE_ID_JOB_TYPE_KYB,
  SMILE_ID_JOB_TYPE_KYC,
  SmileIdAnswer,
  type SmileIdJob,
  type SmileIdState,
} from './state.ts';
import {
  type Body,
  checkPartnerParams,
  checkSignature,
  isCallbackUrl,
  requireStrings,
} from './validation.ts';

export const SMILE_ID_PATHS = {
  idVerification: '/v1/id_verification',
  asyncIdVerification: '/v1/async_id_verification',
  businessVerification: '/v1/business_verification',
  asyncBusinessVerification: '/v1/async_business_verification',
  jobStatus: '/v1/job_status',
  services: '/v1/services',
} as const;

interface Lookup {
  product: 'kyc' | 'kyb';
  async: boolean;
}

export const LOOKUPS: Record<string, Lookup> = {
  [SMILE_ID_PATHS.idVerification]: { product: 'kyc', async: false },
  [SMILE_ID_PATHS.asyncIdVerification]: { product: 'kyc', async: true },
  [SMILE_ID_PATHS.businessVerification]: { product: 'kyb', async: false },
  [SMILE_ID_PATHS.asyncBusinessVerification]: { product: 'kyb', async: true },
};

/** A lookup's request: checked, kept as a job, answered with the result now or acknowledged and called back. */
export function submitLookup(state: SmileIdState, lookup: Lookup, body: Body): SmileIdAnswer {
  const refusal = checkSignature(state, body) ?? requireStrings(body, ['source_sdk', 'source_sdk_version']);
  if (refusal) return refusal;
  const checked = checkPartnerParams(
    body,
    lookup.product === 'kyc' ? SMILE_ID_JOB_TYPE_KYC : SMILE_ID_JOB_TYPE_KYB,
  );
  if ('refusal' in checked) return checked.refusal;
  const fieldRefusal = requireStrings(body, ['country', 'id_type', 'id_number']);
  if (fieldRefusal) return fieldRefusal;
  const callbackUrl = body.callback_url;
  if (lookup.async) {
    const missing = requireStrings(body, ['callback_url']);
    if (missing) return missing;
    if (!isCallbackUrl(callbackUrl as string))
      return errorAnswer(SMILE_ID_ERRORS.wrongDataType, 'callback_url');
  }
  const country = body.country as string;
  const idType = body.id_type as string;
  const idNumber = body.id_number as string;
  const table = lookup.product === 'kyc' ? SMILE_ID_KYC_ID_TYPES : SMILE_ID_KYB_ID_TYPES;
  const format = idNumberFormat(table, country, idType);
  if (format === undefined) {
    return errorAnswer(SMILE_ID_ERRORS.wrongDataType, `id_type ${idType} is not supported in ${country}`);
  }
  if (lookup.product === 'kyb' && country === 'NG' && idType === 'BUSINESS_REGISTRATION') {
    const businessType = body.business_type;
    if (businessType === undefined) return errorAnswer(SMILE_ID_ERRORS.missingParameter, 'business_type');
    if (!(SMILE_ID_NIGERIA_BUSINESS_TYPES as readonly unknown[]).includes(businessType)) {
      return errorAnswer(SMILE_ID_ERRORS.wrongDataType, 'business_type');
    }
  }
  const { params } = checked;
  if (state.jobs.has(params.job_id)) return errorAnswer(SMILE_ID_ERRORS.jobExists);
  const behaviour = format.test(idNumber)
    ? behaviourOf(idNumber)
    : { resultCode: '1014', callback: 'once' as const };
  const smileJobId = String(state.nextSmileJobId++).padStart(10, '0');
  const facts = {
    smileJobId,
    partnerParams: params,
    resultCode: behaviour.resultCode,
    country,
    idType,
    idNumber,
    body,
  };
  const job: SmileIdJob = {
    partnerParams: params,
    smileJobId,
    product: lookup.product,
    result: lookup.product === 'kyc' ? kycResult(facts) : kybResult(facts),
    complete: !('neverCompletes' in behaviour && behaviour.neverCompletes),
    success: SMILE_ID_RESULT_CODES[behaviour.resultCode]?.success ?? false,
    ...(lookup.async ? { callbackUrl: callbackUrl as string } : {}),
  };
  state.jobs.set(params.job_id, job);
  if (!lookup.async) return new SmileIdAnswer(200, signedResult(state, job));
  if (job.complete) scheduleCallbacks(state, job, callbackUrl as string, behaviour.callback);
  return new SmileIdAnswer(200, { success: true, smile_job_id: smileJobId });
}

/** `/v1/job_status`: the job's completion, success and result (with its history when asked), signed. */
export function jobStatus(state: SmileIdState, body: Body): SmileIdAnswer {
  const refusal = checkSignature(state, body) ?? requireStrings(body, ['user_id', 'job_id']);
  if (refusal) return refusal;
  const job = state.jobs.get(body.job_id as string);
  const { partnerId, apiKey, now } = state.config;
  if (job === undefined || job.partnerParams.user_id !== body.user_id) {
    return errorAnswer(SMILE_ID_ERRORS.wrongDataType, 'no job for this user_id and job_id', 404);
  }
  const signed = signedNow(partnerId, apiKey, now());
  const history = body.history === true || body.history === 'true';
  if (!job.complete) {
    return new SmileIdAnswer(200, {
      ...signed,
      job_complete: false,
      job_success: false,
      ...(history ? { history: [] } : {}),
    });
  }
  return new SmileIdAnswer(200, {
    ...signed,
    job_complete: true,
    job_success: job.success,
    result: job.result,
    ...(history ? { history: [job.result] } : {}),
    ...(body.image_links === true || body.image_links === 'true' ? { image_links: {} } : {}),
  });
}

/** `/v1/services`: the ID types the simulator looks up, per country, for KYC and KYB. */
export function services(): SmileIdAnswer {
  const names = (table: Record<string, Record<string, RegExp>>) =>
    Object.fromEntries(Object.entries(table).map(([country, types]) => [country, Object.keys(types)]));
  return new SmileIdAnswer(200, {
    id_types: names(SMILE_ID_KYC_ID_TYPES),
    business_verification: names(SMILE_ID_KYB_ID_TYPES),
  });
}
