/**
 * Smile ID's callbacks: each is stored as sent, with what it was found to be, in the transaction that
 * applies it. Its `signature` must confirm over its `timestamp` with the organization's API key; its
 * `PartnerParams.job_id` names the job. A repeated, late or out-of-order one changes nothing twice
 * (applySmileIdResult); one that does not confirm, or is not Smile ID's shape, changes nothing. Each is
 * also recorded among the organization's Smile ID calls (calls.ts), without its body.
 */
import { createHash } from 'node:crypto';
import type { Deps } from '../../../../app/deps.ts';
import { AppError } from '../../../../domain/errors.ts';
import { jsonObjectOf } from '../../../../domain/json.ts';
import { smileIdSignatureMatches } from '../../../../domain/smileIdSignature.ts';
import type { Queryable } from '../../../../store/store.ts';
import {
  findSmileIdConfigByToken,
  findSmileIdJob,
  insertSmileIdCallback,
  type SmileIdCallbackRecord,
} from '../../repository/smileId.ts';
import { recordSmileIdCallback, smileIdCode } from './calls.ts';
import { openSmileIdApiKey } from './config.ts';
import { applySmileIdResult } from './jobs.ts';

/** The largest callback body taken (Smile ID's page asks receivers to take up to 1.5 MB). */
export const SMILE_ID_CALLBACK_BODY_BYTES_MAX = 1_572_864;

export interface SmileIdCallbackReceipt {
  id: string;
  status: SmileIdCallbackRecord['outcome'];
}

function jobIdOf(body: Record<string, unknown> | undefined): string | null {
  const params = body?.PartnerParams;
  if (typeof params !== 'object' || params === null) return null;
  const jobId = (params as Record<string, unknown>).job_id;
  return typeof jobId === 'string' ? jobId : null;
}

/** What a callback was (accepted when it named a job and its signature confirmed), beside its stored body. */
async function recordCallbackReceived(
  tx: Queryable,
  deps: Deps,
  callback: SmileIdCallbackRecord,
  body: Record<string, unknown> | undefined,
): Promise<void> {
  const refused = ['malformed', 'bad_signature', 'unknown_job'].includes(callback.outcome);
  const job =
    callback.jobId === null ? undefined : await findSmileIdJob(tx, callback.organizationId, callback.jobId);
  await recordSmileIdCallback(
    deps,
    callback.organizationId,
    {
      kind: 'callback',
      job: job ?? null,
      jobId: callback.jobId,
      // What Mkoba answered Smile ID.
      httpStatus: callback.outcome === 'malformed' || callback.outcome === 'bad_signature' ? 400 : 200,
      resultCode: smileIdCode(body?.ResultCode),
      outcome: refused ? 'refused' : 'accepted',
      detail: callback.outcome,
    },
    tx,
  );
}

export async function receiveSmileIdCallback(
  deps: Deps,
  token: string,
  rawBody: string,
): Promise<SmileIdCallbackReceipt> {
  const config = await findSmileIdConfigByToken(deps.store, token);
  if (config === undefined) {
    throw new AppError({
      status: 404,
      code: 'callback_unknown',
      title: 'Unknown callback address',
      detail: 'No verification provider configuration has this callback address.',
    });
  }
  const body = jsonObjectOf(rawBody);
  const jobId = jobIdOf(body);
  const { timestamp, signature } = body ?? {};
  const confirmed =
    typeof timestamp === 'string' &&
    typeof signature === 'string' &&
    smileIdSignatureMatches(
      config.settings.partner_id,
      openSmileIdApiKey(deps, config),
      timestamp,
      signature,
    );
  const record = await deps.store.transaction(async (tx) => {
    const outcome: SmileIdCallbackRecord['outcome'] =
      body === undefined || jobId === null
        ? 'malformed'
        : !confirmed
          ? 'bad_signature'
          : await applySmileIdResult(tx, deps, config.organizationId, jobId, body);
    const callback: SmileIdCallbackRecord = {
      id: `vcb_${Buffer.from(deps.randomBytes(16)).toString('hex')}`,
      organizationId: config.organizationId,
      jobId,
      body: rawBody,
      bodySha256: createHash('sha256').update(rawBody).digest('hex'),
      outcome,
      receivedAt: deps.now(),
    };
    await insertSmileIdCallback(tx, callback);
    await recordCallbackReceived(tx, deps, callback, body);
    return callback;
  });
  if (record.outcome === 'malformed' || record.outcome === 'bad_signature') {
    throw new AppError({
      status: 400,
      code: 'callback_malformed',
      title: 'Callback not accepted',
      detail: `The callback was stored as ${record.id} but ${record.outcome === 'malformed' ? 'is not in Smile ID’s shape' : 'its signature does not confirm'}, so it changed nothing.`,
    });
  }
  return { id: record.id, status: record.outcome };
}
