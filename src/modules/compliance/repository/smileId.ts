/**
 * Smile ID as a verification provider: an organization's configuration (found by organization or by its
 * callback token), the jobs verifications were sent as (due ones leased so two workers never take the
 * same), and the callbacks received.
 */
import { organizationRecordFinder, recordFinderBy, rowTable } from '../../../store/repositories/records.ts';
import { columnRows, stored } from '../../../store/repositories/rowMappers.ts';
import { nullableDate, nullableText, toDate, toJsonObject } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export interface SmileIdConfig {
  organizationId: string;
  settings: { base_url: string; partner_id: string };
  sealedCredentials: string;
  callbackToken: string;
  createdAt: Date;
  updatedAt: Date;
}

export type SmileIdJobState = 'submitting' | 'submitted' | 'decided' | 'refused' | 'withdrawn';

export interface SmileIdJobRecord {
  verificationId: string;
  organizationId: string;
  jobId: string;
  userId: string;
  product: 'kyc' | 'kyb';
  state: SmileIdJobState;
  smileJobId: string | null;
  resultCode: string | null;
  nextAttemptAt: Date | null;
  attempts: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface SmileIdCallbackRecord {
  id: string;
  organizationId: string;
  jobId: string | null;
  body: string;
  bodySha256: string;
  outcome:
    | 'applied'
    | 'duplicate'
    | 'bad_signature'
    | 'unknown_job'
    | 'malformed'
    | 'undecided'
    | 'withdrawn';
  receivedAt: Date;
}

const CONFIGS = rowTable<SmileIdConfig>('verification_provider_configs', {
  organizationId: String,
  settings: toJsonObject<SmileIdConfig['settings']>,
  sealedCredentials: String,
  callbackToken: String,
  createdAt: toDate,
  updatedAt: toDate,
});

/** Creates or replaces the organization's configuration; the callback token is kept once made. */
export async function upsertSmileIdConfig(db: Queryable, config: SmileIdConfig): Promise<SmileIdConfig> {
  const [row] = await db.query(
    `INSERT INTO verification_provider_configs (provider, ${CONFIGS.columns})
     VALUES ('smile_id', $1, $2::jsonb, $3, $4, $5, $6)
     ON CONFLICT (organization_id) DO UPDATE
        SET settings = excluded.settings, sealed_credentials = excluded.sealed_credentials,
            updated_at = excluded.updated_at
     RETURNING ${CONFIGS.columns}`,
    [
      config.organizationId,
      JSON.stringify(config.settings),
      config.sealedCredentials,
      config.callbackToken,
      config.createdAt,
      config.updatedAt,
    ],
  );
  return CONFIGS.fromRow(row as Record<string, unknown>);
}

export const findSmileIdConfig = recordFinderBy(CONFIGS, 'organization_id');

export const findSmileIdConfigByToken = recordFinderBy(CONFIGS, 'callback_token');

/** Deletes the organization's configuration, its sealed key with it; the row as it was, or undefined. */
export async function deleteSmileIdConfig(
  db: Queryable,
  organizationId: string,
): Promise<SmileIdConfig | undefined> {
  const [row] = await db.query(
    `DELETE FROM verification_provider_configs WHERE organization_id = $1 RETURNING ${CONFIGS.columns}`,
    [organizationId],
  );
  return row ? CONFIGS.fromRow(row) : undefined;
}

const JOBS = rowTable<SmileIdJobRecord>('verification_jobs', {
  verificationId: String,
  organizationId: String,
  jobId: String,
  userId: String,
  product: stored,
  state: stored,
  smileJobId: nullableText,
  resultCode: nullableText,
  nextAttemptAt: nullableDate,
  attempts: Number,
  createdAt: toDate,
  updatedAt: toDate,
});

export async function insertSmileIdJob(db: Queryable, job: SmileIdJobRecord): Promise<void> {
  await db.query(
    `INSERT INTO verification_jobs (provider, ${JOBS.columns})
     VALUES ('smile_id', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      job.verificationId,
      job.organizationId,
      job.jobId,
      job.userId,
      job.product,
      job.state,
      job.smileJobId,
      job.resultCode,
      job.nextAttemptAt,
      job.attempts,
      job.createdAt,
      job.updatedAt,
    ],
  );
}

export async function saveSmileIdJob(db: Queryable, job: SmileIdJobRecord): Promise<void> {
  await db.query(
    `UPDATE verification_jobs
        SET state = $2, smile_job_id = $3, result_code = $4, next_attempt_at = $5, attempts = $6, updated_at = $7
      WHERE verification_id = $1`,
    [
      job.verificationId,
      job.state,
      job.smileJobId,
      job.resultCode,
      job.nextAttemptAt,
      job.attempts,
      job.updatedAt,
    ],
  );
}

/** Withdraws the organization's jobs still to be sent or answered; their verifications' ids. */
export async function withdrawSmileIdJobs(
  db: Queryable,
  organizationId: string,
  now: Date,
): Promise<string[]> {
  const rows = await db.query(
    `UPDATE verification_jobs SET state = 'withdrawn', next_attempt_at = NULL, updated_at = $2
      WHERE organization_id = $1 AND state IN ('submitting', 'submitted')
      RETURNING verification_id`,
    [organizationId, now],
  );
  return rows.map((row) => String(row.verification_id)).sort();
}

/** The job with this job_id of the organization. */
export const findSmileIdJob = organizationRecordFinder(JOBS, 'job_id');

/** The job with this job_id of the organization, locked for the transaction. */
export async function lockSmileIdJob(
  db: Queryable,
  organizationId: string,
  jobId: string,
): Promise<SmileIdJobRecord | undefined> {
  return findSmileIdJob(db, organizationId, jobId, { forUpdate: true });
}

/**
 * Due jobs, oldest first, leased: their next attempt is pushed to `leaseUntil` (and counted) in the claiming
 * statement, so another worker skips them while this one calls Smile ID outside any transaction.
 */
export async function leaseDueSmileIdJobs(
  db: Queryable,
  now: Date,
  leaseUntil: Date,
  rowsMax: number,
): Promise<SmileIdJobRecord[]> {
  const rows = await db.query(
    `UPDATE verification_jobs SET next_attempt_at = $2, attempts = attempts + 1
      WHERE verification_id IN (
        SELECT verification_id FROM verification_jobs
         WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= $1
         ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING ${JOBS.columns}`,
    [now, leaseUntil, rowsMax],
  );
  return rows.map(JOBS.fromRow);
}

const { columns: CALLBACK_COLUMNS, fromRow: callbackFromRow } = columnRows<SmileIdCallbackRecord>({
  id: String,
  organizationId: String,
  jobId: nullableText,
  body: String,
  bodySha256: String,
  outcome: stored,
  receivedAt: toDate,
});

export async function insertSmileIdCallback(db: Queryable, callback: SmileIdCallbackRecord): Promise<void> {
  await db.query(
    `INSERT INTO verification_callbacks (${CALLBACK_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      callback.id,
      callback.organizationId,
      callback.jobId,
      callback.body,
      callback.bodySha256,
      callback.outcome,
      callback.receivedAt,
    ],
  );
}

/** The callbacks received about a job, oldest first (operators' and tests' view). */
export async function listSmileIdCallbacks(
  db: Queryable,
  organizationId: string,
  jobId: string,
): Promise<SmileIdCallbackRecord[]> {
  const rows = await db.query(
    `SELECT ${CALLBACK_COLUMNS}
       FROM verification_callbacks WHERE organization_id = $1 AND job_id = $2 ORDER BY received_at, id`,
    [organizationId, jobId],
  );
  return rows.map(callbackFromRow);
}

export const findSmileIdJobOfVerification = recordFinderBy(JOBS, 'verification_id');
