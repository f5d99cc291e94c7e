/**
 * A Smile ID identity-verification simulator: a real HTTP(S) server that speaks Smile ID's v1 REST API —
 * Enhanced/Basic KYC (job_type 5) and Business Verification (job_type 7), each synchronous or asynchronous
 * with a signed callback, /job_status and /services — with Smile ID's request signature, field checks,
 * error codes (`{code, error}`) and result codes. See docs/rails/smile-id.md for what follows which
 * published page and what is assumed.
 *
 * Outcomes are chosen by the ID number's last four characters (SMILE_ID_SIMULATOR_ID_NUMBER_SUFFIXES):
 * exact match, not found, partial or no match, the ID authority unavailable, a late, doubled or missing
 * callback. The unmodified `smile-identity-core` client works against it once it trusts the simulator's
 * certificate (start it with `tls: true`; smile-identity-core only speaks HTTPS).
 *
 * Files: signature.ts (the HMAC scheme), validation.ts (the shared checks), idTypes.ts (ID types per country
 * and their formats), behaviours.ts (the magic numbers), results.ts (result bodies), jobs.ts (the
 * endpoints), callbacks.ts, state.ts, tls.ts; server.ts wires them into the server.
 */
export { SMILE_ID_SIMULATOR_ID_NUMBER_SUFFIXES, type SmileIdBehaviour } from './behaviours.ts';
export { SMILE_ID_KYB_ID_TYPES, SMILE_ID_KYC_ID_TYPES, SMILE_ID_NIGERIA_BUSINESS_TYPES } from './idTypes.ts';
export { SMILE_ID_PATHS } from './jobs.ts';
export { SMILE_ID_RESULT_CODES } from './results.ts';
export { type SmileIdSimulator, startSmileIdSimulator } from './server.ts';
export { smileIdSignature, smileIdSignatureMatches } from './signature.ts';
export {
  SMILE_ID_ERRORS,
  SMILE_ID_JOB_TYPE_KYB,
  SMILE_ID_JOB_TYPE_KYC,
  SMILE_ID_SIMULATOR_CALLBACK_DELAY_MS,
  SMILE_ID_SIMULATOR_CALLBACK_TIMEOUT_MS,
  SMILE_ID_SIMULATOR_DEFAULT_CREDENTIALS,
  SMILE_ID_SIMULATOR_LATE_CALLBACK_DELAY_MS,
  SMILE_ID_SIMULATOR_MAX_BODY_BYTES,
  SMILE_ID_TIMESTAMP_TOLERANCE_MS,
  type SmileIdCallbackDelivery,
  type SmileIdJob,
  type SmileIdPartnerParams,
  type SmileIdReceivedRequest,
  type SmileIdSimulatorOptions,
} from './state.ts';
export { SMILE_ID_SIMULATOR_CERTIFICATE_PEM } from './tls.ts';
