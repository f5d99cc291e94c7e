/**
 * The checks every Smile ID v1 request shares: a JSON object body, a known `partner_id`, a fresh ISO 8601
 * `timestamp` and the `signature` it gives (2205 otherwise), required fields present (2213) and strings
 * (2204), and `partner_params` with `user_id`, `job_id` and the endpoint's `job_type` (2212 for another).
 */
import { smileIdSignatureMatches } from './signature.ts';
import {
  errorAnswer,
  SMILE_ID_ERRORS,
  SMILE_ID_TIMESTAMP_TOLERANCE_MS,
  type SmileIdAnswer,
  type SmileIdPartnerParams,
  type SmileIdState,
} from './state.ts';

export type Body = Record<string, unknown>;

/** The first of `fields` missing (2213) or not a non-empty string (2204), as Smile ID's error answer. */
export function requireStrings(body: Body, fields: readonly string[]): SmileIdAnswer | undefined {
  for (const field of fields) {
    const value = body[field];
    if (value === undefined || value === null || value === '') {
      return errorAnswer(SMILE_ID_ERRORS.missingParameter, field);
    }
    if (typeof value !== 'string') return errorAnswer(SMILE_ID_ERRORS.wrongDataType, field);
  }
  return undefined;
}

/** The partner and signature check: 2213 without them, 2205 for an unknown partner, a stale time or a wrong signature. */
export function checkSignature(state: SmileIdState, body: Body): SmileIdAnswer | undefined {
  const missing = requireStrings(body, ['partner_id', 'signature', 'timestamp']);
  if (missing) return missing;
  const { partnerId, apiKey, now } = state.config;
  const timestamp = body.timestamp as string;
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) return errorAnswer(SMILE_ID_ERRORS.wrongDataType, 'timestamp');
  const fresh = Math.abs(now().getTime() - at) <= SMILE_ID_TIMESTAMP_TOLERANCE_MS;
  if (
    body.partner_id !== partnerId ||
    !fresh ||
    !smileIdSignatureMatches(partnerId, apiKey, timestamp, body.signature as string)
  ) {
    return errorAnswer(SMILE_ID_ERRORS.notAuthorized, undefined, 401);
  }
  return undefined;
}

/** `partner_params` with its `user_id`, `job_id` and a `job_type` the endpoint takes. */
export function checkPartnerParams(
  body: Body,
  jobType: number,
): { params: SmileIdPartnerParams } | { refusal: SmileIdAnswer } {
  const params = body.partner_params;
  if (params === undefined || params === null) {
    return { refusal: errorAnswer(SMILE_ID_ERRORS.missingParameter, 'partner_params') };
  }
  if (typeof params !== 'object' || Array.isArray(params)) {
    return { refusal: errorAnswer(SMILE_ID_ERRORS.wrongDataType, 'partner_params') };
  }
  const record = params as Body;
  const missing = requireStrings(record, ['user_id', 'job_id']);
  if (missing) return { refusal: missing };
  if (record.job_type === undefined || record.job_type === null || record.job_type === '') {
    return { refusal: errorAnswer(SMILE_ID_ERRORS.missingParameter, 'partner_params.job_type') };
  }
  if (Number(record.job_type) !== jobType) {
    return { refusal: errorAnswer(SMILE_ID_ERRORS.invalidJobType, `expected ${jobType}`) };
  }
  return { params: { ...record, job_type: jobType } as SmileIdPartnerParams };
}

/** A callback URL the simulator can POST to. */
export function isCallbackUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'https:' || protocol === 'http:';
}
