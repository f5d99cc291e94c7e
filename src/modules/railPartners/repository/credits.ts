/**
 * Payers' own payments a partner reported (M-Pesa C2B confirmations): the row each payment claims, once, by
 * the partner's transaction id, its verification with the partner (due checks claimed by the verification
 * worker), and what it became (a transfer crediting a wallet, or an exception).
 */
import { recordFinderBy, rowTable } from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import { nullableDate, nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

/**
 * `verifying` until the partner confirms the payment (`applied`) or does not (`unverified`); `unconfirmed`
 * while a payment we accepted at validation has had no confirmation (asked about later all the same).
 */
export type RailPartnerCreditStatus = 'unconfirmed' | 'verifying' | 'applied' | 'unverified';

/** Whether the payment still waits for the partner's answer. */
export function isAwaitingVerification(status: RailPartnerCreditStatus): boolean {
  return status === 'verifying' || status === 'unconfirmed';
}

export interface RailPartnerCredit {
  organizationId: string;
  partner: string;
  partnerTransactionId: string;
  /** The callback whose report claimed the payment (re-read to know what it reported). */
  callbackId: string;
  configId: string | null;
  status: RailPartnerCreditStatus;
  /** The partner's id for the last verification question asked; a genuine answer echoes it. */
  queryReference: string | null;
  verificationAttempts: number;
  nextCheckAt: Date | null;
  transferId: string | null;
  exceptionId: string | null;
  createdAt: Date;
}

const CREDITS = rowTable<RailPartnerCredit>('rail_partner_credits', {
  organizationId: String,
  partner: String,
  partnerTransactionId: String,
  callbackId: String,
  configId: nullableText,
  status: stored,
  queryReference: nullableText,
  verificationAttempts: Number,
  nextCheckAt: nullableDate,
  transferId: nullableText,
  exceptionId: nullableText,
  createdAt: toDate,
});

export interface RailPartnerCreditKey {
  organizationId: string;
  partner: string;
  partnerTransactionId: string;
}

/** The key of a payment reported to one organization's partner configuration. */
export function railPartnerCreditKey(
  config: { organizationId: string; partner: string },
  partnerTransactionId: string,
): RailPartnerCreditKey {
  return { organizationId: config.organizationId, partner: config.partner, partnerTransactionId };
}

/**
 * Claims the payment for this callback: true when it had not been claimed. A concurrent claim of the same
 * payment waits for this transaction, then finds it taken (or takes it, if this one rolled back).
 */
export async function claimRailPartnerCredit(
  db: Queryable,
  key: RailPartnerCreditKey,
  callbackId: string,
  now: Date,
  verification?: { configId: string; status: 'verifying' | 'unconfirmed'; nextCheckAt: Date },
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO rail_partner_credits (organization_id, partner, partner_transaction_id, callback_id, created_at,
       status, config_id, next_check_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (organization_id, partner, partner_transaction_id) DO NOTHING
     RETURNING callback_id`,
    [
      key.organizationId,
      key.partner,
      key.partnerTransactionId,
      callbackId,
      now,
      verification?.status ?? 'applied',
      verification?.configId ?? null,
      verification?.nextCheckAt ?? null,
    ],
  );
  return rows.length === 1;
}

/** Records what a claimed payment became: `applied` (credited, or an unmatched deposit) or `unverified`. */
export async function recordRailPartnerCredit(
  db: Queryable,
  key: RailPartnerCreditKey,
  outcome: { transferId: string | null; exceptionId: string | null; status?: RailPartnerCreditStatus },
): Promise<void> {
  await db.query(
    `UPDATE rail_partner_credits SET transfer_id = $4, exception_id = $5, status = $6, next_check_at = NULL
     WHERE organization_id = $1 AND partner = $2 AND partner_transaction_id = $3`,
    [
      key.organizationId,
      key.partner,
      key.partnerTransactionId,
      outcome.transferId,
      outcome.exceptionId,
      outcome.status ?? 'applied',
    ],
  );
}

const findCreditByKey = recordFinderBy(CREDITS, 'organization_id', 'partner', 'partner_transaction_id');

export const findRailPartnerCredit = (
  db: Queryable,
  key: RailPartnerCreditKey,
  options: { forUpdate?: boolean } = {},
): Promise<RailPartnerCredit | undefined> =>
  findCreditByKey(db, key.organizationId, key.partner, key.partnerTransactionId, options);

/** One payment still verifying whose check is due, locked (SKIP LOCKED), skipping those already seen. */
export async function claimDueRailPartnerCredit(
  db: Queryable,
  now: Date,
  seen: readonly RailPartnerCreditKey[],
): Promise<RailPartnerCredit | undefined> {
  const skipped = seen.map((k) => `${k.organizationId} ${k.partner} ${k.partnerTransactionId}`);
  const [row] = await db.query(
    `SELECT ${CREDITS.columns} FROM rail_partner_credits
     WHERE status IN ('verifying', 'unconfirmed') AND next_check_at <= $1
       AND NOT (organization_id || ' ' || partner || ' ' || partner_transaction_id = ANY($2::text[]))
     ORDER BY next_check_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
    [now, skipped],
  );
  return row && CREDITS.fromRow(row);
}

/** Records a verification check: the question asked (if any), how many, and when to look again. */
export async function saveRailPartnerCreditCheck(
  db: Queryable,
  credit: Pick<
    RailPartnerCredit,
    | 'organizationId'
    | 'partner'
    | 'partnerTransactionId'
    | 'queryReference'
    | 'verificationAttempts'
    | 'nextCheckAt'
  >,
): Promise<void> {
  await db.query(
    `UPDATE rail_partner_credits SET query_reference = $4, verification_attempts = $5, next_check_at = $6
     WHERE organization_id = $1 AND partner = $2 AND partner_transaction_id = $3
       AND status IN ('verifying', 'unconfirmed')`,
    [
      credit.organizationId,
      credit.partner,
      credit.partnerTransactionId,
      credit.queryReference,
      credit.verificationAttempts,
      credit.nextCheckAt,
    ],
  );
}

/**
 * A confirmation takes over the claim its validation made (or one closed because the payment was not found
 * then, without an exception): the payment is verifying, asked about at once.
 */
export async function confirmRailPartnerCredit(
  db: Queryable,
  key: RailPartnerCreditKey,
  callbackId: string,
  now: Date,
): Promise<void> {
  await db.query(
    `UPDATE rail_partner_credits SET status = 'verifying', callback_id = $4, next_check_at = $5, query_reference = NULL
     WHERE organization_id = $1 AND partner = $2 AND partner_transaction_id = $3
       AND (status = 'unconfirmed' OR (status = 'unverified' AND exception_id IS NULL AND transfer_id IS NULL))`,
    [key.organizationId, key.partner, key.partnerTransactionId, callbackId, now],
  );
}
