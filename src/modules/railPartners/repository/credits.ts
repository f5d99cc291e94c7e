/**
 * Payers' own payments a partner reported (M-Pesa C2B confirmations): the row each payment claims, once, by
 * the partner's transaction id, and what it became (a transfer crediting a wallet, or an exception).
 */
import type { Queryable } from '../../../store/store.ts';

export interface RailPartnerCreditKey {
  organizationId: string;
  partner: string;
  partnerTransactionId: string;
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
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO rail_partner_credits (organization_id, partner, partner_transaction_id, callback_id, created_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (organization_id, partner, partner_transaction_id) DO NOTHING
     RETURNING callback_id`,
    [key.organizationId, key.partner, key.partnerTransactionId, callbackId, now],
  );
  return rows.length === 1;
}

/** Records what a claimed payment became. */
export async function recordRailPartnerCredit(
  db: Queryable,
  key: RailPartnerCreditKey,
  outcome: { transferId: string | null; exceptionId: string | null },
): Promise<void> {
  await db.query(
    `UPDATE rail_partner_credits SET transfer_id = $4, exception_id = $5
     WHERE organization_id = $1 AND partner = $2 AND partner_transaction_id = $3`,
    [key.organizationId, key.partner, key.partnerTransactionId, outcome.transferId, outcome.exceptionId],
  );
}
