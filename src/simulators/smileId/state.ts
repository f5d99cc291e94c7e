/**
 * What a Smile ID simulator is started with and keeps: its partner credentials and timings, its options,
 * the records of what it received and sent, its jobs, and the answer an endpoint gives (Smile ID's error
 * body, `{code, error}`, included).
 */
import type http from 'node:http';
import type { SimulatorListenOptions } from '../shared.ts';

export const SMILE_ID_SIMULATOR_DEFAULT_CREDENTIALS = {
  partnerId: '2001',
  apiKey: 'sim-smile-id-api-key',
} as const;

/** An async job's callback is POSTed this long after the job was accepted, unless told otherwise. */
export const SMILE_ID_SIMULATOR_CALLBACK_DELAY_MS = 0;
/** How late the "late callback" number's callback arrives, unless told otherwise. */
export const SMILE_ID_SIMULATOR_LATE_CALLBACK_DELAY_MS = 30_000;
/** The simulator gives up POSTing a callback after this long; it does not retry. */
export const SMILE_ID_SIMULATOR_CALLBACK_TIMEOUT_MS = 10_000;
/**
 * How far a request's `timestamp` may be from the simulator's clock before its signature is refused (2205).
 * Assumed: Smile ID's troubleshooting page names a stale timestamp as a cause of 2205 without a figure.
 */
export const SMILE_ID_TIMESTAMP_TOLERANCE_MS = 60 * 60 * 1000;
/** Larger request bodies are refused as invalid JSON. */
export const SMILE_ID_SIMULATOR_MAX_BODY_BYTES = 64 * 1024;

/** The job types the v1 lookups take: 5 (Enhanced and Basic KYC), 7 (Business Verification). */
export const SMILE_ID_JOB_TYPE_KYC = 5;
export const SMILE_ID_JOB_TYPE_KYB = 7;

export interface SmileIdSimulatorOptions {
  port?: number;
  host?: string;
  partnerId?: string;
  apiKey?: string;
  /** Serve HTTPS with the simulator's certificate (tls.ts), as smile-identity-core requires. */
  tls?: boolean;
  callbackDelayMs?: number;
  lateCallbackDelayMs?: number;
  /** The simulator's clock (signature freshness, the times it reports); the real one by default. */
  now?: () => Date;
  /** Test-only: runs once each answer has been written out (see SimulatorListenOptions). */
  afterAnswer?: SimulatorListenOptions['afterAnswer'];
  /** Test-only: runs once each answer is decided, before it is written out (see SimulatorListenOptions). */
  beforeAnswer?: SimulatorListenOptions['beforeAnswer'];
}

export interface SmileIdReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  at: Date;
}

export interface SmileIdCallbackDelivery {
  url: string;
  body: string;
  /** The receiver's HTTP status, or `error` when the POST failed. */
  status?: number;
  error?: string;
  at: Date;
}

export interface SmileIdPartnerParams {
  user_id: string;
  job_id: string;
  job_type: number;
  [key: string]: unknown;
}

export interface SmileIdJob {
  partnerParams: SmileIdPartnerParams;
  smileJobId: string;
  product: 'kyc' | 'kyb';
  /** The result as the sync endpoint answers it and the callback carries it (signature and timestamp added when sent). */
  result: Record<string, unknown>;
  complete: boolean;
  success: boolean;
  callbackUrl?: string;
}

export interface ScheduledCallback {
  url: string;
  job: SmileIdJob;
  timer: NodeJS.Timeout;
}

export interface SmileIdState {
  config: {
    partnerId: string;
    apiKey: string;
    callbackDelayMs: number;
    lateCallbackDelayMs: number;
    now: () => Date;
  };
  requests: SmileIdReceivedRequest[];
  deliveries: SmileIdCallbackDelivery[];
  /** Jobs by job_id: Smile ID refuses a second job with the same job_id (2215). */
  jobs: Map<string, SmileIdJob>;
  scheduled: Set<ScheduledCallback>;
  inFlight: Set<Promise<void>>;
  failures: { remaining: number; status: number };
  nextSmileJobId: number;
  closed: boolean;
}

export function newSmileIdState(options: SmileIdSimulatorOptions): SmileIdState {
  return {
    config: {
      partnerId: options.partnerId ?? SMILE_ID_SIMULATOR_DEFAULT_CREDENTIALS.partnerId,
      apiKey: options.apiKey ?? SMILE_ID_SIMULATOR_DEFAULT_CREDENTIALS.apiKey,
      callbackDelayMs: options.callbackDelayMs ?? SMILE_ID_SIMULATOR_CALLBACK_DELAY_MS,
      lateCallbackDelayMs: options.lateCallbackDelayMs ?? SMILE_ID_SIMULATOR_LATE_CALLBACK_DELAY_MS,
      now: options.now ?? (() => new Date()),
    },
    requests: [],
    deliveries: [],
    jobs: new Map(),
    scheduled: new Set(),
    inFlight: new Set(),
    failures: { remaining: 0, status: 500 },
    nextSmileJobId: 1,
    closed: false,
  };
}

/** An endpoint's answer: an HTTP status and a JSON body. */
export class SmileIdAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/** The published error codes the simulator answers with, and their texts. */
export const SMILE_ID_ERRORS = {
  systemError: { code: '2201', error: 'System Error' },
  invalidJson: { code: '2203', error: 'Invalid JSON' },
  wrongDataType: { code: '2204', error: 'A parameter is of the wrong data type' },
  notAuthorized: { code: '2205', error: "You're not authorized to do that" },
  invalidJobType: { code: '2212', error: 'Invalid job type' },
  missingParameter: { code: '2213', error: 'A required parameter is missing' },
  jobExists: { code: '2215', error: 'Job already exists for job_id' },
} as const;

/** Smile ID's error answer (HTTP 400, `{code, error}`), the text naming the field at fault when there is one. */
export function errorAnswer(
  error: (typeof SMILE_ID_ERRORS)[keyof typeof SMILE_ID_ERRORS],
  detail?: string,
  status = 400,
): SmileIdAnswer {
  return new SmileIdAnswer(status, {
    code: error.code,
    error: detail === undefined ? error.error : `${error.error}: ${detail}`,
  });
}
